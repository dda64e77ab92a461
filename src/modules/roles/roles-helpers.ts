// The shared set-up of the custom-role tests: an app with product permissions (APP_PERMISSIONS), an
// organization on the Pro plan with one member of each built-in role, and the calls.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { addMember, auditOf, createOrg, eventsOf, rowsOf, setPlan, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { json, type TestApp } from '../../../test/harness.js';

export const APP_PERMISSIONS = 'invoices:approve,reports:read';

export type Caller = { auth: Record<string, string> } | { headers: Record<string, string> };

export function api(t: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, caller: Caller, payload?: unknown) {
  const headers = 'auth' in caller ? caller.auth : caller.headers;
  return t.request({ method, url: `/api/v1${url}`, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
}

export function expectError(res: LightMyRequestResponse, status: number, code: string, details?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  expect(json(res)).toMatchObject({ success: false, error: { code } });
  if (details) expect(`${json(res).error.message} ${json(res).error.details}`).toMatch(details);
  return json(res).error as { message: string; details: string };
}

export interface Team {
  org: { id: string };
  owner: SignedInUser;
  admin: SignedInUser;
  member: SignedInUser;
  viewer: SignedInUser;
  /** Membership ids by person. */
  m: Record<'admin' | 'member' | 'viewer', string>;
}

/** An organization (Pro plan) with an owner, an admin, a member and a viewer. */
export async function team(t: TestApp, label = 'team'): Promise<Team> {
  const owner = await signedInUser(t, `${label}-owner`);
  const org = await createOrg(t, owner);
  await setPlan(t, org.id, 'pro');
  const people = { admin: await signedInUser(t, `${label}-admin`), member: await signedInUser(t, `${label}-member`), viewer: await signedInUser(t, `${label}-viewer`) };
  const m = {
    admin: (await addMember(t, org.id, owner, people.admin, 'admin')).id,
    member: (await addMember(t, org.id, owner, people.member, 'member')).id,
    viewer: (await addMember(t, org.id, owner, people.viewer, 'viewer')).id,
  };
  return { org, owner, ...people, m };
}

/** A custom role made over HTTP by `by` (201 checked). */
export async function makeRole(t: TestApp, orgId: string, by: Caller, key: string, permissions: string[], name = key) {
  const res = await api(t, 'POST', `/organizations/${orgId}/roles`, by, { key, name, permissions });
  expect(res.statusCode, res.body).toBe(201);
  return json(res);
}

/** `user` joins the organization, then gets `role` from the owner (a role change over HTTP). */
export async function memberWith(t: TestApp, team: Team, role: string, label = role) {
  const user = await signedInUser(t, label);
  const membership = await addMember(t, team.org.id, team.owner, user, 'viewer');
  const res = await api(t, 'PATCH', `/organizations/${team.org.id}/members/${membership.id}`, team.owner, { role });
  expect(res.statusCode, res.body).toBe(200);
  return { ...user, membershipId: membership.id };
}

/** Everything a refused role request could have touched. */
export async function roleState(t: TestApp, orgId: string) {
  return {
    roles: rowsOf(await t.deps.db.execute(sql`select key, name, description, permissions from organization_roles where organization_id = ${orgId} order by key`)),
    members: rowsOf(await t.deps.db.execute(sql`select id, role from memberships where organization_id = ${orgId} order by id`)),
    invitations: rowsOf(await t.deps.db.execute(sql`select id, role, status from invitations where organization_id = ${orgId} order by id`)),
    keys: rowsOf(await t.deps.db.execute(sql`select id, is_active from api_keys where organization_id = ${orgId} order by id`)),
    events: await eventsOf(t, orgId),
    audit: await auditOf(t, orgId),
  };
}
