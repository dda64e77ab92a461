// Cookie mode (docs/api.md#cookie-mode): with `X-Session-Mode: cookie` the refresh token lives in the
// HttpOnly tenantry_refresh cookie, never in the body; refresh and logout read it back only in cookie
// mode and from a trusted Origin; rotation and reuse detection work as with body tokens.
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createTestApp, json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { registerUser, uniqueEmail, verifyEmailOf } from '../../../test/factories.js';
import { bearer, decodeJwt, getMe, requestMagicLink } from '../../../test/fixtures/auth.js';
import { expectError } from '../../../test/expect.js';

useApp();

const MODE = { 'x-session-mode': 'cookie' };
const APP = 'http://app.test'; // the harness's APP_ORIGIN
const SET = /^tenantry_refresh=([\w.-]+); HttpOnly; SameSite=Strict; Path=\/api\/v1\/auth; Max-Age=604800$/;
const CLEARED = 'tenantry_refresh=; HttpOnly; SameSite=Strict; Path=/api/v1/auth; Max-Age=0';

/** The refresh token a response set in the cookie (the exact attributes checked). */
function cookieOf(res: LightMyRequestResponse): string {
  const header = String(res.headers['set-cookie']);
  expect(header).toMatch(SET);
  return SET.exec(header)![1]!;
}

const withCookie = (token: string, headers: Record<string, string> = {}) => ({
  cookie: `theme=dark; tenantry_refresh=${token}`,
  ...headers,
});
const refresh = (headers: Record<string, string>, payload?: Record<string, unknown>) =>
  t.request({ method: 'POST', url: '/api/v1/auth/refresh', headers, ...(payload ? { payload } : {}) });
const logout = (headers: Record<string, string>) => t.request({ method: 'POST', url: '/api/v1/auth/logout', headers });

/** A verified account signed in in cookie mode: the access token (body) and the refresh token (cookie). */
async function cookieSession(label: string) {
  const { email, password } = await registerUser(t, uniqueEmail(label));
  await verifyEmailOf(t, email);
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { email, password },
    headers: { ...MODE, origin: APP },
  });
  expect(res.statusCode, res.body).toBe(200);
  return { email, res, accessToken: json(res).accessToken as string, cookie: cookieOf(res) };
}

describe('signing in', () => {
  it('login sets the cookie with the exact attributes and leaves the refresh token out of the body', async () => {
    const s = await cookieSession('ck-login');
    expect(Object.keys(json(s.res)).sort()).toEqual(['accessToken', 'expiresIn', 'organizationId', 'user']);
    expect(decodeJwt(s.cookie).payload).toMatchObject({ sessionId: expect.stringMatching(/^ses_/) });
    expect((await getMe(t, s.accessToken)).statusCode).toBe(200);
  });

  it('without the header the body carries the token as before and no cookie is set', async () => {
    const { email, password } = await registerUser(t, uniqueEmail('ck-plain'));
    await verifyEmailOf(t, email);
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
    expect(json(res).refreshToken).toEqual(expect.any(String));
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('a magic link sign-in in cookie mode sets the cookie too', async () => {
    const { email } = await registerUser(t, uniqueEmail('ck-magic'));
    await verifyEmailOf(t, email);
    const { token } = await requestMagicLink(t, email);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/magic-link/verify',
      payload: { token },
      headers: MODE,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).refreshToken).toBeUndefined();
    cookieOf(res);
  });
});

describe('refresh with the cookie', () => {
  it('rotates: a new access token in the body, a new refresh token in the cookie', async () => {
    const s = await cookieSession('ck-rotate');
    for (const headers of [{ ...MODE, origin: APP }, { ...MODE, origin: 'http://localhost:3000' }, MODE]) {
      const before = s.cookie;
      const res = await refresh(withCookie(before, headers));
      expect(res.statusCode, res.body).toBe(200);
      expect(Object.keys(json(res)).sort()).toEqual(['accessToken', 'expiresIn', 'organizationId']);
      s.cookie = cookieOf(res);
      expect(s.cookie).not.toBe(before);
      expect((await getMe(t, json(res).accessToken)).statusCode).toBe(200);
    }
  });

  it('a body token in cookie mode is used and answered in the cookie', async () => {
    const s = await cookieSession('ck-body');
    const res = await refresh(MODE, { refreshToken: s.cookie });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).refreshToken).toBeUndefined();
    cookieOf(res);
  });

  it('replaying the old cookie after the grace is reuse: the whole session is revoked', async () => {
    const s = await cookieSession('ck-reuse');
    const next = cookieOf(await refresh(withCookie(s.cookie, MODE)));
    t.clock.advance((t.deps.config.auth.refreshReuseGraceS + 1) * 1000);
    expectError(await refresh(withCookie(s.cookie, MODE)), 401, 'AUTHENTICATION_ERROR');
    expectError(await refresh(withCookie(next, MODE)), 401, 'AUTHENTICATION_ERROR');
    expectError(await getMe(t, s.accessToken), 401, 'AUTHENTICATION_ERROR');
  });

  it('a cookie without X-Session-Mode: cookie is ignored (401), and the session is untouched', async () => {
    const s = await cookieSession('ck-noheader');
    for (const headers of [{}, { origin: APP }, { 'x-session-mode': 'body' }] as Array<Record<string, string>>) {
      const res = await refresh(withCookie(s.cookie, headers));
      expect(expectError(res, 401, 'AUTHENTICATION_ERROR').message).toBe('Refresh token required');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect((await refresh(withCookie(s.cookie, MODE))).statusCode).toBe(200);
  });

  it('a cookie from a foreign Origin is ignored (401), and the session is untouched', async () => {
    const s = await cookieSession('ck-origin');
    for (const origin of [
      'http://evil.test',
      'http://app.test.evil.test',
      'https://app.test',
      'http://app.test:8080',
      'null',
    ]) {
      expectError(await refresh(withCookie(s.cookie, { ...MODE, origin })), 401, 'AUTHENTICATION_ERROR');
    }
    expect((await refresh(withCookie(s.cookie, { ...MODE, origin: APP }))).statusCode).toBe(200);
  });

  it('the page of the host the request was sent to counts (the app opened as 127.0.0.1 rather than APP_ORIGIN); a host that only differs by port does not', async () => {
    const s = await cookieSession('ck-host');
    const host = { ...MODE, host: '127.0.0.1:3000' };
    const ok = await refresh(withCookie(s.cookie, { ...host, origin: 'http://127.0.0.1:3000' }));
    expect(ok.statusCode, ok.body).toBe(200);
    const cookie = /tenantry_refresh=([^;]+)/.exec(String(ok.headers['set-cookie']))![1]!;
    for (const origin of ['http://127.0.0.1:3001', 'http://127.0.0.1', 'http://evil.test']) {
      expectError(await refresh(withCookie(cookie, { ...host, origin })), 401, 'AUTHENTICATION_ERROR');
    }
  });

  it('cookie mode without a cookie is 401; no token and no cookie mode stays 400', async () => {
    expectError(await refresh(MODE), 401, 'AUTHENTICATION_ERROR');
    expectError(await refresh({}, {}), 400, 'VALIDATION_ERROR');
  });
});

