// The shared set-up of the API key tests (keys-*.test.ts): an app on its own database, two signed-in
// accounts, organizations, and the calls that create keys on either path.
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';

export let t: TestApp;
export let owner: Awaited<ReturnType<typeof signedInUser>>;
export let other: Awaited<ReturnType<typeof signedInUser>>;

export const KEY = /^svc_live_[0-9a-f]{32}$/;
export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
export let slugs = 0;

export async function newOrg(plan: 'free' | 'enterprise' = 'free') {
  const res = await t.request({ method: 'POST', url: '/api/v1/organizations', headers: owner.auth, payload: { name: 'Keys', slug: `keys-${Date.now().toString(36)}-${++slugs}` } });
  expect(res.statusCode, res.body).toBe(201);
  const id = json(res).id as string;
  if (plan !== 'free') await t.deps.db.execute(sql`update organizations set plan = ${plan} where id = ${id}`);
  return id;
}

export const createOn = (orgId: string, payload: Record<string, unknown>, headers: Record<string, string> = owner.auth) =>
  t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/api-keys`, headers, payload });
export const createFlat = (payload: Record<string, unknown>, headers: Record<string, string> = owner.auth) => t.request({ method: 'POST', url: '/api/v1/api-keys', headers, payload });

export async function createKey(orgId: string, payload: Record<string, unknown> = {}) {
  const res = await createOn(orgId, { name: 'k', ...payload });
  expect(res.statusCode, res.body).toBe(201);
  return json(res) as { apiKey: Record<string, any>; plainKey: string }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** `user` is a member of `orgId` with `role` (set directly: the invitation flow is tested elsewhere). */
export async function setRole(orgId: string, userId: string, role: 'admin' | 'member' | 'viewer' | null) {
  await t.deps.db.execute(sql`delete from memberships where organization_id = ${orgId} and user_id = ${userId}`);
  if (role) {
    const now = t.clock.now().toISOString();
    await t.deps.db.execute(sql`insert into memberships (organization_id, id, user_id, role, joined_at, updated_at)
      values (${orgId}, ${newId('mbr', t.clock.now().getTime())}, ${userId}, ${role}, ${now}::timestamptz, ${now}::timestamptz)`);
  }
}

export function expectKeyShape(apiKey: Record<string, unknown>, plainKey: string, fields: Record<string, unknown>) {
  expect(Object.keys(apiKey).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'isActive', 'keyPrefix', 'lastUsedAt', 'name', 'rateLimit', 'scopes'].sort());
  expect(apiKey.id).toMatch(/^key_[0-9a-z]{26}$/);
  expect(apiKey).toMatchObject({ isActive: true, lastUsedAt: null, createdAt: t.clock.now().toISOString(), ...fields });
  expect(plainKey).toMatch(KEY);
  expect(apiKey.keyPrefix).toBe(plainKey.slice(0, 'svc_live_'.length + 8));
}

export async function storedRow(keyId: string) {
  const [row] = await queryRows<Record<string, unknown>>(t, sql`select * from api_keys where id = ${keyId}`);
  return row!;
}

/** The app of the file and its hooks: call once at the top of each test file. */
export function useKeysApp() {
  beforeAll(async () => {
    t = await createTestApp();
    owner = await signedInUser(t, 'keys-owner');
    other = await signedInUser(t, 'keys-other');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });
}
