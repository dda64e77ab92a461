// The security table for API keys (docs/api.md#api-key-scopes): every route a key can reach, against a
// key without scopes (403), a key with the wrong scope (403), a key of another organization (403),
// a revoked key (401), an expired key (401), and the right scope (2xx). Then the routes a key never
// reaches, whatever its scopes.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';
import { SCOPES, type Scope } from '../../platform/permissions.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

let t: TestApp;
let owner: Awaited<ReturnType<typeof signedInUser>>;
let orgId: string;
let otherOrgId: string;
const keys = {} as Record<Scope | 'none' | 'all' | 'revoked' | 'expired' | 'foreign', { id: string; plain: string }>;

async function createOrg(name: string) {
  const res = await t.request({ method: 'POST', url: '/api/v1/organizations', headers: owner.auth, payload: { name, slug: `${name}-${Date.now().toString(36)}` } });
  expect(res.statusCode, res.body).toBe(201);
  const id = json(res).id as string;
  await t.deps.db.execute(sql`update organizations set plan = 'enterprise' where id = ${id}`);
  return id;
}

async function createKey(org: string, scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${org}/api-keys`, headers: owner.auth, payload: { name: 'scoped', scopes, ...extra } });
  expect(res.statusCode, res.body).toBe(201);
  return { id: json(res).apiKey.id as string, plain: json(res).plainKey as string };
}

beforeAll(async () => {
  t = await createTestApp();
  owner = await signedInUser(t, 'scopes');
  orgId = await createOrg('scopes');
  otherOrgId = await createOrg('scopes-other');
  keys.none = await createKey(orgId, []);
  for (const s of SCOPES) keys[s] = await createKey(orgId, [s]);
  keys.all = await createKey(orgId, [...SCOPES]);
  keys.revoked = await createKey(orgId, [...SCOPES]);
  keys.expired = await createKey(orgId, [...SCOPES], { expiresAt: new Date(t.clock.now().getTime() + 3_600_000).toISOString() });
  keys.foreign = await createKey(otherOrgId, [...SCOPES]);
  // Used once, so the revoked key is cached as active when it is revoked.
  expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers: { 'x-api-key': keys.revoked.plain } })).statusCode).toBe(200);
  const revoked = await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${keys.revoked.id}`, headers: owner.auth });
  expect(revoked.statusCode, revoked.body).toBe(200);
}, 180_000);
afterAll(async () => {
  await t?.close();
});

let people = 0;
/** A member of the organization (rows made directly: people are not what is under test here). */
async function addMember(role: 'admin' | 'member' | 'viewer' = 'member') {
  const now = t.clock.now().toISOString();
  const userId = newId('usr', t.clock.now().getTime());
  const memberId = newId('mbr', t.clock.now().getTime());
  await t.deps.db.execute(sql`insert into users (id, email, email_verified_at, full_name, preferences, created_at, updated_at)
    values (${userId}, ${`scoped-member-${++people}-${Date.now()}@example.com`}, ${now}::timestamptz, 'Member', ${JSON.stringify({ theme: 'system', language: 'en', timezone: 'UTC', notifications: { email: true, push: false } })}::jsonb, ${now}::timestamptz, ${now}::timestamptz)`);
  await t.deps.db.execute(sql`insert into memberships (organization_id, id, user_id, role, joined_at, updated_at)
    values (${orgId}, ${memberId}, ${userId}, ${role}, ${now}::timestamptz, ${now}::timestamptz)`);
  return memberId;
}

async function addProject() {
  const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/projects`, headers: owner.auth, payload: { name: 'target' } });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).id as string;
}

async function addInvitation() {
  const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/invitations`, headers: owner.auth, payload: { email: `invitee-${++people}-${Date.now()}@example.com`, role: 'member' } });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).invitation.id as string;
}

interface KeyRoute {
  method: Method;
  /** The route pattern: `:orgId` and the target's parameter are filled in. */
  pattern: string;
  target?: () => Promise<string>;
  payload?: () => Record<string, unknown>;
  right: Scope;
  wrong: Scope;
  ok: number;
  /** After a refused call: the target is untouched. */
  untouched?: (target: string) => Promise<void>;
  /** After the allowed call: what it did. */
  effect?: (res: LightMyRequestResponse, target: string) => Promise<void>;
}

const BASE = '/api/v1/organizations/:orgId';
const base = (org: string) => `/api/v1/organizations/${org}`;
const urlOf = (route: KeyRoute, org: string, target: string) => route.pattern.replace(':orgId', org).replace(/:(projectId|memberId|invitationId)/, target);
const projectName = async (id: string) => (await queryRows<{ name: string }>(t, sql`select name from projects where id = ${id}`))[0]?.name;
const memberRole = async (id: string) => (await queryRows<{ role: string }>(t, sql`select role from memberships where id = ${id}`))[0]?.role;
const invitationStatus = async (id: string) => (await queryRows<{ status: string }>(t, sql`select status from invitations where id = ${id}`))[0]?.status;