describe('logout and sign-out everywhere', () => {
  it('logout with the cookie alone ends the session and clears the cookie', async () => {
    const s = await cookieSession('ck-logout');
    const res = await logout(withCookie(s.cookie, { ...MODE, origin: APP }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['set-cookie']).toBe(CLEARED);
    expectError(await getMe(t, s.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await refresh(withCookie(s.cookie, MODE)), 401, 'AUTHENTICATION_ERROR');
  });

  it('logout with the access token in cookie mode clears the cookie as well', async () => {
    const s = await cookieSession('ck-logout-bearer');
    const res = await logout({ ...bearer(s.accessToken), ...MODE });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['set-cookie']).toBe(CLEARED);
    expectError(await refresh(withCookie(s.cookie, MODE)), 401, 'AUTHENTICATION_ERROR');
  });

  it('logout with a cookie but no header, or from a foreign Origin, is 401 and ends nothing', async () => {
    const s = await cookieSession('ck-logout-csrf');
    for (const headers of [{}, { origin: APP }, { ...MODE, origin: 'http://evil.test' }] as Array<
      Record<string, string>
    >) {
      const res = await logout(withCookie(s.cookie, headers));
      expectError(res, 401, 'AUTHENTICATION_ERROR');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect((await getMe(t, s.accessToken)).statusCode).toBe(200);
  });

  it('logout with a body refresh token (no access token) works outside cookie mode too', async () => {
    const { email, password } = await registerUser(t, uniqueEmail('ck-logout-body'));
    await verifyEmailOf(t, email);
    const body = json(await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } }));
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/logout',
      payload: { refreshToken: body.refreshToken },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    expectError(await getMe(t, body.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(
      await t.request({ method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken: 'not.a.jwt' } }),
      401,
      'AUTHENTICATION_ERROR',
    );
  });

  it('DELETE /users/me/sessions in cookie mode clears the cookie; without the header it sets none', async () => {
    const s = await cookieSession('ck-everywhere');
    const plain = await t.request({
      method: 'DELETE',
      url: '/api/v1/users/me/sessions',
      headers: bearer((await cookieSession('ck-everywhere-2')).accessToken),
    });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['set-cookie']).toBeUndefined();
    const res = await t.request({
      method: 'DELETE',
      url: '/api/v1/users/me/sessions',
      headers: { ...bearer(s.accessToken), ...MODE },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['set-cookie']).toBe(CLEARED);
    expectError(await refresh(withCookie(s.cookie, MODE)), 401, 'AUTHENTICATION_ERROR');
  });
});

describe('over https', () => {
  it('the cookie is Secure when PUBLIC_API_URL is https, and that origin may use it', async () => {
    const secure = await createTestApp({ env: { PUBLIC_API_URL: 'https://api.test' } });
    try {
      const { email, password } = await registerUser(secure, uniqueEmail('ck-https'));
      await verifyEmailOf(secure, email);
      const res = await secure.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email, password },
        headers: MODE,
      });
      const header = String(res.headers['set-cookie']);
      expect(header).toMatch(
        /^tenantry_refresh=[\w.-]+; HttpOnly; SameSite=Strict; Path=\/api\/v1\/auth; Max-Age=604800; Secure$/,
      );
      const token = /^tenantry_refresh=([^;]+)/.exec(header)![1]!;
      const again = await secure.request({
        method: 'POST',
        url: '/api/v1/auth/refresh',
        headers: withCookie(token, { ...MODE, origin: 'https://api.test' }),
      });
      expect(again.statusCode, again.body).toBe(200);
      const out = await secure.request({
        method: 'POST',
        url: '/api/v1/auth/logout',
        headers: { ...bearer(json(again).accessToken), ...MODE },
      });
      expect(out.headers['set-cookie']).toBe(`${CLEARED}; Secure`);
    } finally {
      await secure.close();
    }
  });
});
