// The shared set-up of the tests of API keys and roles (key-roles-*.test.ts): an app on its own
// database, a second instance on the same database and Redis prefix when both PostgreSQL and Redis
// are configured, an owner, members made over HTTP or directly, and the calls.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { addMember, createOrg, eventsOf, setPlan, signedInUser, type MadeKey, type SignedInUser } from '../../../test/factories.js';
import { createTestApp, json, onPostgres, onRedis, queryRows, type TestApp } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';

export const twoInstances = onRedis && onPostgres;

export let t: TestApp;
/** A second instance on the same database and Redis prefix when both are configured, else `t`. */
export let b: TestApp;
export let owner: SignedInUser;

export const base = (org: string) => `/api/v1/organizations/${org}`;
export const REVOKE_ACTION = 'DELETE /api/v1/organizations/:orgId/api-keys/:keyId';

export type Person = SignedInUser & { memberId: string };

export async function newOrg() {
  const org = (await createOrg(t, owner)).id;
  await setPlan(t, org, 'enterprise');
  return org;
}

export async function join(org: string, role: 'admin' | 'member' | 'viewer', label: string = role): Promise<Person> {
  const user = await signedInUser(t, `kr-${label}`);
  const m = await addMember(t, org, owner, user, role);
  return { ...user, memberId: m.id };
}

/** A member made directly in the database (cheaper; who they are is not under test). */
export async function rawMember(org: string, role: 'admin' | 'member' | 'viewer') {
  const now = t.clock.now().toISOString();
  const userId = newId('usr', t.clock.now().getTime());
  const memberId = newId('mbr', t.clock.now().getTime());
  await t.deps.db.execute(sql`insert into users (id, email, email_verified_at, full_name, preferences, created_at, updated_at)
    values (${userId}, ${`kr-raw-${userId}@example.com`}, ${now}::timestamptz, 'Raw', ${JSON.stringify({ theme: 'system', language: 'en', timezone: 'UTC', notifications: { email: true, push: false } })}::jsonb, ${now}::timestamptz, ${now}::timestamptz)`);
  await t.deps.db.execute(sql`insert into memberships (organization_id, id, user_id, role, joined_at, updated_at)
    values (${org}, ${memberId}, ${userId}, ${role}, ${now}::timestamptz, ${now}::timestamptz)`);
  return memberId;
}

export const patchRole = (app: TestApp, headers: Record<string, string>, org: string, memberId: string, role: string) =>
  app.request({ method: 'PATCH', url: `${base(org)}/members/${memberId}`, headers, payload: { role } });
export const removeMember = (app: TestApp, headers: Record<string, string>, org: string, memberId: string) =>
  app.request({ method: 'DELETE', url: `${base(org)}/members/${memberId}`, headers });
export const inviteWith = (app: TestApp, headers: Record<string, string>, org: string, email: string, role: string) =>
  app.request({ method: 'POST', url: `${base(org)}/invitations`, headers, payload: { email, role } });
export const listMembers = (app: TestApp, key: MadeKey, org: string) => app.request({ method: 'GET', url: `${base(org)}/members`, headers: key.headers });

export function expectRefused(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(403);
  expect(json(res)).toEqual({ success: false, error: { code: 'AUTHORIZATION_ERROR', message: expect.stringMatching(/API key/), details: expect.any(String) } });
}

export function expectKeyDead(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(401);
  expect(json(res).error.code).toBe('AUTHENTICATION_ERROR');
}

export const invitationsTo = async (org: string, email: string) =>
  queryRows<{ role: string; status: string; token_hash: string; expires_at: string }>(
    t,
    sql`select role, status, token_hash, expires_at from invitations where organization_id = ${org} and email = ${email.toLowerCase()}`,
  );

export const revokedEvents = async (org: string) => (await eventsOf(t, org)).filter((e) => e.type === 'api_key.revoked');

/** The app of the file and its hooks: call once at the top of each test file. */
export function useKeyRolesApp() {
  beforeAll(async () => {
    t = await createTestApp();
    b = twoInstances ? await createTestApp({ database: t.database, clock: t.clock, redisPrefix: t.deps.redisPrefix }) : t;
    owner = await signedInUser(t, 'kr-owner');
  }, 120_000);
  afterAll(async () => {
    if (b && b !== t) await b.close();
    await t?.close();
  });
}