const routes: KeyRoute[] = [
  { method: 'GET', pattern: `${BASE}/projects`, right: 'read:projects', wrong: 'read:members', ok: 200 },
  {
    method: 'POST',
    pattern: `${BASE}/projects`,
    payload: () => ({ name: 'made by a key', description: 'x' }),
    right: 'write:projects',
    wrong: 'read:projects',
    ok: 201,
    effect: async (res) => expect(await projectName(json(res).id)).toBe('made by a key'),
  },
  { method: 'GET', pattern: `${BASE}/projects/:projectId`, target: addProject, right: 'read:projects', wrong: 'write:members', ok: 200 },
  {
    method: 'PATCH',
    pattern: `${BASE}/projects/:projectId`,
    target: addProject,
    payload: () => ({ name: 'renamed' }),
    right: 'write:projects',
    wrong: 'read:projects',
    ok: 200,
    untouched: async (p) => expect(await projectName(p)).toBe('target'),
    effect: async (_res, p) => expect(await projectName(p)).toBe('renamed'),
  },
  {
    method: 'DELETE',
    pattern: `${BASE}/projects/:projectId`,
    target: addProject,
    right: 'write:projects',
    wrong: 'read:projects',
    ok: 200,
    untouched: async (p) => expect(await projectName(p)).toBe('target'),
    effect: async (_res, p) => expect(await projectName(p)).toBeUndefined(),
  },
  { method: 'GET', pattern: `${BASE}/members`, right: 'read:members', wrong: 'read:projects', ok: 200 },
  {
    method: 'PATCH',
    pattern: `${BASE}/members/:memberId`,
    target: () => addMember('member'),
    payload: () => ({ role: 'viewer' }),
    right: 'write:members',
    wrong: 'read:members',
    ok: 200,
    untouched: async (m) => expect(await memberRole(m)).toBe('member'),
    effect: async (_res, m) => expect(await memberRole(m)).toBe('viewer'),
  },
  {
    method: 'DELETE',
    pattern: `${BASE}/members/:memberId`,
    target: () => addMember('viewer'),
    right: 'write:members',
    wrong: 'read:members',
    ok: 200,
    untouched: async (m) => expect(await memberRole(m)).toBe('viewer'),
    effect: async (_res, m) => expect(await memberRole(m)).toBeUndefined(),
  },
  { method: 'GET', pattern: `${BASE}/invitations`, right: 'read:members', wrong: 'read:projects', ok: 200 },
  {
    method: 'POST',
    pattern: `${BASE}/invitations`,
    payload: () => ({ email: `key-invitee-${++people}-${Date.now()}@example.com`, role: 'viewer' }),
    right: 'write:members',
    wrong: 'read:members',
    ok: 201,
    effect: async (res) => expect(await invitationStatus(json(res).invitation.id)).toBe('pending'),
  },
  {
    method: 'DELETE',
    pattern: `${BASE}/invitations/:invitationId`,
    target: addInvitation,
    right: 'write:members',
    wrong: 'read:members',
    ok: 200,
    untouched: async (i) => expect(await invitationStatus(i)).toBe('pending'),
    effect: async (_res, i) => expect(await invitationStatus(i)).toBe('revoked'),
  },
  {
    method: 'POST',
    pattern: `${BASE}/invitations/:invitationId/resend`,
    target: addInvitation,
    right: 'write:members',
    wrong: 'read:members',
    ok: 200,
  },
  { method: 'GET', pattern: `${BASE}/audit-logs`, right: 'read:audit-logs', wrong: 'read:members', ok: 200 },
];

