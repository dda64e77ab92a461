// API keys through HTTP (docs/api.md): creation on both paths, the key's format and storage,
// validation and who may create.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestApp, json, queryRows } from '../../../test/harness.js';
import {
  createFlat,
  createKey,
  createOn,
  expectKeyShape,
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

describe('creating a key', () => {
  it('on /organizations/{orgId}/api-keys: 201 {apiKey, plainKey}; only the SHA-256 hash is stored; api_key.created recorded', async () => {
    const orgId = await newOrg();
    const expiresAt = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
    const res = await createOn(orgId, {
      name: ' ci deploy ',
      scopes: ['read:projects', 'write:projects'],
      rateLimit: 50,
      expiresAt,
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['apiKey', 'plainKey']);
    expectKeyShape(body.apiKey, body.plainKey, {
      name: 'ci deploy',
      scopes: ['read:projects', 'write:projects'],
      rateLimit: 50,
      expiresAt,
    });

    const row = await storedRow(body.apiKey.id);
    expect(row.key_hash).toBe(sha256(body.plainKey));
    expect(row.organization_id).toBe(orgId);
    const random = body.plainKey.slice('svc_live_'.length);
    for (const [column, value] of Object.entries(row)) {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      expect(text ?? '', column).not.toContain(random);
    }

    const events = await queryRows<{ type: string; data: unknown }>(
      t,
      sql`select type, data from events where organization_id = ${orgId} order by created_at, id`,
    );
    expect(events).toEqual([
      {
        type: 'api_key.created',
        data: {
          apiKeyId: body.apiKey.id,
          organizationId: orgId,
          name: 'ci deploy',
          keyPrefix: body.apiKey.keyPrefix,
          scopes: ['read:projects', 'write:projects'],
        },
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
    const list = json(
      await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/api-keys`, headers: owner.auth }),
    );
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
    const acme = await createTestApp({
      database: t.database,
      clock: t.clock,
      env: { API_KEY_PREFIX: 'acme', API_KEY_MODE: 'test' },
    });
    try {
      const orgId = await newOrg();
      const res = await acme.request({
        method: 'POST',
        url: `/api/v1/organizations/${orgId}/api-keys`,
        headers: owner.auth,
        payload: { name: 'acme', scopes: ['read:projects'] },
      });
      expect(res.statusCode, res.body).toBe(201);
      const { apiKey, plainKey } = json(res);
      expect(plainKey).toMatch(/^acme_test_[0-9a-f]{32}$/);
      expect(apiKey.keyPrefix).toBe(plainKey.slice(0, 'acme_test_'.length + 8));
      const url = `/api/v1/organizations/${orgId}/projects`;
      expect((await acme.request({ method: 'GET', url, headers: { 'x-api-key': plainKey } })).statusCode).toBe(200);
      expect(
        (await acme.request({ method: 'GET', url, headers: { authorization: `Bearer ${plainKey}` } })).statusCode,
      ).toBe(200);
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
    const [{ n }] = (await queryRows<{ n: number }>(
      t,
      sql`select count(*)::int as n from api_keys where organization_id = ${orgId}`,
    )) as [{ n: number }];
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
      for (const res of [
        await createOn(orgId, { name: 'no' }, other.auth),
        await createFlat({ organizationId: orgId, name: 'no' }, other.auth),
      ]) {
        expect(res.statusCode, `${role}: ${res.body}`).toBe(403);
        expect(json(res).error.code).toBe('AUTHORIZATION_ERROR');
      }
    }
    expect((await createOn('org_00000000000000000000000000', { name: 'x' })).statusCode).toBe(404);
    expect((await createFlat({ organizationId: 'org_00000000000000000000000000', name: 'x' })).statusCode).toBe(404);
    expect(
      (await t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/api-keys`, payload: { name: 'anon' } }))
        .statusCode,
    ).toBe(401);
    const [{ n }] = (await queryRows<{ n: number }>(
      t,
      sql`select count(*)::int as n from api_keys where organization_id = ${orgId}`,
    )) as [{ n: number }];
    expect(n).toBe(2);
  });

  it('an API key cannot create keys, even with every scope (403 on both paths, X-API-Key or Bearer)', async () => {
    const orgId = await newOrg('enterprise');
    const all = [
      'read:projects',
      'write:projects',
      'read:members',
      'write:members',
      'read:webhooks',
      'write:webhooks',
      'read:billing',
      'read:audit-logs',
    ];
    const { plainKey } = await createKey(orgId, { scopes: all });
    for (const headers of [{ 'x-api-key': plainKey }, { authorization: `Bearer ${plainKey}` }] as Record<
      string,
      string
    >[]) {
      const a = await createOn(orgId, { name: 'child', scopes: all }, headers);
      const b = await createFlat({ organizationId: orgId, name: 'child' }, headers);
      for (const res of [a, b]) {
        expect(res.statusCode, res.body).toBe(403);
        expect(json(res).error.code).toBe('AUTHORIZATION_ERROR');
      }
    }
    const [{ n }] = (await queryRows<{ n: number }>(
      t,
      sql`select count(*)::int as n from api_keys where organization_id = ${orgId}`,
    )) as [{ n: number }];
    expect(n).toBe(1);
  });
});
