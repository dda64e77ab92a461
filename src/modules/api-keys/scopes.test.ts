// The security table for API keys (docs/api.md#api-key-scopes), generated from the route table
// (test/route-table.ts) and SCOPE_PERMISSIONS: every organization route whose permission a scope
// reaches, against a key without scopes (403), a key with each scope that does not reach it (403), a
// key of another organization (403), this organization's key on another organization's route (403),
// a revoked key (401), an expired key (401), and the narrowest scope that reaches it (the control).
// None of the refusals changes anything, and every request is audited under its key. Then the routes
// a key never reaches, whatever its scopes: the user routes and the permissions no scope reaches.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhook, organizationRows, signedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows } from '../../../test/harness.js';
import {
  BODY_IDS,
  HOOK_URL,
  type Ids,
  inputOf,
  missingInput,
  narrowestScope,
  type Operation,
  operations,
  orgKind,
  PARAM_IDS,
  pathOf,
  scopesReaching,
  strayEntries,
  UNKNOWN,
  unnamedParams,
} from '../../../test/route-table.js';
import { newId } from '../../lib/ids.js';
import { SCOPES, type Scope } from '../../platform/permissions.js';
import { expectError, type ExpectedError } from '../../../test/expect.js';
import type { ErrorCode } from '../../lib/errors.js';

// The app is made while the file is collected: the rows are read from its route table.
const t = await createTestApp();
afterAll(async () => {
  await t.close();
});
const OPS = operations(t).filter((op) => op.served);
const reachable = (op: Operation) => op.org !== undefined && scopesReaching(op.org.permission).length > 0;
/** The organization routes a scope reaches. */
const KEY_ROUTES = OPS.filter(reachable);
/**
 * The routes no key reaches: a person's own (auth 'user'), those of auth and passkeys not in the
 * route table yet included, and the permissions no scope reaches.
 */
const NEVER = OPS.filter((op) => op.auth === 'user' || (op.org && !reachable(op)));

let owner: Awaited<ReturnType<typeof signedInUser>>;
let orgId: string;
let otherOrgId: string;
const keys = {} as Record<Scope | 'none' | 'all' | 'revoked' | 'expired' | 'foreign', { id: string; plain: string }>;

async function createOrg(name: string) {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/organizations',
    headers: owner.auth,
    payload: { name, slug: `${name}-${Date.now().toString(36)}` },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = json(res).id as string;
  await t.deps.db.execute(sql`update organizations set plan = 'enterprise' where id = ${id}`);
  return id;
}

async function createKey(org: string, scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${org}/api-keys`,
    headers: owner.auth,
    payload: { name: 'scoped', scopes, ...extra },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { id: json(res).apiKey.id as string, plain: json(res).plainKey as string };
}

beforeAll(async () => {
  owner = await signedInUser(t, 'scopes');
  orgId = await createOrg('scopes');
  otherOrgId = await createOrg('scopes-other');
  keys.none = await createKey(orgId, []);
  for (const s of SCOPES) keys[s] = await createKey(orgId, [s]);
  keys.all = await createKey(orgId, [...SCOPES]);
  keys.revoked = await createKey(orgId, [...SCOPES]);
  keys.expired = await createKey(orgId, [...SCOPES], {
    expiresAt: new Date(t.clock.now().getTime() + 3_600_000).toISOString(),
  });
  keys.foreign = await createKey(otherOrgId, [...SCOPES]);
  // Used once, so the revoked key is cached as active when it is revoked.
  expect(
    (
      await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${orgId}/projects`,
        headers: { 'x-api-key': keys.revoked.plain },
      })
    ).statusCode,
  ).toBe(200);
  const revoked = await t.request({
    method: 'DELETE',
    url: `/api/v1/api-keys/${keys.revoked.id}`,
    headers: owner.auth,
  });
  expect(revoked.statusCode, revoked.body).toBe(200);
}, 180_000);

let people = 0;
/** A member of the organization (rows made directly: people are not what is under test here). */
async function addMember(org: string, role: 'admin' | 'member' | 'viewer' = 'member') {
  const now = t.clock.now().toISOString();
  const userId = newId('usr', t.clock.now().getTime());
  const memberId = newId('mbr', t.clock.now().getTime());
  await t.deps.db
    .execute(sql`insert into users (id, email, email_verified_at, full_name, preferences, created_at, updated_at)
    values (${userId}, ${`scoped-member-${++people}-${Date.now()}@example.com`}, ${now}::timestamptz, 'Member', ${JSON.stringify({ theme: 'system', language: 'en', timezone: 'UTC', notifications: { email: true, push: false } })}::jsonb, ${now}::timestamptz, ${now}::timestamptz)`);
  await t.deps.db.execute(sql`insert into memberships (organization_id, id, user_id, role, joined_at, updated_at)
    values (${org}, ${memberId}, ${userId}, ${role}, ${now}::timestamptz, ${now}::timestamptz)`);
  return memberId;
}

