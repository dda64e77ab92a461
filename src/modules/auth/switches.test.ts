// Sign-in method switches (docs/api.md#sign-in-method-switches): each method can be switched off on its own;
// its routes then answer 404 and are absent from the OpenAPI document, while the others stay.
// Each switched app shares the database of a fully switched-on app, which makes the accounts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { login, PASSWORD, registerUser, signedInUser, uniqueEmail } from '../../../test/factories.js';
import { bearer, loginRaw } from '../../../test/fixtures/auth.js';
import { totpCode } from '../../../test/totp.js';
import { expectError } from '../../../test/expect.js';
import { googleEnv } from '../../../test/oauth-server.js';

let base: TestApp;
beforeAll(async () => {
  base = await createTestApp({ env: GOOGLE });
});
afterAll(async () => {
  await base?.close();
});

// Google configured, its endpoints on a dead port: nothing here reaches them.
const GOOGLE = googleEnv('http://127.0.0.1:9');

interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  payload?: Record<string, unknown>;
  auth?: boolean;
}

/** A second instance on the base app's database, with some switches off. */
const switched = (env: Record<string, string>) =>
  createTestApp({ env: { ...GOOGLE, ...env }, database: base.database, clock: base.clock });

async function docPaths(app: TestApp): Promise<string[]> {
  const res = await app.request({ method: 'GET', url: '/docs/json' });
  expect(res.statusCode).toBe(200);
  return Object.keys(json(res).paths as Record<string, unknown>);
}

/** Which of `calls` answer 404 NOT_FOUND on `app`; the rest must not. */
async function expectRoutes(app: TestApp, accessToken: string, off: Call[], on: Call[]) {
  for (const c of off) {
    const res = await app.request({
      method: c.method,
      url: `/api/v1${c.url}`,
      payload: c.payload,
      headers: c.auth ? bearer(accessToken) : {},
    });
    expect(res.statusCode, `${c.method} ${c.url}: ${res.body}`).toBe(404);
    expect(json(res).error.code).toBe('NOT_FOUND');
  }
  for (const c of on) {
    const res = await app.request({
      method: c.method,
      url: `/api/v1${c.url}`,
      payload: c.payload,
      headers: c.auth ? bearer(accessToken) : {},
    });
    expect(res.statusCode, `${c.method} ${c.url}: ${res.body}`).not.toBe(404);
  }
  const paths = await docPaths(app);
  for (const c of off) expect(paths, `${c.url} in the OpenAPI document`).not.toContain(`/api/v1${docPath(c.url)}`);
  for (const c of on) expect(paths, `${c.url} in the OpenAPI document`).toContain(`/api/v1${docPath(c.url)}`);
}

const docPath = (url: string) => url.replace(/^\/auth\/oauth\/google/, '/auth/oauth/{provider}');

const PASSWORD_ROUTES: Call[] = [
  { method: 'POST', url: '/auth/login', payload: { email: 'a@example.com', password: PASSWORD } },
  { method: 'POST', url: '/auth/register', payload: { email: 'a@example.com', password: PASSWORD } },
  { method: 'POST', url: '/auth/password/forgot', payload: { email: 'a@example.com' } },
  { method: 'POST', url: '/auth/password/reset', payload: { token: 'x', newPassword: PASSWORD } },
  {
    method: 'PUT',
    url: '/users/me/password',
    payload: { currentPassword: 'Not-The-Password-1', newPassword: 'Another-Pass-2' },
    auth: true,
  },
];
const MAGIC_ROUTES: Call[] = [
  { method: 'POST', url: '/auth/magic-link', payload: { email: 'a@example.com' } },
  { method: 'POST', url: '/auth/magic-link/verify', payload: { token: 'x' } },
];
const TWO_FACTOR_ROUTES: Call[] = [
  { method: 'POST', url: '/auth/two-factor/setup', payload: { password: PASSWORD }, auth: true },
  { method: 'POST', url: '/auth/two-factor/verify', payload: { code: '123456' }, auth: true },
  { method: 'POST', url: '/auth/two-factor/disable', payload: { password: PASSWORD, code: '123456' }, auth: true },
  { method: 'POST', url: '/auth/two-factor/login', payload: { twoFactorToken: 'x', code: '123456' } },
];
const SESSION_ROUTES: Call[] = [{ method: 'GET', url: '/users/me/sessions', auth: true }];
const GOOGLE_ROUTES: Call[] = [
  { method: 'GET', url: '/auth/oauth/google' },
  { method: 'GET', url: '/auth/oauth/google/callback' },
];
const ALWAYS: Call[] = [
  { method: 'GET', url: '/users/me', auth: true },
  { method: 'POST', url: '/auth/verify-email', payload: { token: 'x' } },
  { method: 'POST', url: '/auth/refresh', payload: { refreshToken: 'x' } },
];

describe('all methods on (the default)', () => {
  it('routes every sign-in method and documents it', async () => {
    const user = await signedInUser(base, 'sw-all');
    await expectRoutes(
      base,
      user.accessToken,
      [],
      [...PASSWORD_ROUTES, ...MAGIC_ROUTES, ...TWO_FACTOR_ROUTES, ...SESSION_ROUTES, ...GOOGLE_ROUTES, ...ALWAYS],
    );
  });
});

