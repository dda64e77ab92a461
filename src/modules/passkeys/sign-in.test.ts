// Signing in with a passkey over HTTP, with a software authenticator (test/webauthn.ts): it answers as
// POST /auth/login does.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from '../../../test/harness.js';
import { signedInUser } from '../../../test/factories.js';
import { bearer, getMe } from '../../../test/fixtures/auth.js';
import { totpCode } from '../../../test/totp.js';
import {
  authenticationOptions,
  listPasskeys,
  post,
  registerPasskey,
  signInWith,
  t,
  usePasskeyApp,
} from '../../../test/fixtures/passkeys.js';
import { expectError } from '../../../test/expect.js';

usePasskeyApp();

const verify = (challengeId: string, response: unknown, headers: Record<string, string> = {}) =>
  post('/auth/passkeys/authentication/verify', { challengeId, response }, undefined, headers);

/** A signed-in account with one passkey. */
async function withPasskey(label: string) {
  const user = await signedInUser(t, label);
  const { authenticator, passkey } = await registerPasskey(user.accessToken);
  return { user, authenticator, passkey };
}

/** The shape of an answer: its fields in order, each string as its length, `type` and `transports` as they are. */
function shapeOf(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return key === 'type' ? value : `string(${value.length})`;
  if (Array.isArray(value)) return key === 'transports' ? value : value.map((v) => shapeOf(v));
  if (value && typeof value === 'object') return Object.entries(value).map(([k, v]) => [k, shapeOf(v, k)]);
  return typeof value;
}

/** As the admin command disable-user leaves an account: inactive, its cached row dropped. */
async function deactivate(userId: string) {
  await t.deps.db.execute(sql`update users set is_active = false where id = ${userId}`);
  await t.deps.userCache.changed(userId);
}

function expectSignedIn(res: Awaited<ReturnType<typeof post>>, userId: string) {
  expect(res.statusCode, res.body).toBe(200);
  const body = json(res);
  expect(body).toMatchObject({
    accessToken: expect.any(String),
    refreshToken: expect.any(String),
    expiresIn: 900,
    user: { id: userId },
  });
  return body as { accessToken: string; refreshToken: string };
}