function call(route: KeyRoute, key: string, target: string, org = orgId) {
  const payload = route.payload?.();
  return t.request({ method: route.method, url: urlOf(route, org, target), headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
}

function expectError(res: LightMyRequestResponse, status: number, code: string, message?: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(json(res).error.code).toBe(code);
  if (message) expect(json(res).error.message).toBe(message);
}

describe('routes reachable by keys', () => {
  it('the table covers every scope that has a route here', () => {
    const covered = new Set(routes.map((r) => r.right));
    for (const s of ['read:projects', 'write:projects', 'read:members', 'write:members', 'read:audit-logs'] as Scope[]) expect(covered.has(s), s).toBe(true);
  });

  it.each(routes.map((r) => [`${r.method} ${r.pattern}`, r] as const))('%s', async (_name, route) => {
    const target = route.target ? await route.target() : '';
    const [before] = await queryRows<{ last: string | null }>(t, sql`select max(id) as last from audit_logs`);

    expectError(await call(route, keys.none.plain, target), 403, 'AUTHORIZATION_ERROR');
    expectError(await call(route, keys[route.wrong].plain, target), 403, 'AUTHORIZATION_ERROR');
    // Another organization's key with every scope, on this organization's path.
    expectError(await call(route, keys.foreign.plain, target), 403, 'AUTHORIZATION_ERROR');
    // This organization's key (every scope) on the other organization's path.
    expectError(await call(route, keys.all.plain, target, otherOrgId), 403, 'AUTHORIZATION_ERROR');
    expectError(await call(route, keys.revoked.plain, target), 401, 'AUTHENTICATION_ERROR', 'API key is inactive');
    const start = t.clock.now().getTime();
    t.clock.advance(2 * 3_600_000);
    try {
      expectError(await call(route, keys.expired.plain, target), 401, 'AUTHENTICATION_ERROR', 'API key has expired');
    } finally {
      t.clock.set(start);
    }
    await route.untouched?.(target);

    const ok = await call(route, keys[route.right].plain, target);
    expect(ok.statusCode, ok.body).toBe(route.ok);
    await route.effect?.(ok, target);

    // Every one of these requests was audited under the key that made it, with its status.
    const action = `${route.method} ${route.pattern}`;
    const audited = await queryRows<{ organization_id: string; actor_id: string; status_code: number; path: string }>(
      t,
      sql`select organization_id, actor_id, status_code, path from audit_logs
          where actor_type = 'api_key' and action = ${action} and id > ${before?.last ?? ''} order by id`,
    );
    const entry = (key: keyof typeof keys, status: number, org = orgId, path = urlOf(route, orgId, target)) => ({ organization_id: org, actor_id: keys[key].id, status_code: status, path });
    expect(audited).toEqual([
      entry('none', 403),
      entry(route.wrong, 403),
      entry('foreign', 403, otherOrgId),
      entry('all', 403, orgId, urlOf(route, otherOrgId, target)),
      entry('revoked', 401),
      entry('expired', 401),
      entry(route.right, route.ok),
    ]);
  });
});

describe('routes a key never reaches, whatever its scopes', () => {
  it('organization settings, deletion and transfer; key management; the user routes: 403 (or 401), and nothing changes', async () => {
    const memberId = await addMember('admin');
    const headers = { 'x-api-key': keys.all.plain };
    const never: { method: Method; url: string; payload?: Record<string, unknown> }[] = [
      { method: 'GET', url: `${base(orgId)}` },
      { method: 'PATCH', url: `${base(orgId)}`, payload: { name: 'Taken over' } },
      { method: 'DELETE', url: `${base(orgId)}` },
      { method: 'POST', url: `${base(orgId)}/transfer-ownership`, payload: { memberId } },
      { method: 'POST', url: `${base(orgId)}/leave` },
      { method: 'POST', url: `${base(orgId)}/api-keys`, payload: { name: 'child', scopes: [...SCOPES] } },
      { method: 'POST', url: '/api/v1/api-keys', payload: { organizationId: orgId, name: 'child' } },
      { method: 'GET', url: `${base(orgId)}/api-keys` },
      { method: 'DELETE', url: `${base(orgId)}/api-keys/${keys.none.id}` },
      { method: 'DELETE', url: `/api/v1/api-keys/${keys.none.id}` },
      { method: 'GET', url: `/api/v1/api-keys/${keys.none.id}/usage` },
      { method: 'DELETE', url: `/api/v1/api-keys/${keys.all.id}` },
      { method: 'GET', url: '/api/v1/users/me' },
      { method: 'PATCH', url: '/api/v1/users/me', payload: { fullName: 'Key' } },
      { method: 'GET', url: '/api/v1/users/me/sessions' },
      { method: 'DELETE', url: '/api/v1/users/me/sessions' },
      { method: 'GET', url: '/api/v1/users/me/organizations' },
      { method: 'POST', url: '/api/v1/organizations', payload: { name: 'By key', slug: `by-key-${Date.now().toString(36)}` } },
    ];
    for (const r of never) {
      const res = await t.request({ method: r.method, url: r.url, headers, ...(r.payload ? { payload: r.payload } : {}) });
      expect([401, 403], `${r.method} ${r.url}: ${res.body}`).toContain(res.statusCode);
    }
    const [org] = await queryRows<{ name: string; plan: string }>(t, sql`select name, plan from organizations where id = ${orgId}`);
    expect(org).toEqual({ name: 'scopes', plan: 'enterprise' });
    expect(await memberRole(memberId)).toBe('admin');
    const active = await queryRows<{ id: string; is_active: boolean }>(t, sql`select id, is_active from api_keys where id in (${keys.none.id}, ${keys.all.id})`);
    expect(active.every((k) => k.is_active)).toBe(true);
    const [{ n }] = (await queryRows<{ n: number }>(t, sql`select count(*)::int as n from organizations where created_by = ${owner.userId}`)) as [{ n: number }];
    expect(n).toBe(2);
    // The owner's session is untouched by DELETE /users/me/sessions sent with the key.
    expect((await t.request({ method: 'GET', url: '/api/v1/users/me', headers: owner.auth })).statusCode).toBe(200);
  });
});
