// Rate limits of docs/api.md#rate-limits through HTTP: the headers on every /api/v1 response, the buckets
// (auth per IP, Bearer per user, anonymous per IP), the client IP behind a trusted proxy, and
// counters shared through Redis between instances.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, onRedis, type TestApp } from '../../test/harness.js';
import { signedInUser, uniqueEmail } from '../../test/factories.js';

const apps: TestApp[] = [];
async function app(env: Record<string, string> = {}, extra: Parameters<typeof createTestApp>[0] = {}) {
  const t = await createTestApp({ ...extra, env: { ...extra.env, ...env } });
  apps.push(t);
  return t;
}
afterAll(async () => {
  for (const t of apps.reverse()) await t.close();
});

function rateHeaders(res: LightMyRequestResponse) {
  return {
    limit: res.headers['x-ratelimit-limit'],
    remaining: res.headers['x-ratelimit-remaining'],
    reset: res.headers['x-ratelimit-reset'],
  };
}

/** The three headers are present, integers, and Reset is the Unix second of the window's end. */
function expectRateHeaders(res: LightMyRequestResponse, limit?: number) {
  const h = rateHeaders(res);
  expect(h.limit, `${res.statusCode} ${res.body}`).toMatch(/^\d+$/);
  expect(h.remaining).toMatch(/^\d+$/);
  expect(h.reset).toMatch(/^\d+$/);
  const nowS = Date.now() / 1000;
  expect(Number(h.reset)).toBeGreaterThanOrEqual(Math.floor(nowS));
  expect(Number(h.reset)).toBeLessThanOrEqual(nowS + 61);
  if (limit !== undefined) expect(Number(h.limit)).toBe(limit);
  expect(Number(h.remaining)).toBeLessThanOrEqual(Number(h.limit));
  return { limit: Number(h.limit), remaining: Number(h.remaining), reset: Number(h.reset) };
}

function expectLimited(res: LightMyRequestResponse, limit: number) {
  expect(res.statusCode, res.body).toBe(429);
  const body = json(res);
  expect(body).toEqual({
    success: false,
    error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.any(String), details: expect.any(String) },
  });
  expect(res.headers['retry-after']).toMatch(/^\d+$/);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
  const h = expectRateHeaders(res, limit);
  expect(h.remaining).toBe(0);
}

describe('rate-limit headers', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof signedInUser>>;
  beforeAll(async () => {
    t = await app({ RATE_LIMIT_AUTH_PER_MIN: '1000', RATE_LIMIT_USER_PER_MIN: '900', RATE_LIMIT_ANON_PER_MIN: '800' });
    user = await signedInUser(t, 'headers');
  });

  it('are on every /api/v1 response: success, 400, 401, 404, 413, 415', async () => {
    const cases: [LightMyRequestResponse, number, number][] = [
      [await t.request({ method: 'GET', url: '/api/v1/users/me', headers: user.auth }), 200, 900],
      [
        await t.request({ method: 'POST', url: '/api/v1/auth/resend-verification', payload: { email: uniqueEmail() } }),
        200,
        1000,
      ],
      [await t.request({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'x' } }), 400, 1000],
      [
        await t.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          headers: { 'content-type': 'application/json' },
          payload: '{bad',
        }),
        400,
        1000,
      ],
      [await t.request({ method: 'GET', url: '/api/v1/users/me' }), 401, 800],
      [
        await t.request({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: 'Bearer not-a-token' } }),
        401,
        800,
      ],
      [await t.request({ method: 'GET', url: '/api/v1/nope' }), 404, 800],
      [await t.request({ method: 'GET', url: '/api/v1/nope', headers: user.auth }), 404, 900],
      [
        await t.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ p: 'x'.repeat(1_100_000) }),
        }),
        413,
        1000,
      ],
      [
        await t.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          headers: { 'content-type': 'text/plain' },
          payload: 'hi',
        }),
        415,
        1000,
      ],
    ];
    for (const [res, status, limit] of cases) {
      expect(res.statusCode, res.body).toBe(status);
      expectRateHeaders(res, limit);
    }
  });

  it('count down within a bucket', async () => {
    const a = expectRateHeaders(await t.request({ method: 'GET', url: '/api/v1/users/me', headers: user.auth }));
    const b = expectRateHeaders(await t.request({ method: 'GET', url: '/api/v1/users/me', headers: user.auth }));
    expect(b.remaining).toBe(a.remaining - 1);
    expect(Math.abs(b.reset - a.reset)).toBeLessThanOrEqual(1);
  });

  it('are absent outside /api/v1', async () => {
    for (const url of ['/health', '/ready', '/nope', '/docs/json']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.headers['x-ratelimit-limit'], url).toBeUndefined();
      expect(res.headers['x-ratelimit-remaining'], url).toBeUndefined();
      expect(res.headers['x-ratelimit-reset'], url).toBeUndefined();
    }
  });
});

