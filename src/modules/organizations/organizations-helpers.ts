// The shared set-up of the organization tests (organizations-*.test.ts): an app on its own database,
// an owner, an admin, a member, a viewer and an outsider, and the calls.
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import { addMember, createOrg, rowsOf, setPlan, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';

export let t: TestApp;
export let owner: SignedInUser;
export let admin: SignedInUser;
export let member: SignedInUser;
export let viewer: SignedInUser;
export let outsider: SignedInUser;

export const UA = { 'user-agent': 'org-tests/1.0' };
export type Caller = { auth: Record<string, string> } | null;
export function api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, caller: Caller, payload?: unknown) {
  return t.request({ method, url: `/api/v1${url}`, headers: { ...UA, ...(caller?.auth ?? {}) }, ...(payload !== undefined ? { payload: payload as object } : {}) });
}

export function expectError(res: LightMyRequestResponse, status: number, code: string, details?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const body = json(res);
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  if (details) expect(body.error.details).toMatch(details);
}

/** An organization with an owner, an admin, a member and a viewer (Pro plan: more than 3 seats). */
export async function orgWithRoles(body: Record<string, unknown> = {}) {
  const org = await createOrg(t, owner, body);
  await setPlan(t, org.id, 'pro');
  const memberships = {
    admin: await addMember(t, org.id, owner, admin, 'admin'),
    member: await addMember(t, org.id, owner, member, 'member'),
    viewer: await addMember(t, org.id, owner, viewer, 'viewer'),
  };
  return { org, memberships };
}

export const counts = async (orgId: string) => {
  const [row] = rowsOf(
    await t.deps.db.execute(sql`select
      (select count(*)::int from organizations where id = ${orgId}) as orgs,
      (select count(*)::int from memberships where organization_id = ${orgId}) as members,
      (select count(*)::int from invitations where organization_id = ${orgId}) as invitations,
      (select count(*)::int from projects where organization_id = ${orgId}) as projects,
      (select count(*)::int from events where organization_id = ${orgId}) as events,
      (select count(*)::int from audit_logs where organization_id = ${orgId}) as audit`),
  );
  return row!;
};

/** The app of the file and its hooks: call once at the top of each test file. */
export function useOrganizationsApp() {
  beforeAll(async () => {
    t = await createTestApp();
    [owner, admin, member, viewer, outsider] = [
      await signedInUser(t, 'owner'),
      await signedInUser(t, 'admin'),
      await signedInUser(t, 'member'),
      await signedInUser(t, 'viewer'),
      await signedInUser(t, 'outsider'),
    ];
  });
  afterAll(async () => {
    await t?.close();
  });
}
