// The web app served by the API process (docs/web.md): the files of its build, index.html for
// the app's own pages, long caching for hashed assets only, the app's CSP, and the API's paths kept
// the API's. Without a build, a page that says how to make one (503).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from '../../test/harness.js';
import { WEB_DIST } from './web.js';

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const INDEX =
  '<!doctype html><html><head><script type="module" src="/assets/index-B7xQ2m_a.js"></script></head><body><div id="root"></div></body></html>';
const SCRIPT = 'console.log("app")';

let dist: string;
let t: TestApp;
let bare: TestApp;
beforeAll(async () => {
  dist = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-web-'));
  fs.mkdirSync(path.join(dist, 'assets'));
  fs.writeFileSync(path.join(dist, 'index.html'), INDEX);
  fs.writeFileSync(path.join(dist, 'assets', 'index-B7xQ2m_a.js'), SCRIPT);
  fs.writeFileSync(path.join(dist, 'robots.txt'), 'User-agent: *\n');
  fs.writeFileSync(path.join(dist, '.env'), 'SECRET=1\n');
  fs.writeFileSync(path.join(os.tmpdir(), `${path.basename(dist)}-outside.txt`), 'outside');
  t = await createTestApp({ webDist: dist });
  bare = await createTestApp({ webDist: path.join(dist, 'missing') });
});
afterAll(async () => {
  await t?.close();
  await bare?.close();
  fs.rmSync(dist, { recursive: true, force: true });
  fs.rmSync(path.join(os.tmpdir(), `${path.basename(dist)}-outside.txt`), { force: true });
});

/** The directives of the Content-Security-Policy, by name. */
function csp(res: LightMyRequestResponse): Record<string, string> {
  const entries = String(res.headers['content-security-policy'])
    .split(';')
    .map((d) => d.trim().split(/\s+/))
    .map(([name, ...values]) => [name!, values.join(' ')]);
  return Object.fromEntries(entries);
}

function expectJson404(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(404);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(json(res)).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  // (Under /docs nothing says no-store: the docs UI's rule, app.ts.)
  if (!res.raw.req.url?.startsWith('/docs')) expect(res.headers['cache-control']).toBe('no-store');
}

