// API keys through HTTP (spec §2.6, §4.6, DECISIONS §4): creation on both paths, the key's format and
// storage, validation, who may create, list, revoke, usage, the plan limit (also under parallel
// creation) and the outbox events.
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';

let t: TestApp;
let owner: Awaited<ReturnType<typeof signedInUser>>;
let other: Awaited<ReturnType<typeof signedInUser>>;
beforeAll(async () => {
  t = await createTestApp();
  owner = await signedInUser(t, 'keys-owner');
  other = await signedInUser(t, 'keys-other');
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const KEY = /^svc_live_[0-9a-f]{32}$/;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
let slugs = 0;

async function newOrg(plan: 'free' | 'enterprise' = 'free') {
  const res = await t.request({ method: 'POST', url: '/api/v1/organizations', headers: owner.auth, payload: { name: 'Keys', slug: `keys-${Date.now().toString(36)}-${++slugs}` } });
  expect(res.statusCode, res.body).toBe(201);
  const id = json(res).id as string;
  if (plan !== 'free') await t.deps.db.execute(sql`update organizations set plan = ${plan} where id = ${id}`);
  return id;
}

const createOn = (orgId: string, payload: Record<string, unknown>, headers: Record<string, string> = owner.auth) =>
  t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/api-keys`, headers, payload });
const createFlat = (payload: Record<string, unknown>, headers: Record<string, string> = owner.auth) => t.request({ method: 'POST', url: '/api/v1/api-keys', headers, payload });

async function createKey(orgId: string, payload: Record<string, unknown> = {}) {
  const res = await createOn(orgId, { name: 'k', ...payload });
  expect(res.statusCode, res.body).toBe(201);
  return json(res) as { apiKey: Record<string, any>; plainKey: string }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** `user` is a member of `orgId` with `role` (set directly: the invitation flow is tested elsewhere). */
async function setRole(orgId: string, userId: string, role: 'admin' | 'member' | 'viewer' | null) {
  await t.deps.db.execute(sql`delete from memberships where organization_id = ${orgId} and user_id = ${userId}`);
  if (role) {
    const now = t.clock.now().toISOString();
    await t.deps.db.execute(sql`insert into memberships (organization_id, id, user_id, role, joined_at, updated_at)
      values (${orgId}, ${newId('mbr', t.clock.now().getTime())}, ${userId}, ${role}, ${now}::timestamptz, ${now}::timestamptz)`);
  }
}

function expectKeyShape(apiKey: Record<string, unknown>, plainKey: string, fields: Record<string, unknown>) {
  expect(Object.keys(apiKey).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'isActive', 'keyPrefix', 'lastUsedAt', 'name', 'rateLimit', 'scopes'].sort());
  expect(apiKey.id).toMatch(/^key_[0-9a-z]{26}$/);
  expect(apiKey).toMatchObject({ isActive: true, lastUsedAt: null, createdAt: t.clock.now().toISOString(), ...fields });
  expect(plainKey).toMatch(KEY);
  expect(apiKey.keyPrefix).toBe(plainKey.slice(0, 'svc_live_'.length + 8));
}

async function storedRow(keyId: string) {
  const [row] = await queryRows<Record<string, unknown>>(t, sql`select * from api_keys where id = ${keyId}`);
  return row!;
}

describe('creating a key', () => {
  it('on /organizations/{orgId}/api-keys: 201 {apiKey, plainKey}; only the SHA-256 hash is stored; api_key.created recorded', async () => {
    const orgId = await newOrg();
    const expiresAt = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
    const res = await createOn(orgId, { name: ' ci deploy ', scopes: ['read:projects', 'write:projects'], rateLimit: 50, expiresAt });
    expect(res.statusCode, res.body).toBe(201);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['apiKey', 'plainKey']);
    expectKeyShape(body.apiKey, body.plainKey, { name: 'ci deploy', scopes: ['read:projects', 'write:projects'], rateLimit: 50, expiresAt });

    const row = await storedRow(body.apiKey.id);
    expect(row.key_hash).toBe(sha256(body.plainKey));
    expect(row.organization_id).toBe(orgId);
    const random = body.plainKey.slice('svc_live_'.length);
    for (const [column, value] of Object.entries(row)) {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      expect(text ?? '', column).not.toContain(random);
    }

    const events = await queryRows<{ type: string; data: unknown }>(t, sql`select type, data from events where organization_id = ${orgId} order by created_at, id`);
    expect(events).toEqual([
      {
        type: 'api_key.created',
        data: { apiKeyId: body.apiKey.id, organizationId: orgId, name: 'ci deploy', keyPrefix: body.apiKey.keyPrefix, scopes: ['read:projects', 'write:projects'] },
      },
    ]);
    // A user's change: audited as the user, with the route pattern.
    const audit = await queryRows<{ actor_type: string; actor_id: string; status_code: number }>(
      t,
      sql`select actor_type, actor_id, status_code from audit_logs where organization_id = ${orgId} and action = 'POST /api/v1/organizations/:orgId/api-keys'`,
    );
    expect(audit).toEqual([{ actor_type: 'user', actor_id: owner.userId, status_code: 201 }]);
  });

  it('on the flat POST /api-keys with organizationId in the body: the same 201; defaults scopes [], rateLimit null, expiresAt null', async () => {
    const orgId = await newOrg();
    const res = await createFlat({ organizationId: orgId, name: 'flat' });
    expect(res.statusCode, res.body).toBe(201);
    const { apiKey, plainKey } = json(res);
    expectKeyShape(apiKey, plainKey, { name: 'flat', scopes: [], rateLimit: null, expiresAt: null });
    expect((await storedRow(apiKey.id)).organization_id).toBe(orgId);
    const list = json(await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys`, headers: owner.auth }));
    expect(list.data.map((k: { id: string }) => k.id)).toEqual([apiKey.id]);
  });

  it('two keys never share the random part', async () => {
    const orgId = await newOrg('enterprise');
    const a = await createKey(orgId);
    const b = await createKey(orgId);
    expect(a.plainKey).not.toBe(b.plainKey);
    expect(a.apiKey.id).not.toBe(b.apiKey.id);
  });

  it('API_KEY_PREFIX=acme API_KEY_MODE=test makes acme_test_ keys, accepted as X-API-Key and as Bearer', async () => {
    const acme = await createTestApp({ database: t.database, clock: t.clock, env: { API_KEY_PREFIX: 'acme', API_KEY_MODE: 'test' } });
    try {
      const orgId = await newOrg();
      const res = await acme.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/api-keys`, headers: owner.auth, payload: { name: 'acme', scopes: ['read:projects'] } });
      expect(res.statusCode, res.body).toBe(201);
      const { apiKey, plainKey } = json(res);
      expect(plainKey).toMatch(/^acme_test_[0-9a-f]{32}$/);
      expect(apiKey.keyPrefix).toBe(plainKey.slice(0, 'acme_test_'.length + 8));
      const url = `/api/v1/organizations/${orgId}/projects`;
      expect((await acme.request({ method: 'GET', url, headers: { 'x-api-key': plainKey } })).statusCode).toBe(200);
      expect((await acme.request({ method: 'GET', url, headers: { authorization: `Bearer ${plainKey}` } })).statusCode).toBe(200);
    } finally {
      await acme.close();
    }
  });

  it('validation: unknown scope, expiresAt in the past, rateLimit not a positive integer: 400; rateLimit null is fine', async () => {
    const orgId = await newOrg('enterprise');
    const past = new Date(t.clock.now().getTime() - 60_000).toISOString();
    const bad: Record<string, unknown>[] = [
      { name: 'x', scopes: ['read:everything'] },
      { name: 'x', scopes: ['read:projects', 'admin:all'] },
      { name: 'x', expiresAt: past },
      { name: 'x', expiresAt: t.clock.now().toISOString() },
      { name: 'x', expiresAt: 'tomorrow' },
      { name: 'x', rateLimit: 0 },
      { name: 'x', rateLimit: -1 },
      { name: 'x', rateLimit: 1.5 },
      { name: 'x', rateLimit: 'x' },
      { name: 'x', rateLimit: '10' },
      { name: '' },
      { name: '   ' },
      { scopes: [] },
      { name: 'x', keyHash: 'abc' },
    ];
    for (const payload of bad) {
      for (const res of [await createOn(orgId, payload), await createFlat({ organizationId: orgId, ...payload })]) {
        expect(res.statusCode, `${JSON.stringify(payload)}: ${res.body}`).toBe(400);
        expect(json(res).error.code).toBe('VALIDATION_ERROR');
      }
    }
    const noOrg = await createFlat({ name: 'x' });
    expect(noOrg.statusCode, noOrg.body).toBe(400);
    const [{ n }] = (await queryRows<{ n: number }>(t, sql`select count(*)::int as n from api_keys where organization_id = ${orgId}`)) as [{ n: number }];
    expect(n).toBe(0);

    const ok = await createOn(orgId, { name: 'x', rateLimit: null, expiresAt: null, scopes: [] });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(json(ok).apiKey).toMatchObject({ rateLimit: null, expiresAt: null, scopes: [] });
    const one = await createOn(orgId, { name: 'x', rateLimit: 1 });
    expect(json(one).apiKey.rateLimit).toBe(1);
  });

  it('permissions: owner and admin may create; member, viewer and non-members get 403 on both paths; unknown organization 404', async () => {
    const orgId = await newOrg('enterprise');
    await setRole(orgId, other.userId, 'admin');
    expect((await createOn(orgId, { name: 'by-admin' }, other.auth)).statusCode).toBe(201);
    expect((await createFlat({ organizationId: orgId, name: 'by-admin' }, other.auth)).statusCode).toBe(201);
    for (const role of ['member', 'viewer', null] as const) {
      await setRole(orgId, other.userId, role);
      for (const res of [await createOn(orgId, { name: 'no' }, other.auth), await createFlat({ organizationId: orgId, name: 'no' }, other.auth)]) {
        expect(res.statusCode, `${role}: ${res.body}`).toBe(403);
        expect(json(res).error.code).toBe('AUTHORIZATION_ERROR');
      }
    }
    expect((await createOn('org_00000000000000000000000000', { name: 'x' })).statusCode).toBe(404);
    expect((await createFlat({ organizationId: 'org_00000000000000000000000000', name: 'x' })).statusCode).toBe(404);
    expect((await t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/api-keys`, payload: { name: 'anon' } })).statusCode).toBe(401);
    const [{ n }] = (await queryRows<{ n: number }>(t, sql`select count(*)::int as n from api_keys where organization_id = ${orgId}`)) as [{ n: number }];
    expect(n).toBe(2);
  });

  it('an API key cannot create keys, even with every scope (403 on both paths, X-API-Key or Bearer)', async () => {
    const orgId = await newOrg('enterprise');
    const all = ['read:projects', 'write:projects', 'read:members', 'write:members', 'read:webhooks', 'write:webhooks', 'read:billing', 'read:audit-logs'];
    const { plainKey } = await createKey(orgId, { scopes: all });
    for (const headers of [{ 'x-api-key': plainKey }, { authorization: `Bearer ${plainKey}` }] as Record<string, string>[]) {
      const a = await createOn(orgId, { name: 'child', scopes: all }, headers);
      const b = await createFlat({ organizationId: orgId, name: 'child' }, headers);
      for (const res of [a, b]) {
        expect(res.statusCode, res.body).toBe(403);
        expect(json(res).error.code).toBe('AUTHORIZATION_ERROR');
      }
    }
    const [{ n }] = (await queryRows<{ n: number }>(t, sql`select count(*)::int as n from api_keys where organization_id = ${orgId}`)) as [{ n: number }];
    expect(n).toBe(1);
  });
});

