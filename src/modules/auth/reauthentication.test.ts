// Re-authentication before a new passkey (docs/api.md#re-authentication), over HTTP on a real
// database: the attack (a stolen token plants a passkey that signs in as both factors long after),
// the window of a session's sign-in, POST /auth/reauthenticate, and accounts without a password.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { login, PASSWORD, signedInUser, uniqueEmail } from '../../../test/factories.js';
import { bearer, refreshRaw } from '../../../test/fixtures/auth.js';
import { startOAuthServer, type OAuthTestServer } from '../../../test/oauth-server.js';
import { totpCode } from '../../../test/totp.js';
import { SoftAuthenticator } from '../../../test/webauthn.js';
import { expectError } from '../../../test/expect.js';

let t: TestApp;
let o: OAuthTestServer;
beforeAll(async () => {
  o = await startOAuthServer();
  t = await createTestApp({ env: { ...o.googleEnv } });
});
afterAll(async () => {
  await t?.close();
  await o?.close();
});

const WINDOW_MS = 600 * 1000;
const post = (url: string, payload: Record<string, unknown> | undefined, accessToken?: string) =>
  t.request({
    method: 'POST',
    url: `/api/v1${url}`,
    ...(payload ? { payload } : {}),
    headers: accessToken ? bearer(accessToken) : {},
  });
const options = (accessToken: string, proof?: Record<string, unknown>) =>
  post('/auth/passkeys/registration/options', proof, accessToken);
const reauthenticate = (accessToken: string, proof: Record<string, unknown>) =>
  post('/auth/reauthenticate', proof, accessToken);

/** A 401 that asks for a proof: the flag beside `error`, and details naming what to send. */
function expectReauth(res: LightMyRequestResponse, details?: RegExp) {
  const error = expectError(res, 401, 'AUTHENTICATION_ERROR');
  expect(json(res).reauthenticationRequired).toBe(true);
  if (details) expect(error.details).toMatch(details);
  return error;
}

/** A passkey registered with the options' answer (201 checked). */
async function register(accessToken: string, optionsRes: LightMyRequestResponse) {
  expect(optionsRes.statusCode, optionsRes.body).toBe(200);
  const authenticator = new SoftAuthenticator();
  const res = await post(
    '/auth/passkeys/registration/verify',
    { response: authenticator.create(json(optionsRes) as Parameters<SoftAuthenticator['create']>[0]) },
    accessToken,
  );
  expect(res.statusCode, res.body).toBe(201);
  return authenticator;
}

const challengesOf = async (userId: string) =>
  (
    await queryRows<{ n: number }>(
      t,
      sql`select count(*)::int as n from webauthn_challenges where user_id = ${userId} and kind = 'registration'`,
    )
  )[0]!.n;
const failuresOf = async (userId: string) =>
  (await queryRows<{ n: number }>(t, sql`select failed_login_attempts as n from users where id = ${userId}`))[0]!.n;