describe('switches', () => {
  it('AUTH_PASSWORD_ENABLED=false: login, register, password forgot/reset and change answer 404', async () => {
    const user = await signedInUser(base, 'sw-password');
    const app = await switched({ AUTH_PASSWORD_ENABLED: 'false' });
    try {
      await expectRoutes(app, user.accessToken, PASSWORD_ROUTES, [
        ...MAGIC_ROUTES,
        ...TWO_FACTOR_ROUTES,
        ...SESSION_ROUTES,
        ...GOOGLE_ROUTES,
        ...ALWAYS,
      ]);
    } finally {
      await app.close();
    }
  });

  it('AUTH_MAGIC_LINK_ENABLED=false: /auth/magic-link and its verify answer 404', async () => {
    const user = await signedInUser(base, 'sw-magic');
    const app = await switched({ AUTH_MAGIC_LINK_ENABLED: 'false' });
    try {
      await expectRoutes(app, user.accessToken, MAGIC_ROUTES, [
        ...PASSWORD_ROUTES,
        ...TWO_FACTOR_ROUTES,
        ...SESSION_ROUTES,
        ...GOOGLE_ROUTES,
        ...ALWAYS,
      ]);
    } finally {
      await app.close();
    }
  });

  it('AUTH_TWO_FACTOR_ENABLED=false: /auth/two-factor/* answer 404', async () => {
    const user = await signedInUser(base, 'sw-2fa');
    const app = await switched({ AUTH_TWO_FACTOR_ENABLED: 'false' });
    try {
      await expectRoutes(app, user.accessToken, TWO_FACTOR_ROUTES, [
        ...PASSWORD_ROUTES,
        ...MAGIC_ROUTES,
        ...SESSION_ROUTES,
        ...GOOGLE_ROUTES,
        ...ALWAYS,
      ]);
    } finally {
      await app.close();
    }
  });

  it('AUTH_TWO_FACTOR_ENABLED=false stops asking for codes; switching it back on restores them', async () => {
    const user = await signedInUser(base, 'sw-2fa-login');
    const setup = json(
      await base.request({
        method: 'POST',
        url: '/api/v1/auth/two-factor/setup',
        payload: { password: PASSWORD },
        headers: user.auth,
      }),
    );
    const code = totpCode(setup.secret, base.clock.now());
    expect(
      (
        await base.request({
          method: 'POST',
          url: '/api/v1/auth/two-factor/verify',
          payload: { code },
          headers: user.auth,
        })
      ).statusCode,
    ).toBe(200);
    expect(json(await loginRaw(base, user.email, PASSWORD)).requiresTwoFactor).toBe(true);
    const app = await switched({ AUTH_TWO_FACTOR_ENABLED: 'false' });
    try {
      expect((await loginRaw(app, user.email, PASSWORD)).statusCode).toBe(200);
    } finally {
      await app.close();
    }
    expect(json(await loginRaw(base, user.email, PASSWORD)).requiresTwoFactor).toBe(true);
  });

  it('AUTH_SESSION_MANAGEMENT_ENABLED=false: the session routes answer 404', async () => {
    const user = await signedInUser(base, 'sw-sessions');
    const app = await switched({ AUTH_SESSION_MANAGEMENT_ENABLED: 'false' });
    try {
      const more: Call[] = [
        { method: 'DELETE', url: '/users/me/sessions', auth: true },
        { method: 'DELETE', url: '/users/sessions', auth: true },
      ];
      await expectRoutes(
        app,
        user.accessToken,
        [...SESSION_ROUTES, ...more],
        [...PASSWORD_ROUTES, ...MAGIC_ROUTES, ...TWO_FACTOR_ROUTES, ...GOOGLE_ROUTES, ...ALWAYS],
      );
      expect((await docPaths(app)).some((p) => p.includes('sessions'))).toBe(false);
      // Nothing was revoked by those calls.
      expect(
        (await app.request({ method: 'GET', url: '/api/v1/users/me', headers: bearer(user.accessToken) })).statusCode,
      ).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('AUTH_GOOGLE_ENABLED=false with Google configured: both Google routes answer 404', async () => {
    const user = await signedInUser(base, 'sw-google');
    const app = await switched({ AUTH_GOOGLE_ENABLED: 'false' });
    try {
      await expectRoutes(app, user.accessToken, GOOGLE_ROUTES, [
        ...PASSWORD_ROUTES,
        ...MAGIC_ROUTES,
        ...TWO_FACTOR_ROUTES,
        ...SESSION_ROUTES,
        ...ALWAYS,
      ]);
      expectError(
        await app.request({
          method: 'GET',
          url: '/api/v1/auth/oauth/google/callback',
          query: { code: 'c', state: 's' },
          headers: { cookie: 'tenantry_oauth_state=s' },
        }),
        404,
        'NOT_FOUND',
      );
    } finally {
      await app.close();
    }
  });

  it('AUTH_REQUIRE_EMAIL_VERIFICATION=false: an unverified account signs in', async () => {
    const { email } = await registerUser(base, uniqueEmail('sw-unverified'));
    expectError(await loginRaw(base, email, PASSWORD), 403, 'EMAIL_NOT_VERIFIED');
    const app = await switched({ AUTH_REQUIRE_EMAIL_VERIFICATION: 'false' });
    try {
      const tokens = await login(app, email);
      expect(tokens.user).toMatchObject({ email, emailVerified: null });
    } finally {
      await app.close();
    }
  });
});