async function addProject(org: string) {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${org}/projects`,
    headers: owner.auth,
    payload: { name: 'target' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).id as string;
}

async function addInvitation(org: string) {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${org}/invitations`,
    headers: owner.auth,
    payload: { email: `invitee-${++people}-${Date.now()}@example.com`, role: 'member' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).invitation.id as string;
}

/** A pending delivery (of a test event) of the endpoint. */
async function addDelivery(org: string, hook: string) {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${org}/webhooks/${hook}/test`,
    headers: owner.auth,
  });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data.deliveryId as string;
}

/** Fresh rows of `org` for what the route names (a row a control destroys is its own), unknown ids for the rest. */
async function targets(op: Operation, org: string): Promise<Ids> {
  const kinds = new Set([...op.params.map((p) => PARAM_IDS[p]), ...(BODY_IDS[op.operationId] ?? [])]);
  const ids: Ids = { ...UNKNOWN, org };
  if (kinds.has('project')) ids.project = await addProject(org);
  if (kinds.has('member')) ids.member = await addMember(org);
  if (kinds.has('invitation')) ids.invitation = await addInvitation(org);
  if (kinds.has('hook') || kinds.has('delivery')) ids.hook = (await createWebhook(t, org, owner, { url: HOOK_URL })).id;
  if (kinds.has('delivery')) ids.delivery = await addDelivery(org, ids.hook);
  if (kinds.has('key')) ids.key = (await createKey(org, [])).id;
  return ids;
}

/** Everything a refused request could have touched, in both organizations (but the audit log, which records it). */
const state = () => organizationRows(t, [orgId, otherOrgId], /^audit_log/);

const projectName = async (id: string) =>
  (await queryRows<{ name: string }>(t, sql`select name from projects where id = ${id}`))[0]?.name;
const memberRole = async (id: string) =>
  (await queryRows<{ role: string }>(t, sql`select role from memberships where id = ${id}`))[0]?.role;
const invitationStatus = async (id: string) =>
  (await queryRows<{ status: string }>(t, sql`select status from invitations where id = ${id}`))[0]?.status;

type Body = Record<string, unknown>;
/** What an allowed call did, where the table checks it (by operationId). */
const EFFECTS: Record<string, (res: LightMyRequestResponse, ids: Ids, body: Body) => Promise<void>> = {
  createProject: async (res, _ids, body) => expect(await projectName(json(res).id)).toBe(body.name),
  updateProject: async (_res, ids, body) => expect(await projectName(ids.project)).toBe(body.name),
  deleteProject: async (_res, ids) => expect(await projectName(ids.project)).toBeUndefined(),
  updateMemberRole: async (_res, ids, body) => expect(await memberRole(ids.member)).toBe(body.role),
  removeMember: async (_res, ids) => expect(await memberRole(ids.member)).toBeUndefined(),
  createInvitation: async (res) => expect(await invitationStatus(json(res).invitation.id)).toBe('pending'),
  revokeInvitation: async (_res, ids) => expect(await invitationStatus(ids.invitation)).toBe('revoked'),
};

function call(op: Operation, key: string, ids: Ids, input = inputOf(op, ids)) {
  return t.request({ method: op.method, url: pathOf(op, ids), headers: { 'x-api-key': key }, ...input });
}

describe('routes reachable by keys', () => {
  it('the table has what its rows need, and every scope is the control of some route', () => {
    expect(KEY_ROUTES.length).toBeGreaterThan(10);
    expect([...KEY_ROUTES, ...NEVER].flatMap(missingInput)).toEqual([]);
    // A route a key reaches gets rows of its own for what its path names.
    expect(
      KEY_ROUTES.flatMap((op) =>
        unnamedParams(op).map((p) => `${op.operationId}: :${p} names no kind of id (PARAM_IDS)`),
      ),
    ).toEqual([]);
    expect(strayEntries(EFFECTS, KEY_ROUTES)).toEqual([]);
    const controls = new Set(KEY_ROUTES.map((op) => narrowestScope(op.org!.permission)));
    expect(
      SCOPES.filter((s) => !controls.has(s)),
      'scopes that reach no route',
    ).toEqual([]);
  });

  it.each(KEY_ROUTES.map((op) => [`${op.operationId}: ${op.method} ${op.url}`, op] as const))(
    '%s',
    async (_name, op) => {
      const permission = op.org!.permission;
      const right = narrowestScope(permission)!;
      const wrong = SCOPES.filter((s) => !scopesReaching(permission).includes(s));
      const ids = await targets(op, orgId);
      // The same route, with its organization another one: a path's, a body's, or the looked-up row's.
      const kind = orgKind(op);
      const elsewhere =
        kind === 'org' ? { ...ids, org: otherOrgId } : { ...ids, [kind]: (await targets(op, otherOrgId))[kind] };
      const [last] = await queryRows<{ last: string | null }>(t, sql`select max(id) as last from audit_logs`);
      const before = await state();

      const audited: Array<{ organization_id: string; actor_id: string; status_code: number; path: string }> = [];
      const refused = async (
        key: keyof typeof keys,
        status: number,
        code: ErrorCode,
        expected: ExpectedError = {},
        at = ids,
        keyOrg = orgId,
      ) => {
        expectError(await call(op, keys[key].plain, at), status, code, expected);
        audited.push({ organization_id: keyOrg, actor_id: keys[key].id, status_code: status, path: pathOf(op, at) });
      };
      await refused('none', 403, 'AUTHORIZATION_ERROR');
      for (const s of wrong) await refused(s, 403, 'AUTHORIZATION_ERROR');
      // Another organization's key with every scope, on this organization's route.
      await refused('foreign', 403, 'AUTHORIZATION_ERROR', {}, ids, otherOrgId);
      // This organization's key (every scope) on the other organization's route.
      await refused('all', 403, 'AUTHORIZATION_ERROR', {}, elsewhere);
      await refused('revoked', 401, 'AUTHENTICATION_ERROR', { message: 'API key is inactive' });
      const start = t.clock.now().getTime();
      t.clock.advance(2 * 3_600_000);
      try {
        await refused('expired', 401, 'AUTHENTICATION_ERROR', { message: 'API key has expired' });
      } finally {
        t.clock.set(start);
      }
      expect(await state(), 'the refusals changed nothing').toEqual(before);

      const input = inputOf(op, ids);
      const ok = await call(op, keys[right].plain, ids, input);
      expect(ok.statusCode, ok.body).toBe(op.success);
      await EFFECTS[op.operationId]?.(ok, ids, (input.payload ?? {}) as Body);
      audited.push({
        organization_id: orgId,
        actor_id: keys[right].id,
        status_code: op.success,
        path: pathOf(op, ids),
      });

      // Every one of these requests was audited under the key that made it, with its status.
      const action = `${op.method} ${op.url}`;
      expect(
        await queryRows(
          t,
          sql`select organization_id, actor_id, status_code, path from audit_logs
            where actor_type = 'api_key' and action = ${action} and id > ${last?.last ?? ''} order by id`,
        ),
      ).toEqual(audited);
    },
  );
});

describe('routes a key never reaches, whatever its scopes', () => {
  it("a person's routes, and the permissions no scope reaches (settings, deletion, transfer, keys, billing changes): 403 (or 401), and nothing changes", async () => {
    expect(NEVER.length).toBeGreaterThan(10);
    const memberId = await addMember(orgId, 'admin');
    const headers = { 'x-api-key': keys.all.plain };
    const ids: Ids = { ...UNKNOWN, org: orgId, member: memberId, key: keys.none.id };
    // A route that names a key is also tried on the calling key itself.
    const calls = NEVER.flatMap((op) => [
      [op, ids] as const,
      ...(op.params.includes('keyId') ? [[op, { ...ids, key: keys.all.id }] as const] : []),
    ]);
    const before = await state();
    for (const [op, at] of calls) {
      const res = await t.request({ method: op.method, url: pathOf(op, at), headers, ...inputOf(op, at) });
      expect([401, 403], `${op.operationId}: ${op.method} ${pathOf(op, at)}: ${res.body}`).toContain(res.statusCode);
    }
    expect(await state()).toEqual(before);
    const [org] = await queryRows<{ name: string; plan: string }>(
      t,
      sql`select name, plan from organizations where id = ${orgId}`,
    );
    expect(org).toEqual({ name: 'scopes', plan: 'enterprise' });
    expect(await memberRole(memberId)).toBe('admin');
    const active = await queryRows<{ id: string; is_active: boolean }>(
      t,
      sql`select id, is_active from api_keys where id in (${keys.none.id}, ${keys.all.id})`,
    );
    expect(active.every((k) => k.is_active)).toBe(true);
    const [{ n }] = (await queryRows<{ n: number }>(
      t,
      sql`select count(*)::int as n from organizations where created_by = ${owner.userId}`,
    )) as [{ n: number }];
    expect(n).toBe(2);
    // The owner's session is untouched by DELETE /users/me/sessions sent with the key.
    expect((await t.request({ method: 'GET', url: '/api/v1/users/me', headers: owner.auth })).statusCode).toBe(200);
  });
});