/** A social account (no password, no two-factor), signed in through the local Google server. */
let sub = 5000;
async function googleSignIn(email: string, id = String(++sub)) {
  const start = await t.request({ method: 'GET', url: '/api/v1/auth/oauth/google' });
  expect(start.statusCode, start.body).toBe(302);
  const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(start.headers['set-cookie']))![1]!;
  const back = await o.authorize(String(start.headers.location), { sub: id, email, emailVerified: true });
  const res = await t.request({
    method: 'GET',
    url: '/api/v1/auth/oauth/google/callback',
    query: { code: back.code, state: back.state },
    headers: { cookie: `tenantry_oauth_state=${cookie}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return {
    id,
    accessToken: json(res).accessToken as string,
    refreshToken: json(res).refreshToken as string,
    userId: json(res).user.id as string,
  };
}

describe('the attack: a stolen token adds a passkey', () => {
  it('a stolen access token, used after the window, adds no passkey without the password (and nothing is stored)', async () => {
    const victim = await signedInUser(t, 'reauth-victim');
    // The token leaks; eleven minutes later (the access token lives fifteen) the thief asks to add a passkey.
    t.clock.advance(11 * 60 * 1000);
    expectReauth(await options(victim.accessToken), /^password: /);
    expect(await challengesOf(victim.userId)).toBe(0);
    // A guess is a sign-in failure like any other.
    expectReauth(await options(victim.accessToken, { password: 'Guessed-Wrong-1' }));
    expect(await failuresOf(victim.userId)).toBe(1);
    expect(await challengesOf(victim.userId)).toBe(0);
  });

  it('a stolen refresh token renews the tokens, not the sign-in: its fresh access tokens add no passkey', async () => {
    const victim = await signedInUser(t, 'reauth-refresh');
    t.clock.advance(WINDOW_MS - 100 * 1000);
    const first = await refreshRaw(t, victim.refreshToken);
    expect(first.statusCode, first.body).toBe(200);
    t.clock.advance(200 * 1000);
    // Refreshed 200 s ago, signed in 700 s ago: the sign-in is what counts.
    expectReauth(await options(json(first).accessToken as string));
    const second = await refreshRaw(t, json(first).refreshToken as string);
    expect(second.statusCode, second.body).toBe(200);
    expectReauth(await options(json(second).accessToken as string));
    expect(await challengesOf(victim.userId)).toBe(0);
  });

  it('the passkey the thief could not add would have outlived a password change and "sign out everywhere"; one added with the password does', async () => {
    const owner = await signedInUser(t, 'reauth-owner');
    t.clock.advance(WINDOW_MS);
    expectReauth(await options(owner.accessToken));
    // The owner, who knows the password, adds one: it signs in (as both factors) after the owner's
    // own password change and sign-out everywhere, which is why a token alone must not add one.
    const key = await register(owner.accessToken, await options(owner.accessToken, { password: PASSWORD }));
    const changed = await t.request({
      method: 'PUT',
      url: '/api/v1/users/me/password',
      headers: bearer(owner.accessToken),
      payload: { currentPassword: PASSWORD, newPassword: 'Owner-Changed-2' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(
      (await t.request({ method: 'DELETE', url: '/api/v1/users/me/sessions', headers: bearer(owner.accessToken) }))
        .statusCode,
    ).toBe(200);
    const start = json(await post('/auth/passkeys/authentication/options', {}));
    const signIn = await post('/auth/passkeys/authentication/verify', {
      challengeId: start.challengeId,
      response: key.get(start.options),
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    expect(json(signIn).user.id).toBe(owner.userId);
  });
});

describe('the window after a sign-in', () => {
  it('a session that signed in within AUTH_REAUTH_WINDOW_S adds a passkey without its password; at the window’s end it must prove itself', async () => {
    const user = await signedInUser(t, 'reauth-window');
    t.clock.advance(WINDOW_MS - 1000);
    await register(user.accessToken, await options(user.accessToken));
    t.clock.advance(1000);
    expectReauth(await options(user.accessToken), /^password: confirm your password/);
  });

  it('a proof in the body serves that request only: it does not reopen the window', async () => {
    const user = await signedInUser(t, 'reauth-once');
    t.clock.advance(WINDOW_MS);
    expect((await options(user.accessToken, { password: PASSWORD })).statusCode).toBe(200);
    expectReauth(await options(user.accessToken));
  });

  it('a proof in the body is checked even inside the window: a wrong one answers 401', async () => {
    const user = await signedInUser(t, 'reauth-inside');
    expectReauth(await options(user.accessToken, { password: 'Wrong-Password-1' }));
    expect(await failuresOf(user.userId)).toBe(1);
    expect(await challengesOf(user.userId)).toBe(0);
  });

  it('refuses a proof of the wrong kind or an unknown field (400) and a caller without a token (401), storing no challenge', async () => {
    const user = await signedInUser(t, 'reauth-bad');
    t.clock.advance(WINDOW_MS);
    expectError(await options(user.accessToken, { twoFactorCode: '123456' }), 400, 'VALIDATION_ERROR');
    expectError(await options(user.accessToken, { password: PASSWORD, remember: true }), 400, 'VALIDATION_ERROR');
    expectError(await options(user.accessToken, { password: 42 }), 400, 'VALIDATION_ERROR');
    const anonymous = expectError(
      await post('/auth/passkeys/registration/options', { password: PASSWORD }),
      401,
      'AUTHENTICATION_ERROR',
    );
    expect(anonymous.message).toBe('Authentication required');
    expect(await challengesOf(user.userId)).toBe(0);
    expect(await failuresOf(user.userId)).toBe(0);
  });
});

describe('POST /auth/reauthenticate', () => {
  it('reopens the window for this session (its refreshes included), not for the account’s other sessions', async () => {
    const user = await signedInUser(t, 'reauth-route');
    const other = await login(t, user.email);
    t.clock.advance(WINDOW_MS + 1000);
    const res = await reauthenticate(user.accessToken, { password: PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    const now = t.clock.now().getTime();
    expect(json(res)).toEqual({
      authenticatedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + WINDOW_MS).toISOString(),
    });
    await register(user.accessToken, await options(user.accessToken));
    expectReauth(await options(other.accessToken));
    // The same session's refreshed tokens share its re-authentication…
    t.clock.advance(WINDOW_MS - 1000);
    const refreshed = await refreshRaw(t, user.refreshToken);
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect((await options(json(refreshed).accessToken as string)).statusCode).toBe(200);
    // …and its end.
    t.clock.advance(1000);
    expectReauth(await options(json(refreshed).accessToken as string));
  });

  it('a wrong password answers 401 with the flag and counts toward the lockout: the 5th locks, then even the right one gets 423', async () => {
    const user = await signedInUser(t, 'reauth-lock');
    t.clock.advance(WINDOW_MS);
    for (let i = 1; i <= 5; i++) {
      const error = expectReauth(await reauthenticate(user.accessToken, { password: `Wrong-Password-${i}` }));
      expect(error.message).toBe('Password is incorrect');
    }
    expect(await failuresOf(user.userId)).toBe(5);
    const locked = await reauthenticate(user.accessToken, { password: PASSWORD });
    expectError(locked, 423, 'ACCOUNT_LOCKED');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expectError(await options(user.accessToken, { password: PASSWORD }), 423, 'ACCOUNT_LOCKED');
    expectReauth(await options(user.accessToken));
    const [row] = await queryRows<{ authenticated_at: Date | string; created_at: Date | string }>(
      t,
      sql`select authenticated_at, created_at from sessions where user_id = ${user.userId}`,
    );
    expect(new Date(row!.authenticated_at).getTime()).toBe(new Date(row!.created_at).getTime());
  });

  it('refuses a missing proof (400), an unknown field (400) and a caller without a token (401)', async () => {
    const user = await signedInUser(t, 'reauth-route-bad');
    expectError(await reauthenticate(user.accessToken, {}), 400, 'VALIDATION_ERROR');
    expectError(await reauthenticate(user.accessToken, { password: PASSWORD, extra: 1 }), 400, 'VALIDATION_ERROR');
    expectError(await post('/auth/reauthenticate', { password: PASSWORD }), 401, 'AUTHENTICATION_ERROR');
    expect(await failuresOf(user.userId)).toBe(0);
  });

  it('a revoked session cannot re-authenticate (401)', async () => {
    const user = await signedInUser(t, 'reauth-revoked');
    expect((await post('/auth/logout', undefined, user.accessToken)).statusCode).toBe(200);
    expectError(await reauthenticate(user.accessToken, { password: PASSWORD }), 401, 'AUTHENTICATION_ERROR');
  });
});

describe('accounts without a password', () => {
  it('with two-factor: a current code is the proof, in the body or through POST /auth/reauthenticate; a wrong one counts', async () => {
    const user = await signedInUser(t, 'reauth-2fa');
    const setup = await post('/auth/two-factor/setup', { password: PASSWORD }, user.accessToken);
    const secret = json(setup).secret as string;
    expect(
      (await post('/auth/two-factor/verify', { code: totpCode(secret, t.clock.now()) }, user.accessToken)).statusCode,
    ).toBe(200);
    // As an account made by a social sign-in is: no password.
    await t.deps.db.execute(sql`update users set password_hash = null where id = ${user.userId}`);
    await t.deps.userCache.changed(user.userId);
    t.clock.advance(WINDOW_MS);
    expectReauth(await options(user.accessToken), /^twoFactorCode: /);
    expectError(await options(user.accessToken, { password: PASSWORD }), 400, 'VALIDATION_ERROR');
    expectReauth(await options(user.accessToken, { twoFactorCode: '000000' }));
    expect(await failuresOf(user.userId)).toBe(1);
    await register(
      user.accessToken,
      await options(user.accessToken, { twoFactorCode: totpCode(secret, t.clock.now()) }),
    );
    // The code was spent: the same one proves nothing again.
    expectReauth(await reauthenticate(user.accessToken, { twoFactorCode: totpCode(secret, t.clock.now()) }));
    t.clock.advance(30 * 1000);
    expect(
      (await reauthenticate(user.accessToken, { twoFactorCode: totpCode(secret, t.clock.now()) })).statusCode,
    ).toBe(200);
    expect((await options(user.accessToken)).statusCode).toBe(200);
  });

  it('without two-factor (a social sign-in): only the window after a fresh sign-in counts; re-authentication cannot help', async () => {
    const email = uniqueEmail('reauth-social');
    const first = await googleSignIn(email);
    await register(first.accessToken, await options(first.accessToken));
    t.clock.advance(WINDOW_MS);
    const refreshed = await refreshRaw(t, first.refreshToken);
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const accessToken = json(refreshed).accessToken as string;
    expectReauth(await options(accessToken), /sign in again/);
    expectReauth(await reauthenticate(accessToken, { password: 'Anything-at-all-1' }), /sign in again/);
    expectReauth(await options(accessToken, { twoFactorCode: '123456' }), /sign in again/);
    expect(await failuresOf(first.userId)).toBe(0);
    // A new sign-in with the provider is the proof.
    const again = await googleSignIn(email, first.id);
    expect(again.userId).toBe(first.userId);
    await register(again.accessToken, await options(again.accessToken));
  });
});