describe('the app’s pages', () => {
  it.each(['/', '/sign-in', '/magic-link?token=abc', '/orgs/org_1/members', '/index.html'])(
    '%s answers index.html, revalidated, under the app’s CSP',
    async (url) => {
      const res = await t.request({ method: 'GET', url, headers: HTML });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).toBe(INDEX);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(csp(res)).toMatchObject({
        'script-src': "'self'",
        'style-src': "'self'",
        'connect-src': "'self'",
        'img-src': "'self' data:",
        'frame-ancestors': "'none'",
        'object-src': "'none'",
      });
    },
  );

  it('answers a conditional request with 304, and HEAD without a body', async () => {
    const first = await t.request({ method: 'GET', url: '/sign-in', headers: HTML });
    const again = await t.request({
      method: 'GET',
      url: '/sign-in',
      headers: { ...HTML, 'if-none-match': String(first.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    // A browser merges a 304's headers into its cached page: the policy must stay the app's.
    expect(csp(again)['script-src']).toBe("'self'");
    const head = await t.request({ method: 'HEAD', url: '/sign-in', headers: HTML });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-type']).toBe('text/html; charset=utf-8');
  });
});

describe('files', () => {
  it('a hashed asset is served with a year of immutable cache; other files are revalidated', async () => {
    const js = await t.request({ method: 'GET', url: '/assets/index-B7xQ2m_a.js' });
    expect(js.statusCode).toBe(200);
    expect(js.body).toBe(SCRIPT);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(csp(js)['default-src']).toBe("'none'");
    const robots = await t.request({ method: 'GET', url: '/robots.txt' });
    expect(robots.statusCode).toBe(200);
    expect(robots.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(robots.headers['cache-control']).toBe('no-cache');
  });

  it('a missing asset is a JSON 404, never index.html', async () => {
    expectJson404(await t.request({ method: 'GET', url: '/assets/index-0000000.js', headers: HTML }));
    expectJson404(await t.request({ method: 'GET', url: '/favicon.ico' }));
  });

  it('serves nothing outside the build, nor dotfiles', async () => {
    const outside = `${path.basename(dist)}-outside.txt`;
    for (const url of [
      `/../${outside}`,
      `/%2e%2e/${outside}`,
      `/assets/..%2f..%2f${outside}`,
      '/.env',
      '/assets/%2e%2e/.env',
    ]) {
      const res = await t.request({ method: 'GET', url });
      expectJson404(res);
      expect(res.body, url).not.toContain('SECRET=1');
    }
  });
});

describe('the API’s paths stay the API’s', () => {
  it('an unknown /api/v1 path is the JSON 404, even for a browser', async () => {
    for (const headers of [HTML, {}]) expectJson404(await t.request({ method: 'GET', url: '/api/v1/nope', headers }));
    expectJson404(await t.request({ method: 'GET', url: '/api/v1', headers: HTML }));
  });

  it('/docs is the docs UI; unknown /docs, /health and /metrics paths are JSON 404s', async () => {
    const docs = await t.request({ method: 'GET', url: '/docs/', headers: HTML });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toMatch(/swagger/i);
    expect(csp(docs)['style-src']).toContain("'unsafe-inline'");
    expect(json(await t.request({ method: 'GET', url: '/docs/json' })).openapi).toBe('3.1.0');
    expect(json(await t.request({ method: 'GET', url: '/health', headers: HTML }))).toEqual({ status: 'ok' });
    for (const url of ['/docs/nope', '/health/nope', '/ready/x', '/metrics/x'])
      expectJson404(await t.request({ method: 'GET', url, headers: HTML }));
  });

  it('other methods, requests that ask for JSON only or say nothing, and missing file names get the JSON 404', async () => {
    expectJson404(await t.request({ method: 'POST', url: '/sign-in', headers: HTML, payload: {} }));
    expectJson404(await t.request({ method: 'GET', url: '/sign-in', headers: { accept: 'application/json' } }));
    expectJson404(await t.request({ method: 'GET', url: '/sign-in' }));
    expectJson404(await t.request({ method: 'GET', url: '/favicon.ico', headers: { accept: '*/*' } }));
    expectJson404(await t.request({ method: 'GET', url: '/favicon.ico', headers: HTML }));
  });

  // A client of the API that lost its /api/v1 prefix must learn that the route does not exist, not
  // get a 200 page: only an Accept that names text/html (a browser's navigation) gets the app.
  it.each([
    ['curl: */*', { accept: '*/*' }],
    ['no Accept', {}],
    ['application/json', { accept: 'application/json' }],
    ['text/* and */*', { accept: 'text/*, */*;q=0.5' }],
    ['text/html refused (q=0)', { accept: 'application/json, text/html;q=0' }],
    ['a longer type that starts like it', { accept: 'text/htmlx' }],
  ])('a page asked for with %s is the JSON 404', async (_name, headers) => {
    for (const url of ['/sign-in', '/users/me', '/magic-link?token=abc', '/']) {
      expectJson404(await t.request({ method: 'GET', url, headers }));
      const head = await t.request({ method: 'HEAD', url, headers });
      expect(head.statusCode, url).toBe(404);
    }
    // Without a build too: the 503 page is for browsers only.
    expectJson404(await bare.request({ method: 'GET', url: '/sign-in', headers }));
  });

  it.each([
    ['a browser', HTML],
    ['text/html alone', { accept: 'text/html' }],
    ['text/html with parameters, in capitals', { accept: 'application/json;q=0.9, TEXT/HTML; charset=utf-8;q=0.5' }],
  ])('%s gets the page', async (_name, headers) => {
    const res = await t.request({ method: 'GET', url: '/sign-in', headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toBe(INDEX);
  });

  it('the build’s files go to any Accept (browsers fetch scripts, styles and images with */* or image/*)', async () => {
    for (const headers of [{ accept: '*/*' }, {}, { accept: 'image/avif,image/webp,*/*' }]) {
      const js = await t.request({ method: 'GET', url: '/assets/index-B7xQ2m_a.js', headers });
      expect(js.statusCode).toBe(200);
      expect(js.body).toBe(SCRIPT);
      expect((await t.request({ method: 'GET', url: '/robots.txt', headers })).statusCode).toBe(200);
      expect((await t.request({ method: 'GET', url: '/app-config.json', headers })).statusCode).toBe(200);
    }
  });
});

describe('/app-config.json', () => {
  it('tells the pages which sign-in methods this service offers (no provider configured here), revalidated', async () => {
    const res = await t.request({ method: 'GET', url: '/app-config.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(json(res)).toEqual({
      signIn: { password: true, magicLink: true, google: false, github: false },
      brand: { name: 'Tenantry', logoUrl: null, primaryColor: '#2f5bd3', supportEmail: null },
    });
  });

  it("carries the product's branding", async () => {
    const branded = await createTestApp({
      env: {
        APP_NAME: 'Acme Cloud',
        APP_LOGO_URL: 'https://cdn.acme.example/logo.png',
        APP_PRIMARY_COLOR: '#ff6600',
        APP_SUPPORT_EMAIL: 'help@acme.example',
      },
    });
    try {
      const res = await branded.request({ method: 'GET', url: '/app-config.json' });
      expect(json(res).brand).toEqual({
        name: 'Acme Cloud',
        logoUrl: 'https://cdn.acme.example/logo.png',
        primaryColor: '#ff6600',
        supportEmail: 'help@acme.example',
      });
    } finally {
      await branded.close();
    }
  });
});

describe('without a build', () => {
  it('a page answers 503 with how to build the web app; files and the API are as before', async () => {
    const res = await bare.request({ method: 'GET', url: '/sign-in', headers: HTML });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toMatch(/web app is not built/);
    expect(res.body).toContain('npm run web:build');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(csp(res)['script-src']).toBe("'self'");
    expectJson404(await bare.request({ method: 'GET', url: '/assets/index-B7xQ2m_a.js' }));
    expectJson404(await bare.request({ method: 'GET', url: '/api/v1/nope', headers: HTML }));
    expect((await bare.request({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });

  it('by default the build is web/dist/ of the repository', () => {
    expect(path.resolve(WEB_DIST)).toBe(path.resolve('web/dist'));
  });
});