describe('listing, revoking, usage', () => {
  it('lists newest first in the pagination envelope, without secrets', async () => {
    const orgId = await newOrg('enterprise');
    const first = await createKey(orgId, { name: 'first' });
    t.clock.advance(1000);
    const second = await createKey(orgId, { name: 'second', scopes: ['read:members'] });
    const res = await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys`, headers: owner.auth });
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(body).toMatchObject({ total: 2, page: 1, pageSize: 20, hasMore: false });
    expect(body.data).toEqual([second.apiKey, first.apiKey]);
    for (const k of [first, second]) {
      expect(res.body).not.toContain(k.plainKey.slice('svc_live_'.length));
      expect(res.body).not.toContain(sha256(k.plainKey));
    }
    expect(res.body).not.toMatch(/plainKey|keyHash/);

    const page2 = json(await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys?page=2&pageSize=1`, headers: owner.auth }));
    expect(page2).toMatchObject({ total: 2, page: 2, pageSize: 1, hasMore: false });
    expect(page2.data.map((k: { id: string }) => k.id)).toEqual([first.apiKey.id]);
    expect(json(await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys?pageSize=1`, headers: owner.auth })).hasMore).toBe(true);
    expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys?pageSize=101`, headers: owner.auth })).statusCode).toBe(400);

    await setRole(orgId, other.userId, 'member');
    expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys`, headers: other.auth })).statusCode).toBe(403);
    await setRole(orgId, other.userId, null);
  });

  it('revokes on both paths; a second revoke is 409; unknown id 404; another organization’s key through this one’s path 404; api_key.revoked recorded', async () => {
    const orgId = await newOrg('enterprise');
    const otherOrg = await newOrg();
    const a = await createKey(orgId, { name: 'a', scopes: ['read:projects'] });
    const b = await createKey(orgId, { name: 'b' });
    const foreign = await createKey(otherOrg, { name: 'foreign' });

    const flat = await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${a.apiKey.id}`, headers: owner.auth });
    expect(flat.statusCode, flat.body).toBe(200);
    expect(json(flat).apiKey).toMatchObject({ id: a.apiKey.id, isActive: false });
    expect(flat.body).not.toContain(a.plainKey);
    const nested = await t.request({ method: 'DELETE', url: `/api/v1/organizations/${orgId}/api-keys/${b.apiKey.id}`, headers: owner.auth });
    expect(nested.statusCode, nested.body).toBe(200);
    expect(json(nested).apiKey).toMatchObject({ id: b.apiKey.id, isActive: false });

    for (const url of [`/api/v1/api-keys/${a.apiKey.id}`, `/api/v1/organizations/${orgId}/api-keys/${a.apiKey.id}`, `/api/v1/organizations/${orgId}/api-keys/${b.apiKey.id}`]) {
      const again = await t.request({ method: 'DELETE', url, headers: owner.auth });
      expect(again.statusCode, again.body).toBe(409);
      expect(json(again).error.code).toBe('CONFLICT');
    }
    for (const url of ['/api/v1/api-keys/key_00000000000000000000000000', `/api/v1/organizations/${orgId}/api-keys/key_00000000000000000000000000`]) {
      const res = await t.request({ method: 'DELETE', url, headers: owner.auth });
      expect(res.statusCode, res.body).toBe(404);
      expect(json(res).error.code).toBe('NOT_FOUND');
    }
    const cross = await t.request({ method: 'DELETE', url: `/api/v1/organizations/${orgId}/api-keys/${foreign.apiKey.id}`, headers: owner.auth });
    expect(cross.statusCode, cross.body).toBe(404);
    expect((await storedRow(foreign.apiKey.id)).is_active).toBe(true);

    // Who may revoke: not a member, nor a non-member.
    await setRole(otherOrg, other.userId, 'member');
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${foreign.apiKey.id}`, headers: other.auth })).statusCode).toBe(403);
    await setRole(otherOrg, other.userId, null);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${foreign.apiKey.id}`, headers: other.auth })).statusCode).toBe(403);
    expect((await storedRow(foreign.apiKey.id)).is_active).toBe(true);

    const events = await queryRows<{ type: string; data: unknown }>(t, sql`select type, data from events where organization_id = ${orgId} order by created_at, id`);
    const data = (k: typeof a) => ({ apiKeyId: k.apiKey.id, organizationId: orgId, name: k.apiKey.name, keyPrefix: k.apiKey.keyPrefix, scopes: k.apiKey.scopes });
    expect(events).toEqual([
      { type: 'api_key.created', data: data(a) },
      { type: 'api_key.created', data: data(b) },
      { type: 'api_key.revoked', data: data(a) },
      { type: 'api_key.revoked', data: data(b) },
    ]);
    const list = json(await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys`, headers: owner.auth }));
    expect(list.data.map((k: { isActive: boolean }) => k.isActive)).toEqual([false, false]);
  });

  it('usage counts every request made with the key, refused ones included; rateLimit is the key’s, else 1000', async () => {
    const orgId = await newOrg('enterprise');
    const limited = await createKey(orgId, { scopes: ['read:projects'], rateLimit: 250 });
    const plain = await createKey(orgId, { scopes: [] });
    const url = `/api/v1/organizations/${orgId}/projects`;
    const use = (key: string, method: 'GET' | 'POST' = 'GET') => t.request({ method, url, headers: { 'x-api-key': key }, ...(method === 'POST' ? { payload: { name: 'p' } } : {}) });
    expect((await use(limited.plainKey)).statusCode).toBe(200);
    expect((await use(limited.plainKey)).statusCode).toBe(200);
    expect((await use(limited.plainKey, 'POST')).statusCode).toBe(403);
    expect((await t.request({ method: 'GET', url: '/api/v1/organizations/org_00000000000000000000000000/projects', headers: { 'x-api-key': limited.plainKey } })).statusCode).toBe(403);
    expect((await use(plain.plainKey)).statusCode).toBe(403);

    const usage = await t.request({ method: 'GET', url: `/api/v1/api-keys/${limited.apiKey.id}/usage`, headers: owner.auth });
    expect(usage.statusCode, usage.body).toBe(200);
    const body = json(usage);
    expect(body).toEqual({
      keyId: limited.apiKey.id,
      name: 'k',
      prefix: limited.apiKey.keyPrefix,
      lastUsedAt: t.clock.now().toISOString(),
      createdAt: limited.apiKey.createdAt,
      usage: { requests: 4, rateLimit: 250 },
    });
    expect(usage.body).not.toContain(limited.plainKey.slice('svc_live_'.length));
    expect(json(await t.request({ method: 'GET', url: `/api/v1/api-keys/${plain.apiKey.id}/usage`, headers: owner.auth })).usage).toEqual({ requests: 1, rateLimit: 1000 });

    // After revocation the refused requests still count.
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${plain.apiKey.id}`, headers: owner.auth })).statusCode).toBe(200);
    expect((await use(plain.plainKey)).statusCode).toBe(401);
    expect(json(await t.request({ method: 'GET', url: `/api/v1/api-keys/${plain.apiKey.id}/usage`, headers: owner.auth })).usage).toEqual({ requests: 2, rateLimit: 1000 });

    expect((await t.request({ method: 'GET', url: '/api/v1/api-keys/key_00000000000000000000000000/usage', headers: owner.auth })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/api-keys/${plain.apiKey.id}/usage`, headers: other.auth })).statusCode).toBe(403);
    expect((await t.request({ method: 'GET', url: `/api/v1/api-keys/${limited.apiKey.id}/usage`, headers: { 'x-api-key': limited.plainKey } })).statusCode).toBe(403);
  });
});

describe('active keys per plan', () => {
  it('Free allows 1 active key: the second is 402 PLAN_LIMIT_EXCEEDED; after revoking, a new one is allowed', async () => {
    const orgId = await newOrg();
    const first = await createKey(orgId);
    for (const res of [await createOn(orgId, { name: 'second' }), await createFlat({ organizationId: orgId, name: 'second' })]) {
      expect(res.statusCode, res.body).toBe(402);
      expect(json(res).error.code).toBe('PLAN_LIMIT_EXCEEDED');
    }
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${first.apiKey.id}`, headers: owner.auth })).statusCode).toBe(200);
    const again = await createOn(orgId, { name: 'replacement' });
    expect(again.statusCode, again.body).toBe(201);
    expect((await createOn(orgId, { name: 'third' })).statusCode).toBe(402);
    const events = await queryRows<{ type: string }>(t, sql`select type from events where organization_id = ${orgId} order by created_at, id`);
    expect(events.map((e) => e.type)).toEqual(['api_key.created', 'api_key.revoked', 'api_key.created']);
  });

  it('an expired key no longer counts as active', async () => {
    const orgId = await newOrg();
    const { apiKey } = await createKey(orgId, { expiresAt: new Date(t.clock.now().getTime() + 3_600_000).toISOString() });
    expect((await createOn(orgId, { name: 'second' })).statusCode).toBe(402);
    // Its hour passes (set in the row: moving the clock would also expire the owner's access token).
    await t.deps.db.execute(sql`update api_keys set expires_at = ${new Date(t.clock.now().getTime() - 1000).toISOString()}::timestamptz where id = ${apiKey.id}`);
    const res = await createOn(orgId, { name: 'after-expiry' });
    expect(res.statusCode, res.body).toBe(201);
  });

  it('parallel creation of 5 keys on a fresh Free organization: exactly one 201 and four 402', async () => {
    const orgId = await newOrg();
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => (i % 2 === 0 ? createOn(orgId, { name: `p${i}` }) : createFlat({ organizationId: orgId, name: `p${i}` }))),
    );
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses, results.map((r) => r.body).join('\n')).toEqual([201, 402, 402, 402, 402]);
    const rows = await queryRows<{ n: number }>(t, sql`select count(*)::int as n from api_keys where organization_id = ${orgId}`);
    expect(rows[0]!.n).toBe(1);
    const events = await queryRows<{ type: string }>(t, sql`select type from events where organization_id = ${orgId}`);
    expect(events.map((e) => e.type)).toEqual(['api_key.created']);
  });
});
