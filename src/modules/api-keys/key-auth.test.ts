// Authenticating with an API key (docs/api.md#api-key-authentication, docs/api.md#rate-limits): the two headers, the three refusals
// and their messages, revocation on the very next request although lookups are cached, and the
// per-key rate limit.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';

let owner: Awaited<ReturnType<typeof signedInUser>>;
let orgId: string;
useApp();
beforeAll(async () => {
  owner = await signedInUser(t, 'key-auth');
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/organizations',
    headers: owner.auth,
    payload: { name: 'Key auth', slug: `key-auth-${Date.now().toString(36)}` },
  });
  expect(res.statusCode, res.body).toBe(201);
  orgId = json(res).id;
  await t.deps.db.execute(sql`update organizations set plan = 'enterprise' where id = ${orgId}`);
}, 120_000);

const projectsUrl = () => `/api/v1/organizations/${orgId}/projects`;
const withKey = (key: string) => ({ 'x-api-key': key });
const withBearer = (key: string) => ({ authorization: `Bearer ${key}` });
const get = (headers: Record<string, string>, url = projectsUrl()) => t.request({ method: 'GET', url, headers });

async function createKey(payload: Record<string, unknown> = {}) {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/api-keys`,
    headers: owner.auth,
    payload: { name: 'k', scopes: ['read:projects'], ...payload },
  });
  expect(res.statusCode, res.body).toBe(201);
  return json(res) as { apiKey: { id: string; keyPrefix: string }; plainKey: string };
}

const revoke = async (keyId: string) => {
  const res = await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${keyId}`, headers: owner.auth });
  expect(res.statusCode, res.body).toBe(200);
};

function expect401(res: LightMyRequestResponse, message: string) {
  expect(res.statusCode, res.body).toBe(401);
  expect(json(res)).toEqual({
    success: false,
    error: { code: 'AUTHENTICATION_ERROR', message, details: expect.any(String) },
  });
}

describe('headers', () => {
  it('accepts the key as X-API-Key and as Authorization: Bearer', async () => {
    const { plainKey } = await createKey();
    for (const headers of [withKey(plainKey), withBearer(plainKey), { authorization: `bearer ${plainKey}` }]) {
      const res = await get(headers);
      expect(res.statusCode, res.body).toBe(200);
      expect(json(res)).toMatchObject({ data: [], total: 0 });
    }
  });

  it('unknown key: 401 Invalid API key, on both headers; a Bearer token that is neither a key nor a JWT: 401', async () => {
    const unknown = `svc_live_${'0'.repeat(32)}`;
    expect401(await get(withKey(unknown)), 'Invalid API key');
    expect401(await get(withBearer(unknown)), 'Invalid API key');
    expect401(await get(withKey('not-a-key')), 'Invalid API key');
    expect401(await get(withBearer('svc_live_short')), 'Invalid API key');
    expect((await get(withBearer('garbage'))).statusCode).toBe(401);
    // A real key with one character changed is unknown too.
    const { plainKey } = await createKey();
    const tampered = plainKey.slice(0, -1) + (plainKey.endsWith('0') ? '1' : '0');
    expect401(await get(withKey(tampered)), 'Invalid API key');
    expect401(await get(withKey(plainKey.toUpperCase())), 'Invalid API key');
  });
});