describe('signing in', () => {
  it('with a discoverable passkey (no email): no allowCredentials, a session, lastUsedAt and the counter move', async () => {
    const { user, authenticator, passkey } = await withPasskey('pk-disc');
    const { challengeId, options } = await authenticationOptions();
    expect(options.rpId).toBe('app.test');
    expect(options.allowCredentials ?? []).toEqual([]);
    const body = expectSignedIn(await verify(challengeId, authenticator.get(options)), user.userId);
    expect((await getMe(t, body.accessToken)).statusCode).toBe(200);
    expect(await listPasskeys(user.accessToken)).toEqual([{ ...passkey, lastUsedAt: t.clock.now().toISOString() }]);
  });

  it('by email: that account’s passkeys as allowCredentials; an address without any gets a stable decoy of the same shape', async () => {
    const { user, authenticator } = await withPasskey('pk-email');
    const real = await authenticationOptions(user.email.toUpperCase());
    expect(real.options.allowCredentials?.map((c) => c.id)).toEqual([authenticator.id]);
    expectSignedIn(await signInWith(authenticator, { email: user.email }), user.userId);
    // Unknown, deactivated, or known without a passkey: one entry of the real one's form (its fields
    // in its order, an id of its length, its transports), the same every time.
    const deactivated = await withPasskey('pk-email-deact');
    await deactivate(deactivated.user.userId);
    const unknown = await authenticationOptions('nobody-here@example.com');
    const decoys = [
      unknown,
      await authenticationOptions(deactivated.user.email),
      await authenticationOptions((await signedInUser(t, 'pk-none')).email),
    ];
    for (const o of decoys) {
      expect(JSON.stringify(shapeOf(o))).toBe(JSON.stringify(shapeOf(real)));
      expect(o.options.allowCredentials![0]!.id).not.toBe(authenticator.id);
      expect(o.options.allowCredentials![0]!.id).not.toBe(deactivated.authenticator.id);
    }
    expect((await authenticationOptions('NOBODY-here@example.com')).options.allowCredentials).toEqual(
      unknown.options.allowCredentials,
    );
    expect(new Set(decoys.map((o) => o.options.allowCredentials![0]!.id)).size).toBe(3);
  });

  it("an email's challenge takes only that account's passkeys: any other gets 401, whether the address is unknown, deactivated or active", async () => {
    const stranger = await withPasskey('pk-stranger');
    const target = await withPasskey('pk-target');
    const gone = await withPasskey('pk-gone');
    await deactivate(gone.user.userId);
    const bare = await signedInUser(t, 'pk-bare');
    const sessionsOf = async (userId: string) =>
      (await queryRows(t, sql`select id from sessions where user_id = ${userId}`)).length;
    const before = await sessionsOf(stranger.user.userId);
    for (const email of ['nobody-at-all@example.com', gone.user.email, target.user.email, bare.email]) {
      expectError(await signInWith(stranger.authenticator, { email }), 401, 'AUTHENTICATION_ERROR');
    }
    expect(await sessionsOf(stranger.user.userId)).toBe(before);
    // The stranger's passkey itself is fine: with its own address, or discoverable, it signs in.
    expectSignedIn(await signInWith(stranger.authenticator, { email: stranger.user.email }), stranger.user.userId);
    expectSignedIn(await signInWith(stranger.authenticator), stranger.user.userId);
  });

  it('answers in cookie mode as login does: the refresh token in the cookie, not the body', async () => {
    const { authenticator } = await withPasskey('pk-cookie');
    const res = await signInWith(authenticator, { headers: { 'x-session-mode': 'cookie' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).refreshToken).toBeUndefined();
    expect(String(res.headers['set-cookie'])).toMatch(/^tenantry_refresh=[^;]+; HttpOnly; SameSite=Strict/);
  });
});

describe('refusals', () => {
  it('refuses a replayed challenge (401), even with a fresh assertion', async () => {
    const { user, authenticator } = await withPasskey('pk-replay');
    const { challengeId, options } = await authenticationOptions();
    expectSignedIn(await verify(challengeId, authenticator.get(options)), user.userId);
    expectError(await verify(challengeId, authenticator.get(options)), 401, 'AUTHENTICATION_ERROR');
  });

  it('of verifies racing with one challenge, exactly one signs in (run on PostgreSQL for real parallelism)', async () => {
    const { user, authenticator } = await withPasskey('pk-race');
    const { challengeId, options } = await authenticationOptions();
    const answers = await Promise.all([1, 2, 3, 4].map(() => verify(challengeId, authenticator.get(options))));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401]);
    expectSignedIn(
      answers.find((r) => r.statusCode === 200)!,
      user.userId,
    );
  });

  it('refuses a signature counter that goes backwards or stays (401), and keeps the counter', async () => {
    const { user, authenticator } = await withPasskey('pk-counter');
    expectSignedIn(await signInWith(authenticator, { counter: 5 }), user.userId);
    expectError(await signInWith(authenticator, { counter: 4 }), 401, 'AUTHENTICATION_ERROR');
    expectError(await signInWith(authenticator, { counter: 5 }), 401, 'AUTHENTICATION_ERROR');
    expectSignedIn(await signInWith(authenticator, { counter: 6 }), user.userId);
  });

  it('a password reset removes the passkeys: one added with a stolen access token stops signing in', async () => {
    const { user, authenticator } = await withPasskey('pk-reset');
    expect((await post('/auth/password/forgot', { email: user.email })).statusCode).toBe(200);
    const token = await t.mail.tokenFrom(user.email, /Reset your password/, '/reset-password');
    expect((await post('/auth/password/reset', { token, newPassword: 'Owner-Takes-Back-1' })).statusCode).toBe(200);
    expectError(await signInWith(authenticator), 401, 'AUTHENTICATION_ERROR');
    expect(await queryRows(t, sql`select id from passkeys where user_id = ${user.userId}`)).toEqual([]);
  });

  it('refuses a deleted passkey (401)', async () => {
    const { user, authenticator, passkey } = await withPasskey('pk-deleted');
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v1/users/me/passkeys/${passkey.id}`,
      headers: bearer(user.accessToken),
    });
    expect(del.statusCode, del.body).toBe(200);
    expectError(await signInWith(authenticator), 401, 'AUTHENTICATION_ERROR');
  });

  it('refuses a wrong origin, a wrong rp id, a bad signature and an unknown credential (401)', async () => {
    const { authenticator } = await withPasskey('pk-wrong');
    expectError(await signInWith(authenticator, { origin: 'http://evil.test' }), 401, 'AUTHENTICATION_ERROR');
    expectError(await signInWith(authenticator, { rpId: 'evil.test' }), 401, 'AUTHENTICATION_ERROR');
    const { challengeId, options } = await authenticationOptions();
    const response = authenticator.get(options);
    const tampered = {
      ...response,
      response: { ...response.response, signature: Buffer.alloc(70, 1).toString('base64url') },
    };
    expectError(await verify(challengeId, tampered), 401, 'AUTHENTICATION_ERROR');
    const unknown = await authenticationOptions();
    expectError(
      await verify(unknown.challengeId, {
        ...authenticator.get(unknown.options),
        id: 'AAAAAAAAAAAAAAAAAAAAAA',
        rawId: 'AAAAAAAAAAAAAAAAAAAAAA',
      }),
      401,
      'AUTHENTICATION_ERROR',
    );
  });

  it('refuses an expired challenge (5 minutes on the app clock) and an unknown one (401)', async () => {
    const { user, authenticator } = await withPasskey('pk-expired');
    const { challengeId, options } = await authenticationOptions();
    t.clock.advance(5 * 60 * 1000);
    expectError(await verify(challengeId, authenticator.get(options)), 401, 'AUTHENTICATION_ERROR');
    expectError(await verify('chl_unknown', authenticator.get(options)), 401, 'AUTHENTICATION_ERROR');
    // A new challenge sweeps expired ones away (a few at a time).
    const expired = async () =>
      (
        await queryRows(
          t,
          sql`select id from webauthn_challenges where expires_at <= ${t.clock.now().toISOString()}::timestamptz`,
        )
      ).length;
    const before = await expired();
    expect(before).toBeGreaterThan(0);
    // Just inside the 5 minutes, a challenge still works.
    const fresh = await authenticationOptions();
    expect(await expired()).toBeLessThan(before);
    t.clock.advance(5 * 60 * 1000 - 1);
    expectSignedIn(await verify(fresh.challengeId, authenticator.get(fresh.options)), user.userId);
  });

  it('refuses a malformed body (400)', async () => {
    expectError(await post('/auth/passkeys/authentication/verify', { challengeId: 'x' }), 400, 'VALIDATION_ERROR');
    expectError(
      await post('/auth/passkeys/authentication/verify', { challengeId: 'x', response: { id: 'x' } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await post('/auth/passkeys/authentication/options', { email: 'not an email' }),
      400,
      'VALIDATION_ERROR',
    );
  });
});

describe('two-factor accounts', () => {
  async function twoFactorAccount(label: string) {
    const { user, authenticator } = await withPasskey(label);
    const setup = await post('/auth/two-factor/setup', { password: user.password }, user.accessToken);
    expect(setup.statusCode, setup.body).toBe(200);
    const secret = json(setup).secret as string;
    const enabled = await post('/auth/two-factor/verify', { code: totpCode(secret, t.clock.now()) }, user.accessToken);
    expect(enabled.statusCode, enabled.body).toBe(200);
    t.clock.advance(30 * 1000);
    return { user, authenticator, secret };
  }

  it('a passkey with user verification needs no second factor', async () => {
    const { user, authenticator } = await twoFactorAccount('pk-2fa-uv');
    expectSignedIn(await signInWith(authenticator, { uv: true }), user.userId);
  });

  it('a passkey without user verification leads to the two-factor step (401 requiresTwoFactor + twoFactorToken)', async () => {
    const { user, authenticator, secret } = await twoFactorAccount('pk-2fa-no-uv');
    const res = await signInWith(authenticator, { uv: false });
    expect(res.statusCode, res.body).toBe(401);
    const body = json(res);
    expect(body).toMatchObject({
      success: false,
      requiresTwoFactor: true,
      twoFactorToken: expect.any(String),
      error: { code: 'AUTHENTICATION_ERROR' },
    });
    const finish = await post('/auth/two-factor/login', {
      twoFactorToken: body.twoFactorToken,
      code: totpCode(secret, t.clock.now()),
    });
    expectSignedIn(finish, user.userId);
  });

  it('without user verification on an account without two-factor, signs in', async () => {
    const { user, authenticator } = await withPasskey('pk-no-uv');
    expectSignedIn(await signInWith(authenticator, { uv: false }), user.userId);
  });
});