describe('the /auth/* bucket: per client IP', () => {
  it('answers the 4th request of a minute with 429, Retry-After and Remaining 0; another IP is unaffected', async () => {
    const t = await app({ RATE_LIMIT_AUTH_PER_MIN: '3' });
    const ip = '203.0.113.7';
    const remaining: number[] = [];
    // Different /auth/* routes and outcomes share the one bucket.
    const attempts = [
      { url: '/api/v1/auth/login', payload: { email: 'nobody@example.com', password: 'Wrong-Pass-1' } },
      { url: '/api/v1/auth/resend-verification', payload: { email: 'nobody@example.com' } },
      { url: '/api/v1/auth/register', payload: { email: 'bad' } },
    ];
    for (const a of attempts) {
      const res = await t.request({ method: 'POST', ...a, remoteAddress: ip });
      expect(res.statusCode).not.toBe(429);
      remaining.push(expectRateHeaders(res, 3).remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);
    const fourth = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'nobody@example.com', password: 'x' },
      remoteAddress: ip,
    });
    expectLimited(fourth, 3);

    const other = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'nobody@example.com', password: 'x' },
      remoteAddress: '198.51.100.9',
    });
    expect(other.statusCode).toBe(401);
    expect(expectRateHeaders(other, 3).remaining).toBe(2);

    // The auth bucket is its own: the same IP may still make anonymous requests elsewhere.
    const elsewhere = await t.request({ method: 'GET', url: '/api/v1/users/me', remoteAddress: ip });
    expect(elsewhere.statusCode).toBe(401);
  });
});

describe('the per-user bucket', () => {
  it('limits one user without touching another, or anonymous callers from the same IP', async () => {
    const t = await app({ RATE_LIMIT_USER_PER_MIN: '3' });
    const alice = await signedInUser(t, 'alice');
    const bob = await signedInUser(t, 'bob');
    for (let i = 0; i < 3; i++) {
      const res = await t.request({ method: 'GET', url: '/api/v1/users/me', headers: alice.auth });
      expect(res.statusCode, res.body).toBe(200);
      expect(expectRateHeaders(res, 3).remaining).toBe(2 - i);
    }
    expectLimited(await t.request({ method: 'GET', url: '/api/v1/users/me', headers: alice.auth }), 3);
    // From another IP too: the bucket is the user's, not the address's.
    expectLimited(
      await t.request({ method: 'GET', url: '/api/v1/users/me', headers: alice.auth, remoteAddress: '198.51.100.20' }),
      3,
    );

    const bobRes = await t.request({ method: 'GET', url: '/api/v1/users/me', headers: bob.auth });
    expect(bobRes.statusCode).toBe(200);
    expect(expectRateHeaders(bobRes, 3).remaining).toBe(2);

    const anon = await t.request({ method: 'GET', url: '/api/v1/nope' });
    expect(anon.statusCode).toBe(404);
  });
});

describe('the anonymous bucket: per client IP', () => {
  it('limits one IP without touching another', async () => {
    const t = await app({ RATE_LIMIT_ANON_PER_MIN: '3' });
    const ip = '192.0.2.44';
    for (const url of ['/api/v1/users/me', '/api/v1/nope', '/api/v1/users/me']) {
      const res = await t.request({ method: 'GET', url, remoteAddress: ip });
      expect(res.statusCode).not.toBe(429);
      expectRateHeaders(res, 3);
    }
    expectLimited(await t.request({ method: 'GET', url: '/api/v1/users/me', remoteAddress: ip }), 3);
    // A bogus Bearer token does not buy a fresh bucket.
    expectLimited(
      await t.request({
        method: 'GET',
        url: '/api/v1/users/me',
        remoteAddress: ip,
        headers: { authorization: 'Bearer forged' },
      }),
      3,
    );
    const other = await t.request({ method: 'GET', url: '/api/v1/users/me', remoteAddress: '192.0.2.45' });
    expect(other.statusCode).toBe(401);
    expect(expectRateHeaders(other, 3).remaining).toBe(2);
  });
});

