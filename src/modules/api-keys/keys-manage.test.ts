// API keys through HTTP (docs/api.md): list, revoke, usage, the plan limit (also under parallel
// creation) and the outbox events.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from '../../../test/harness.js';
import {
  createFlat,
  createKey,
  createOn,
  newOrg,
  other,
  owner,
  setRole,
  sha256,
  storedRow,
  t,
  useKeysApp,
} from '../../../test/fixtures/api-keys.js';

useKeysApp();

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

    const page2 = json(
      await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${orgId}/api-keys?page=2&pageSize=1`,
        headers: owner.auth,
      }),
    );
    expect(page2).toMatchObject({ total: 2, page: 2, pageSize: 1, hasMore: false });
    expect(page2.data.map((k: { id: string }) => k.id)).toEqual([first.apiKey.id]);
    expect(
      json(
        await t.request({
          method: 'GET',
          url: `/api/v1/organizations/${orgId}/api-keys?pageSize=1`,
          headers: owner.auth,
        }),
      ).hasMore,
    ).toBe(true);
    expect(
      (
        await t.request({
          method: 'GET',
          url: `/api/v1/organizations/${orgId}/api-keys?pageSize=101`,
          headers: owner.auth,
        })
      ).statusCode,
    ).toBe(400);

    await setRole(orgId, other.userId, 'member');
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys`, headers: other.auth }))
        .statusCode,
    ).toBe(403);
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
    const nested = await t.request({
      method: 'DELETE',
      url: `/api/v1/organizations/${orgId}/api-keys/${b.apiKey.id}`,
      headers: owner.auth,
    });
    expect(nested.statusCode, nested.body).toBe(200);
    expect(json(nested).apiKey).toMatchObject({ id: b.apiKey.id, isActive: false });

    for (const url of [
      `/api/v1/api-keys/${a.apiKey.id}`,
      `/api/v1/organizations/${orgId}/api-keys/${a.apiKey.id}`,
      `/api/v1/organizations/${orgId}/api-keys/${b.apiKey.id}`,
    ]) {
      const again = await t.request({ method: 'DELETE', url, headers: owner.auth });
      expect(again.statusCode, again.body).toBe(409);
      expect(json(again).error.code).toBe('CONFLICT');
    }
    for (const url of [
      '/api/v1/api-keys/key_00000000000000000000000000',
      `/api/v1/organizations/${orgId}/api-keys/key_00000000000000000000000000`,
    ]) {
      const res = await t.request({ method: 'DELETE', url, headers: owner.auth });
      expect(res.statusCode, res.body).toBe(404);
      expect(json(res).error.code).toBe('NOT_FOUND');
    }
    const cross = await t.request({
      method: 'DELETE',
      url: `/api/v1/organizations/${orgId}/api-keys/${foreign.apiKey.id}`,
      headers: owner.auth,
    });
    expect(cross.statusCode, cross.body).toBe(404);
    expect((await storedRow(foreign.apiKey.id)).is_active).toBe(true);

    // Who may revoke: not a member, nor a non-member.
    await setRole(otherOrg, other.userId, 'member');
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${foreign.apiKey.id}`, headers: other.auth }))
        .statusCode,
    ).toBe(403);
    await setRole(otherOrg, other.userId, null);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${foreign.apiKey.id}`, headers: other.auth }))
        .statusCode,
    ).toBe(403);
    expect((await storedRow(foreign.apiKey.id)).is_active).toBe(true);

    const events = await queryRows<{ type: string; data: unknown }>(
      t,
      sql`select type, data from events where organization_id = ${orgId} order by created_at, id`,
    );
    const data = (k: typeof a) => ({
      apiKeyId: k.apiKey.id,
      organizationId: orgId,
      name: k.apiKey.name,
      keyPrefix: k.apiKey.keyPrefix,
      scopes: k.apiKey.scopes,
    });
    expect(events).toEqual([
      { type: 'api_key.created', data: data(a) },
      { type: 'api_key.created', data: data(b) },
      { type: 'api_key.revoked', data: data(a) },
      { type: 'api_key.revoked', data: data(b) },
    ]);
    const list = json(
      await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys`, headers: owner.auth }),
    );
    expect(list.data.map((k: { isActive: boolean }) => k.isActive)).toEqual([false, false]);
  });

  it('usage counts every request made with the key, refused ones included; rateLimit is the key’s, else 1000', async () => {
    const orgId = await newOrg('enterprise');
    const limited = await createKey(orgId, { scopes: ['read:projects'], rateLimit: 250 });
    const plain = await createKey(orgId, { scopes: [] });
    const url = `/api/v1/organizations/${orgId}/projects`;
    const use = (key: string, method: 'GET' | 'POST' = 'GET') =>
      t.request({
        method,
        url,
        headers: { 'x-api-key': key },
        ...(method === 'POST' ? { payload: { name: 'p' } } : {}),
      });
    expect((await use(limited.plainKey)).statusCode).toBe(200);
    expect((await use(limited.plainKey)).statusCode).toBe(200);
    expect((await use(limited.plainKey, 'POST')).statusCode).toBe(403);
    expect(
      (
        await t.request({
          method: 'GET',
          url: '/api/v1/organizations/org_00000000000000000000000000/projects',
          headers: { 'x-api-key': limited.plainKey },
        })
      ).statusCode,
    ).toBe(403);
    expect((await use(plain.plainKey)).statusCode).toBe(403);

    const usage = await t.request({
      method: 'GET',
      url: `/api/v1/api-keys/${limited.apiKey.id}/usage`,
      headers: owner.auth,
    });
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
    expect(
      json(await t.request({ method: 'GET', url: `/api/v1/api-keys/${plain.apiKey.id}/usage`, headers: owner.auth }))
        .usage,
    ).toEqual({ requests: 1, rateLimit: 1000 });

    // After revocation the refused requests still count.
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${plain.apiKey.id}`, headers: owner.auth }))
        .statusCode,
    ).toBe(200);
    expect((await use(plain.plainKey)).statusCode).toBe(401);
    expect(
      json(await t.request({ method: 'GET', url: `/api/v1/api-keys/${plain.apiKey.id}/usage`, headers: owner.auth }))
        .usage,
    ).toEqual({ requests: 2, rateLimit: 1000 });

    expect(
      (
        await t.request({
          method: 'GET',
          url: '/api/v1/api-keys/key_00000000000000000000000000/usage',
          headers: owner.auth,
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/api-keys/${plain.apiKey.id}/usage`, headers: other.auth }))
        .statusCode,
    ).toBe(403);
    expect(
      (
        await t.request({
          method: 'GET',
          url: `/api/v1/api-keys/${limited.apiKey.id}/usage`,
          headers: { 'x-api-key': limited.plainKey },
        })
      ).statusCode,
    ).toBe(403);
  });
});

describe('active keys per plan', () => {
  it('Free allows 1 active key: the second is 402 PLAN_LIMIT_EXCEEDED; after revoking, a new one is allowed', async () => {
    const orgId = await newOrg();
    const first = await createKey(orgId);
    for (const res of [
      await createOn(orgId, { name: 'second' }),
      await createFlat({ organizationId: orgId, name: 'second' }),
    ]) {
      expect(res.statusCode, res.body).toBe(402);
      expect(json(res).error.code).toBe('PLAN_LIMIT_EXCEEDED');
    }
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${first.apiKey.id}`, headers: owner.auth }))
        .statusCode,
    ).toBe(200);
    const again = await createOn(orgId, { name: 'replacement' });
    expect(again.statusCode, again.body).toBe(201);
    expect((await createOn(orgId, { name: 'third' })).statusCode).toBe(402);
    const events = await queryRows<{ type: string }>(
      t,
      sql`select type from events where organization_id = ${orgId} order by created_at, id`,
    );
    expect(events.map((e) => e.type)).toEqual(['api_key.created', 'api_key.revoked', 'api_key.created']);
  });

  it('an expired key no longer counts as active', async () => {
    const orgId = await newOrg();
    const { apiKey } = await createKey(orgId, {
      expiresAt: new Date(t.clock.now().getTime() + 3_600_000).toISOString(),
    });
    expect((await createOn(orgId, { name: 'second' })).statusCode).toBe(402);
    // Its hour passes (set in the row: moving the clock would also expire the owner's access token).
    await t.deps.db.execute(
      sql`update api_keys set expires_at = ${new Date(t.clock.now().getTime() - 1000).toISOString()}::timestamptz where id = ${apiKey.id}`,
    );
    const res = await createOn(orgId, { name: 'after-expiry' });
    expect(res.statusCode, res.body).toBe(201);
  });

  it('parallel creation of 5 keys on a fresh Free organization: exactly one 201 and four 402', async () => {
    const orgId = await newOrg();
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        i % 2 === 0 ? createOn(orgId, { name: `p${i}` }) : createFlat({ organizationId: orgId, name: `p${i}` }),
      ),
    );
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses, results.map((r) => r.body).join('\n')).toEqual([201, 402, 402, 402, 402]);
    const rows = await queryRows<{ n: number }>(
      t,
      sql`select count(*)::int as n from api_keys where organization_id = ${orgId}`,
    );
    expect(rows[0]!.n).toBe(1);
    const events = await queryRows<{ type: string }>(t, sql`select type from events where organization_id = ${orgId}`);
    expect(events.map((e) => e.type)).toEqual(['api_key.created']);
  });
});
