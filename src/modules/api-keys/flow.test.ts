import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';

useApp();

describe('API key happy path', () => {
  it('creates a scoped key, uses it, audits every request, and revokes it at once', async () => {
    const owner = await signedInUser(t, 'keyowner');
    const org = json(
      await t.request({
        method: 'POST',
        url: '/api/v1/organizations',
        headers: owner.auth,
        payload: { name: 'Keys', slug: `keys-${Date.now()}` },
      }),
    );
    const created = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/api-keys`,
      headers: owner.auth,
      payload: { name: 'ci', scopes: ['read:projects'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { apiKey, plainKey } = json(created);
    expect(plainKey).toMatch(/^svc_live_[0-9a-f]{32}$/);
    expect(apiKey.keyPrefix).toBe(plainKey.slice(0, 'svc_live_'.length + 8));

    const list = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: { 'x-api-key': plainKey },
    });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.headers['x-ratelimit-limit']).toBe('1000');
    const bearer = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: { authorization: `Bearer ${plainKey}` },
    });
    expect(bearer.statusCode).toBe(200);
    const write = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: { 'x-api-key': plainKey },
      payload: { name: 'x' },
    });
    expect(write.statusCode).toBe(403);

    const audit = await queryRows<{ status_code: number; actor_type: string }>(
      t,
      sql`select status_code, actor_type from audit_logs where organization_id = ${org.id} and actor_type = 'api_key' order by id`,
    );
    expect(audit.map((a) => a.status_code)).toEqual([200, 200, 403]);

    const usage = await t.request({ method: 'GET', url: `/api/v1/api-keys/${apiKey.id}/usage`, headers: owner.auth });
    expect(json(usage).usage).toEqual({ requests: 3, rateLimit: 1000 });

    const revoked = await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${apiKey.id}`, headers: owner.auth });
    expect(revoked.statusCode, revoked.body).toBe(200);
    // The revoked key as it stands, its last use (the three requests above) included.
    expect(json(revoked).apiKey).toMatchObject({
      id: apiKey.id,
      isActive: false,
      lastUsedAt: t.clock.now().toISOString(),
    });
    const after = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: { 'x-api-key': plainKey },
    });
    expect(after.statusCode).toBe(401);
    expect(json(after).error.message).toBe('API key is inactive');

    const logs = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${org.id}/audit-logs?actorType=api_key`,
      headers: owner.auth,
    });
    expect(logs.statusCode, logs.body).toBe(200);
    expect(json(logs).total).toBe(4);
    expect(json(logs).data[0]).toMatchObject({
      actorType: 'api_key',
      actorId: apiKey.id,
      statusCode: 401,
      method: 'GET',
    });
  });
});
