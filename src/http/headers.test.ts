// Security headers through HTTP, on successes and on every kind of error: X-Content-Type-Options
// everywhere, Cache-Control: no-store on the API (token responses above all), a Content-Security-
// Policy refusing framing on HTML pages (the docs UI still loading its own scripts and styles), and
// Strict-Transport-Security when the public URL is https.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, login, registerUser, signedInUser, uniqueEmail, verifyEmailOf } from '../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../test/harness.js';
import { buildApp } from '../app.js';
import { createInfra, type Infra } from '../infra.js';

const apps: TestApp[] = [];
async function app(env: Record<string, string> = {}) {
  const t = await createTestApp({ env });
  apps.push(t);
  return t;
}
afterAll(async () => {
  for (const t of apps.reverse()) await t.close();
});

let t: TestApp;
beforeAll(async () => {
  t = await app();
});

/** The directives of a Content-Security-Policy header, by name. */
function csp(res: LightMyRequestResponse): Map<string, string[]> {
  const header = res.headers['content-security-policy'];
  expect(header, `${res.statusCode} ${String(res.headers['content-type'])}`).toEqual(expect.any(String));
  const directives = new Map<string, string[]>();
  for (const part of String(header).split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) directives.set(name.toLowerCase(), values);
  }
  return directives;
}

/** The sources a directive allows, falling back to default-src as browsers do. */
const sources = (policy: Map<string, string[]>, directive: string) =>
  policy.get(directive) ?? policy.get('default-src') ?? ['*'];

function expectCommon(res: LightMyRequestResponse) {
  expect(res.headers['x-content-type-options'], `${res.statusCode} ${res.body.slice(0, 200)}`).toBe('nosniff');
}

function expectApi(res: LightMyRequestResponse) {
  expectCommon(res);
  expect(res.headers['cache-control'], `${res.statusCode}`).toBe('no-store');
}

function expectHtmlPage(res: LightMyRequestResponse) {
  expectCommon(res);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(csp(res).get('frame-ancestors')).toEqual(["'none'"]);
  expect(res.headers['x-frame-options']).toBe('DENY');
}

describe('every response says nosniff; every /api/v1 response says no-store', () => {
  it('a token response (POST /api/v1/auth/login) and a token refresh are not cacheable', async () => {
    const { email, password } = await registerUser(t, uniqueEmail('hdr-login'));
    await verifyEmailOf(t, email);
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).accessToken).toEqual(expect.any(String));
    expectApi(res);
    const refresh = await t.request({
      method: 'POST',
      url: '/api/v1/auth/refresh',
      payload: { refreshToken: json(res).refreshToken },
    });
    expect(refresh.statusCode, refresh.body).toBe(200);
    expectApi(refresh);
  });

  it('an authenticated read (GET /api/v1/users/me) is not cacheable', async () => {
    const u = await signedInUser(t, 'hdr-me');
    const res = await t.request({ method: 'GET', url: '/api/v1/users/me', headers: u.auth });
    expect(res.statusCode).toBe(200);
    expectApi(res);
  });

  it('errors carry them: 400, 401, 404 (inside and outside /api/v1), 413, 415, and a malformed path', async () => {
    const cases: [number, LightMyRequestResponse][] = [
      [400, await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 1 } })],
      [
        400,
        await t.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          headers: { 'content-type': 'application/json' },
          payload: '{"email":',
        }),
      ],
      [401, await t.request({ method: 'GET', url: '/api/v1/users/me' })],
      [404, await t.request({ method: 'GET', url: '/api/v1/nope' })],
      [
        413,
        await t.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          headers: { 'content-type': 'application/json' },
          payload: `{"email":"${'x'.repeat(1024 * 1024 + 10)}"}`,
        }),
      ],
      [
        415,
        await t.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          headers: { 'content-type': 'text/plain' },
          payload: 'x',
        }),
      ],
      [400, await t.request({ method: 'DELETE', url: '/api/v1/users/me/sessions/%zz' })],
    ];
    for (const [status, res] of cases) {
      expect(res.statusCode, res.body).toBe(status);
      expectApi(res);
    }
    const outside = await t.request({ method: 'GET', url: '/nope' });
    expect(outside.statusCode).toBe(404);
    expectCommon(outside);
    const badOutside = await t.request({ method: 'GET', url: '/%zz' });
    expect(badOutside.statusCode).toBe(400);
    expectCommon(badOutside);
  });

  it('a 429 carries them', async () => {
    const limited = await app({ RATE_LIMIT_AUTH_PER_MIN: '1' });
    const send = () =>
      limited.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: 'rl@example.com', password: 'Correct-Horse-9' },
      });
    await send();
    const res = await send();
    expect(res.statusCode, res.body).toBe(429);
    expectApi(res);
  });

  it('GET /health and GET /ready say nosniff', async () => {
    for (const url of ['/health', '/ready']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expectCommon(res);
    }
  });

  it('no Strict-Transport-Security while PUBLIC_API_URL is http', async () => {
    expect(t.deps.config.publicApiUrl).toMatch(/^http:/);
    const res = await t.request({ method: 'GET', url: '/health' });
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });
});

