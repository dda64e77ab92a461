// CORS (docs/api.md#cors: APP_ORIGIN is the front-end origin, also for CORS): the front end may call
// the API from a browser and read the rate-limit headers; any other origin gets no allowance.
import { beforeAll, describe, expect, it } from 'vitest';
import { t, useApp } from '../../test/fixtures/app.js';

const ORIGIN = 'http://app.test'; // the harness's APP_ORIGIN
useApp();
beforeAll(async () => {});

const preflight = (origin: string, url = '/api/v1/auth/login', method = 'POST') =>
  t.request({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'content-type, authorization',
    },
  });

describe('CORS', () => {
  it('answers a preflight from APP_ORIGIN with what the front end needs', async () => {
    for (const [url, method] of [
      ['/api/v1/auth/login', 'POST'],
      ['/api/v1/users/me', 'PATCH'],
      ['/api/v1/users/me/sessions/ses_x', 'DELETE'],
    ] as const) {
      const res = await preflight(ORIGIN, url, method);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(String(res.headers['access-control-allow-methods'])).toContain(method);
      const allowHeaders = String(res.headers['access-control-allow-headers']).toLowerCase();
      for (const h of ['authorization', 'content-type', 'idempotency-key', 'x-api-key', 'x-session-mode'])
        expect(allowHeaders).toContain(h);
      expect(res.headers['access-control-max-age']).toMatch(/^\d+$/);
      // The web app's refresh cookie (cookie mode) from a front end on another origin of the site.
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(String(res.headers.vary)).toMatch(/origin/i);
    }
  });

  it('lets the front end read the rate-limit headers of an actual request', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { origin: ORIGIN },
      payload: { email: 'nobody@example.com', password: 'Wrong-Pass-1' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase();
    for (const h of [
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'retry-after',
      'x-request-id',
      'idempotent-replayed',
    ])
      expect(exposed).toContain(h);
    expect(String(res.headers.vary)).toMatch(/origin/i);
  });

  it('gives another origin nothing, on preflights and on requests', async () => {
    for (const origin of [
      'http://evil.test',
      'http://app.test.evil.test',
      'https://app.test',
      'http://app.test:8080',
      'null',
    ]) {
      const pre = await preflight(origin);
      expect(pre.headers['access-control-allow-origin'], origin).toBeUndefined();
      expect(pre.headers['access-control-allow-credentials'], origin).toBeUndefined();
      expect(pre.headers['access-control-allow-methods'], origin).toBeUndefined();
      const res = await t.request({ method: 'GET', url: '/api/v1/users/me', headers: { origin } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
  });

  it('adds nothing to a request without an Origin', async () => {
    const res = await t.request({ method: 'GET', url: '/health' });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    // An OPTIONS that is not a preflight is an ordinary unknown route.
    const opt = await t.request({ method: 'OPTIONS', url: '/api/v1/auth/login' });
    expect(opt.statusCode).toBe(404);
  });
});
