// Attack tests (outside review): cookie sessions (CSRF) and the social sign-in hand-off.
import { describe, expect, it } from 'vitest';
import { json } from './harness.js';
import { signedInUser, uniqueEmail, PASSWORD } from './factories.js';
import { callback, identity, o, t, useOAuthApp } from './fixtures/oauth.js';

useOAuthApp();

async function cookieLogin() {
  const u = await signedInUser(t, 'ck');
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { email: u.email, password: PASSWORD },
    headers: { 'x-session-mode': 'cookie', origin: 'http://app.test' },
  });
  expect(res.statusCode, res.body).toBe(200);
  const cookie = /tenantry_refresh=([^;]+)/.exec(String(res.headers['set-cookie']))![1]!;
  return { u, cookie, accessToken: json(res).accessToken as string };
}

const refreshWith = (cookie: string, headers: Record<string, string>) =>
  t.request({
    method: 'POST',
    url: '/api/v1/auth/refresh',
    headers: { cookie: `tenantry_refresh=${cookie}`, ...headers },
  });

describe('cookie-mode CSRF', () => {
  const bad: Array<[string, Record<string, string>]> = [
    ['foreign Origin', { 'x-session-mode': 'cookie', origin: 'http://evil.test' }],
    ['Origin: null', { 'x-session-mode': 'cookie', origin: 'null' }],
    ['look-alike Origin (suffix)', { 'x-session-mode': 'cookie', origin: 'http://app.test.evil.test' }],
    ['look-alike Origin (userinfo)', { 'x-session-mode': 'cookie', origin: 'http://app.test@evil.test' }],
    ['Origin with trailing slash', { 'x-session-mode': 'cookie', origin: 'http://app.test/' }],
    ['Origin other scheme', { 'x-session-mode': 'cookie', origin: 'https://app.test' }],
    [
      'cookie without X-Session-Mode (a plain cross-site form)',
      { origin: 'http://app.test', 'content-type': 'application/x-www-form-urlencoded' },
    ],
    ['X-Session-Mode other value', { 'x-session-mode': 'cookies', origin: 'http://app.test' }],
  ];
  for (const [name, headers] of bad) {
    it(`refresh ignores the cookie: ${name}`, async () => {
      const { cookie } = await cookieLogin();
      const res = await refreshWith(cookie, headers);
      expect([400, 401, 415]).toContain(res.statusCode);
      expect(res.headers['set-cookie'] ?? '').not.toMatch(/tenantry_refresh=[^;]/);
      expect(res.body).not.toMatch(/accessToken/);
    });
  }

  it('a foreign-origin logout does not end the session', async () => {
    const { cookie, accessToken } = await cookieLogin();
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { cookie: `tenantry_refresh=${cookie}`, 'x-session-mode': 'cookie', origin: 'http://evil.test' },
    });
    expect(res.statusCode).toBe(401);
    const me = await t.request({
      method: 'GET',
      url: '/api/v1/users/me',
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(me.statusCode).toBe(200);
  });

  it('a CORS preflight from a foreign origin gets no allow headers', async () => {
    const res = await t.request({
      method: 'OPTIONS',
      url: '/api/v1/auth/refresh',
      headers: {
        origin: 'http://evil.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-session-mode',
      },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-headers']).toBeUndefined();
  });

  it('the cookie is HttpOnly, SameSite=Strict and scoped to /api/v1/auth', async () => {
    const u = await signedInUser(t, 'ck2');
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: u.email, password: PASSWORD },
      headers: { 'x-session-mode': 'cookie' },
    });
    const sc = String(res.headers['set-cookie']);
    expect(sc).toMatch(/HttpOnly/);
    expect(sc).toMatch(/SameSite=Strict/);
    expect(sc).toMatch(/Path=\/api\/v1\/auth/);
    expect(json(res).refreshToken).toBeUndefined();
  });
});