describe('the client IP behind a proxy', () => {
  const send = (t: TestApp, xff: string) =>
    t.request({
      method: 'POST',
      url: '/api/v1/auth/resend-verification',
      payload: { email: 'x@example.com' },
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': xff },
    });

  it('ignores X-Forwarded-For without TRUST_PROXY', async () => {
    const t = await app({ RATE_LIMIT_AUTH_PER_MIN: '2' });
    expect((await send(t, '203.0.113.1')).statusCode).toBe(200);
    expect((await send(t, '203.0.113.2')).statusCode).toBe(200);
    expectLimited(await send(t, '203.0.113.3'), 2);
  });

  for (const trust of ['true', '127.0.0.1', '1']) {
    it(`lets X-Forwarded-For decide the bucket with TRUST_PROXY=${trust}`, async () => {
      const t = await app({ RATE_LIMIT_AUTH_PER_MIN: '2', TRUST_PROXY: trust });
      expect((await send(t, '203.0.113.1')).statusCode).toBe(200);
      expect((await send(t, '203.0.113.1')).statusCode).toBe(200);
      expectLimited(await send(t, '203.0.113.1'), 2);
      const other = await send(t, '203.0.113.2');
      expect(other.statusCode).toBe(200);
      expect(expectRateHeaders(other, 2).remaining).toBe(1);
    });
  }

  it('takes the client from the trusted hops only, so a forged left-hand entry changes nothing', async () => {
    const t = await app({ RATE_LIMIT_AUTH_PER_MIN: '2', TRUST_PROXY: '1' });
    expect((await send(t, '6.6.6.1, 203.0.113.5')).statusCode).toBe(200);
    expect((await send(t, '6.6.6.2, 203.0.113.5')).statusCode).toBe(200);
    expectLimited(await send(t, '6.6.6.3, 203.0.113.5'), 2);
  });

  it('does not trust X-Forwarded-For from an address outside TRUST_PROXY', async () => {
    const t = await app({ RATE_LIMIT_AUTH_PER_MIN: '2', TRUST_PROXY: '10.0.0.1' });
    const from = (xff: string) =>
      t.request({
        method: 'POST',
        url: '/api/v1/auth/resend-verification',
        payload: { email: 'x@example.com' },
        remoteAddress: '198.51.100.77',
        headers: { 'x-forwarded-for': xff },
      });
    expect((await from('203.0.113.1')).statusCode).toBe(200);
    expect((await from('203.0.113.2')).statusCode).toBe(200);
    expectLimited(await from('203.0.113.3'), 2);
  });
});

describe('counters across instances', () => {
  it(
    onRedis
      ? 'are shared by two instances on one Redis prefix'
      : 'hold within one instance (no REDIS_URL: in-process store)',
    async () => {
      const prefix = `test:shared:${Date.now().toString(36)}:`;
      const a = await app({ RATE_LIMIT_AUTH_PER_MIN: '4' }, { redisPrefix: prefix });
      const b = onRedis
        ? await app({ RATE_LIMIT_AUTH_PER_MIN: '4' }, { redisPrefix: prefix, database: a.database })
        : a;
      expect(Boolean(a.deps.redis)).toBe(onRedis);
      const ip = '203.0.113.99';
      const hit = (t: TestApp) =>
        t.request({
          method: 'POST',
          url: '/api/v1/auth/resend-verification',
          payload: { email: 'x@example.com' },
          remoteAddress: ip,
        });
      const seen: number[] = [];
      for (const t of [a, b, a, b]) {
        const res = await hit(t);
        expect(res.statusCode).toBe(200);
        seen.push(expectRateHeaders(res, 4).remaining);
      }
      expect(seen).toEqual([3, 2, 1, 0]);
      expectLimited(await hit(b), 4);
      expectLimited(await hit(a), 4);

      if (onRedis) {
        // An instance on another prefix (another deployment) does not see these counters.
        const c = await app({ RATE_LIMIT_AUTH_PER_MIN: '4' }, { database: a.database });
        expect((await hit(c)).statusCode).toBe(200);
      }
    },
  );
});