describe('refusals', () => {
  it('revoked: 401 API key is inactive, on both headers and every route', async () => {
    const { apiKey, plainKey } = await createKey({ scopes: ['read:projects', 'read:members'] });
    await revoke(apiKey.id);
    expect401(await get(withKey(plainKey)), 'API key is inactive');
    expect401(await get(withBearer(plainKey)), 'API key is inactive');
    expect401(await get(withKey(plainKey), `/api/v1/organizations/${orgId}/members`), 'API key is inactive');
    // Authentication comes first: even a route the key could never reach says 401.
    expect401(await get(withKey(plainKey), '/api/v1/users/me'), 'API key is inactive');
  });

  it('expired: usable until expiresAt, then 401 API key has expired (although cached)', async () => {
    const start = t.clock.now().getTime();
    const { plainKey } = await createKey({ expiresAt: new Date(start + 3_600_000).toISOString() });
    expect((await get(withKey(plainKey))).statusCode).toBe(200);
    t.clock.advance(3_600_000 - 1000);
    try {
      expect((await get(withKey(plainKey))).statusCode).toBe(200);
      t.clock.set(start + 2 * 3_600_000);
      expect401(await get(withKey(plainKey)), 'API key has expired');
      expect401(await get(withBearer(plainKey)), 'API key has expired');
    } finally {
      t.clock.set(start);
    }
  });

  it('revoke then use: the very next request fails, though the key was just used and is cached', async () => {
    for (const headers of [withKey, withBearer]) {
      const { apiKey, plainKey } = await createKey();
      for (let i = 0; i < 3; i++) expect((await get(headers(plainKey))).statusCode).toBe(200);
      await revoke(apiKey.id);
      expect401(await get(headers(plainKey)), 'API key is inactive');
      expect401(await get(headers(plainKey)), 'API key is inactive');
    }
  });

  it('a revoked key is refused also when the revocation was written straight to the database and the cache has expired', async () => {
    // Not the normal path (revocation goes through the API), but the database is the truth:
    // a key row made inactive must not stay usable beyond the cache's lifetime.
    const { apiKey, plainKey } = await createKey();
    expect((await get(withKey(plainKey))).statusCode).toBe(200);
    await t.deps.db.execute(sql`update api_keys set is_active = false where id = ${apiKey.id}`);
    const realNow = Date.now;
    Date.now = () => realNow() + 61_000;
    try {
      expect401(await get(withKey(plainKey)), 'API key is inactive');
    } finally {
      Date.now = realNow;
    }
  });

  it('lastUsedAt follows the key’s use', async () => {
    const { apiKey, plainKey } = await createKey();
    const listed = async () => {
      const res = await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${orgId}/api-keys?pageSize=100`,
        headers: owner.auth,
      });
      return json(res).data.find((k: { id: string }) => k.id === apiKey.id).lastUsedAt as string | null;
    };
    expect(await listed()).toBeNull();
    await get(withKey(plainKey));
    expect(await listed()).toBe(t.clock.now().toISOString());
    t.clock.advance(5000);
    await get(withKey(plainKey));
    expect(await listed()).toBe(t.clock.now().toISOString());
  });
});

describe('per-key rate limit', () => {
  it('a key with rateLimit 3: the 4th request is 429 RATE_LIMIT_EXCEEDED with Retry-After; another key is unaffected', async () => {
    const limited = await createKey({ rateLimit: 3 });
    const other = await createKey();
    for (let i = 0; i < 3; i++) {
      const res = await get(withKey(limited.plainKey));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(2 - i));
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    }
    const refused = await get(withKey(limited.plainKey));
    expect(refused.statusCode, refused.body).toBe(429);
    expect(json(refused).error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['x-ratelimit-limit']).toBe('3');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    // The Bearer form is the same key: the same bucket.
    expect((await get(withBearer(limited.plainKey))).statusCode).toBe(429);

    const free = await get(withKey(other.plainKey));
    expect(free.statusCode, free.body).toBe(200);
    expect(free.headers['x-ratelimit-limit']).toBe('1000');
    expect(free.headers['x-ratelimit-remaining']).toBe('999');

    // Refused requests are audited and counted too.
    const audit = await queryRows<{ status_code: number }>(
      t,
      sql`select status_code from audit_logs where actor_id = ${limited.apiKey.id} order by created_at, id`,
    );
    expect(audit.map((a) => a.status_code)).toEqual([200, 200, 200, 429, 429]);
    const usage = json(
      await t.request({ method: 'GET', url: `/api/v1/api-keys/${limited.apiKey.id}/usage`, headers: owner.auth }),
    );
    expect(usage.usage).toEqual({ requests: 5, rateLimit: 3 });
  });
});