async function startHandoff(redirectTo: string) {
  return t.request({ method: 'GET', url: '/api/v1/auth/oauth/google', query: { redirectTo } });
}

describe('hand-off redirectTo', () => {
  const evil = [
    'http://evil.test/',
    'https://app.test/',
    'http://app.test.evil.test/',
    'http://app.test@evil.test/',
    'http://evil.test@app.test/',
    'http://user:pw@app.test/',
    '//evil.test/',
    '/\\evil.test/',
    '\\\\evil.test',
    'javascript:alert(1)//http://app.test/',
    'data:text/html,<script>alert(1)</script>',
    'http://app.test:8080/',
    'http:evil.test',
    'http://evil.test%2F@app.test/',
    'http://evil.test\\@app.test/',
    '',
    ' http://evil.test/',
    'http://app.test%2eevil.test/',
    'http://xn--pp-test/',
  ];
  for (const r of evil) {
    it(`refuses or stays on app.test: ${JSON.stringify(r)}`, async () => {
      const res = await startHandoff(r);
      if (res.statusCode === 302) {
        // Accepted: the stored target must be on APP_ORIGIN; finish a flow and check the final Location.
        const url = new URL(res.headers.location as string);
        const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(res.headers['set-cookie']))![1]!;
        const back = await o.authorize(url.toString(), identity(uniqueEmail('ho-evil')));
        const cb = await callback('google', { code: back.code, state: back.state }, cookie);
        expect(cb.statusCode).toBe(302);
        const loc = new URL(cb.headers.location as string);
        expect(loc.origin).toBe('http://app.test');
        expect(loc.username + loc.password).toBe('');
      } else {
        expect(res.statusCode, res.body).toBe(400);
      }
    });
  }
});

async function handoffCode() {
  const res = await startHandoff('http://app.test/auth/callback');
  expect(res.statusCode).toBe(302);
  const url = new URL(res.headers.location as string);
  const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(res.headers['set-cookie']))![1]!;
  const back = await o.authorize(url.toString(), identity(uniqueEmail('ho-code')));
  const cb = await callback('google', { code: back.code, state: back.state }, cookie);
  return new URLSearchParams(new URL(cb.headers.location as string).hash.slice(1)).get('code')!;
}
const exchange = (code: string) => t.request({ method: 'POST', url: '/api/v1/auth/oauth/exchange', payload: { code } });

describe('hand-off code', () => {
  it('expires after 60 s', async () => {
    const code = await handoffCode();
    t.clock.advance(60_001);
    expect((await exchange(code)).statusCode).toBe(400);
  });
  it('cannot be replayed', async () => {
    const code = await handoffCode();
    expect((await exchange(code)).statusCode).toBe(200);
    expect((await exchange(code)).statusCode).toBe(400);
  });
  it('the provider code cannot be replayed at the callback with a second state (flow theft)', async () => {
    const res = await startHandoff('http://app.test/auth/callback');
    const url = new URL(res.headers.location as string);
    const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(res.headers['set-cookie']))![1]!;
    const back = await o.authorize(url.toString(), identity(uniqueEmail('ho-theft')));
    // A callback with the right state but no cookie (another browser): refused.
    const noCookie = await callback('google', { code: back.code, state: back.state });
    expect(
      noCookie.statusCode === 400 || (noCookie.statusCode === 302 && /error=/.test(String(noCookie.headers.location))),
    ).toBe(true);
    expect(String(noCookie.headers.location ?? '')).not.toMatch(/code=/);
    // The browser that started the flow still finishes it.
    const own = await callback('google', { code: back.code, state: back.state }, cookie);
    expect(String(own.headers.location)).toMatch(/#code=/);
  });
  it('a case-variant or whitespace code does not match', async () => {
    const code = await handoffCode();
    expect((await exchange(code.toUpperCase())).statusCode).toBe(400);
    expect((await exchange(` ${code}`)).statusCode).toBe(400);
    expect((await exchange(code)).statusCode).toBe(200);
  });
});