describe('a 500 carries them', () => {
  let own: FastifyInstance;
  let deps: Infra;
  beforeAll(async () => {
    deps = await createInfra(t.deps.config, {
      logger: pino({ level: 'silent' }),
      dbHandle: t.database.handle,
      migrate: false,
      redisPrefix: `${t.deps.redisPrefix}hdr500:`,
    });
    own = await buildApp(deps);
    own.get('/api/v1/test/boom', { config: { auth: 'none' } }, async () => {
      throw new Error('boom');
    });
    own.get('/test/boom', async () => {
      throw new Error('boom');
    });
    await own.ready();
  });
  afterAll(async () => {
    await own?.close();
    await deps?.sessions.close();
    deps?.redis?.disconnect();
  });

  it('inside and outside /api/v1', async () => {
    const inside = await own.inject({ method: 'GET', url: '/api/v1/test/boom' });
    expect(inside.statusCode).toBe(500);
    expectApi(inside);
    const outside = await own.inject({ method: 'GET', url: '/test/boom' });
    expect(outside.statusCode).toBe(500);
    expectCommon(outside);
  });
});

describe('HTML pages refuse to be framed', () => {
  it('the docs UI: its page, and every script, stylesheet and image it loads, is allowed by its policy and served', async () => {
    for (const url of ['/docs', '/docs/']) {
      const page = await t.request({ method: 'GET', url });
      expect(page.statusCode, url).toBe(200);
      expectHtmlPage(page);
      const policy = csp(page);
      // Swagger UI needs its own scripts and styles (same origin), inline style attributes, data:
      // images, and to fetch the OpenAPI document (and "Try it out" requests) from this origin.
      expect(sources(policy, 'script-src')).toContain("'self'");
      expect(sources(policy, 'script-src')).not.toContain("'none'");
      expect(sources(policy, 'style-src')).toEqual(expect.arrayContaining(["'self'", "'unsafe-inline'"]));
      expect(sources(policy, 'img-src')).toEqual(expect.arrayContaining(["'self'", 'data:']));
      expect(sources(policy, 'connect-src')).toContain("'self'");
      // The page holds no inline script the policy would block.
      expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);

      const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      expect(assets.length).toBeGreaterThanOrEqual(5);
      for (const asset of assets) {
        // Relative to the page: same origin, which 'self' allows.
        expect(asset).not.toMatch(/^[a-z]+:|^\/\//i);
        const assetUrl = new URL(asset, `http://localhost${url}`).pathname;
        const res = await t.request({ method: 'GET', url: assetUrl });
        expect(res.statusCode, assetUrl).toBe(200);
        expectCommon(res);
        if (assetUrl.endsWith('.js')) expect(res.headers['content-type']).toMatch(/javascript/);
        if (assetUrl.endsWith('.css')) expect(res.headers['content-type']).toMatch(/^text\/css/);
      }
    }
    const spec = await t.request({ method: 'GET', url: '/docs/json' });
    expect(spec.statusCode).toBe(200);
    expect(json(spec).openapi).toBe('3.1.0');
    expectCommon(spec);
  });

  it('the built-in test checkout page', async () => {
    const owner = await signedInUser(t, 'hdr-checkout');
    const org = await createOrg(t, owner);
    const start = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/billing/checkout`,
      headers: owner.auth,
      payload: {
        priceId: 'price_pro',
        successUrl: 'http://app.test/billing/thanks',
        cancelUrl: 'http://app.test/billing',
      },
    });
    expect(start.statusCode, start.body).toBe(200);
    expectApi(start);
    const page = await t.request({ method: 'GET', url: new URL(json(start).data.url as string).pathname });
    expect(page.statusCode).toBe(200);
    expectHtmlPage(page);
    expect(page.headers['cache-control']).toBe('no-store');
    const policy = csp(page);
    // Its inline style attribute still applies; scripts are not needed and not allowed.
    expect(sources(policy, 'style-src')).toContain("'unsafe-inline'");
    expect(sources(policy, 'script-src')).toEqual(["'none'"]);
    // The forms post to the page's own origin, then redirect to APP_ORIGIN: no form-action that a
    // browser would apply to the redirect.
    expect(policy.has('form-action')).toBe(false);
  });
});

describe('with PUBLIC_API_URL on https', () => {
  it('every response, errors included, carries Strict-Transport-Security', async () => {
    const secure = await app({ PUBLIC_API_URL: 'https://api.example.com' });
    const email = uniqueEmail('hdr-hsts');
    await registerUser(secure, email);
    await verifyEmailOf(secure, email);
    await login(secure, email);
    const responses = [
      await secure.request({ method: 'GET', url: '/health' }),
      await secure.request({ method: 'GET', url: '/docs' }),
      await secure.request({ method: 'GET', url: '/api/v1/nope' }),
      await secure.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email, password: 'Correct-Horse-9' },
      }),
      await secure.request({ method: 'POST', url: '/api/v1/auth/login', payload: {} }),
      await secure.request({ method: 'GET', url: '/%zz' }),
    ];
    for (const res of responses) {
      expect(res.headers['strict-transport-security'], `${res.statusCode}`).toBe('max-age=31536000; includeSubDomains');
      expectCommon(res);
    }
  });
});
