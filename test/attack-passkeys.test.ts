// Attack tests (outside review): passkeys.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, queryRows, type TestApp } from './harness.js';
import { login, PASSWORD, registerUser, signedInUser, uniqueEmail } from './factories.js';
import { bearer, requestMagicLink } from './fixtures/auth.js';
import { SoftAuthenticator } from './webauthn.js';
import { totpCode } from './totp.js';

type CreateOpts = Parameters<SoftAuthenticator['create']>[0];
type GetOpts = Parameters<SoftAuthenticator['get']>[0] & { allowCredentials?: Array<{ id: string }> };

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const post = (url: string, payload?: unknown, accessToken?: string) =>
  t.request({
    method: 'POST',
    url: `/api/v1${url}`,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    headers: accessToken ? bearer(accessToken) : {},
  });

async function regOptions(accessToken: string) {
  const res = await post('/auth/passkeys/registration/options', undefined, accessToken);
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as CreateOpts;
}
async function register(accessToken: string, authenticator = new SoftAuthenticator(), uv = true) {
  const options = await regOptions(accessToken);
  const res = await post(
    '/auth/passkeys/registration/verify',
    { response: authenticator.create(options, { uv }) },
    accessToken,
  );
  expect(res.statusCode, res.body).toBe(201);
  return authenticator;
}
async function authOptions(email?: string) {
  const res = await post('/auth/passkeys/authentication/options', email === undefined ? undefined : { email });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { challengeId: string; options: GetOpts };
}

describe('passkey attacks', () => {
  it('a registration challenge issued to user A cannot register a credential for user B', async () => {
    const a = await signedInUser(t, 'pka');
    const b = await signedInUser(t, 'pkb');
    const optsA = await regOptions(a.accessToken);
    const res = await post(
      '/auth/passkeys/registration/verify',
      { response: new SoftAuthenticator().create(optsA) },
      b.accessToken,
    );
    expect(res.statusCode, res.body).toBe(400);
  });

  it("registering a credential id that is already another user's: 409, and the victim's key is untouched", async () => {
    const victim = await signedInUser(t, 'pkv');
    const attacker = await signedInUser(t, 'pkatt');
    const auth = await register(victim.accessToken);
    const res = await post(
      '/auth/passkeys/registration/verify',
      { response: auth.create(await regOptions(attacker.accessToken)) },
      attacker.accessToken,
    );
    expect(res.statusCode, res.body).toBe(409);
    const rows = await queryRows<{ user_id: string }>(
      t,
      sql`select user_id from passkeys where credential_id = ${auth.id}`,
    );
    expect(rows.map((r) => r.user_id)).toEqual([victim.userId]);
  });

  it("an email-targeted challenge for the victim cannot be used with the attacker's passkey, and vice versa", async () => {
    const victim = await signedInUser(t, 'pkv2');
    const attacker = await signedInUser(t, 'pka2');
    await register(victim.accessToken);
    const attackerKey = await register(attacker.accessToken);
    const { challengeId, options } = await authOptions(victim.email);
    const res = await post('/auth/passkeys/authentication/verify', { challengeId, response: attackerKey.get(options) });
    expect(res.statusCode, res.body).toBe(401);
  });

  it('an authentication challenge is single use (replay of a valid assertion)', async () => {
    const u = await signedInUser(t, 'pkr');
    const key = await register(u.accessToken);
    const { challengeId, options } = await authOptions();
    const assertion = key.get(options);
    const first = await post('/auth/passkeys/authentication/verify', { challengeId, response: assertion });
    expect(first.statusCode, first.body).toBe(200);
    const second = await post('/auth/passkeys/authentication/verify', { challengeId, response: assertion });
    expect(second.statusCode, second.body).toBe(401);
  });

  it('a registration challenge cannot be spent as an authentication challenge', async () => {
    const u = await signedInUser(t, 'pkx');
    const key = await register(u.accessToken);
    const reg = await regOptions(u.accessToken);
    const rows = await queryRows<{ id: string }>(
      t,
      sql`select id from webauthn_challenges where challenge = ${reg.challenge}`,
    );
    const res = await post('/auth/passkeys/authentication/verify', {
      challengeId: rows[0]!.id,
      response: key.get({ challenge: reg.challenge, rpId: 'app.test' }),
    });
    expect(res.statusCode, res.body).toBe(401);
  });

  it('counter rollback answers 401', async () => {
    const u = await signedInUser(t, 'pkc');
    const key = await register(u.accessToken);
    let o = await authOptions();
    expect(
      (
        await post('/auth/passkeys/authentication/verify', {
          challengeId: o.challengeId,
          response: key.get(o.options, { counter: 10 }),
        })
      ).statusCode,
    ).toBe(200);
    o = await authOptions();
    const res = await post('/auth/passkeys/authentication/verify', {
      challengeId: o.challengeId,
      response: key.get(o.options, { counter: 5 }),
    });
    expect(res.statusCode, res.body).toBe(401);
  });

  it('a two-factor account: a passkey without user verification does not bypass the second factor', async () => {
    const u = await signedInUser(t, 'pk2fa');
    // enable two-factor
    const setup = await post('/auth/two-factor/setup', { password: PASSWORD }, u.accessToken);
    expect(setup.statusCode, setup.body).toBe(200);
    const secret = json(setup).secret as string;
    const en = await post('/auth/two-factor/verify', { code: totpCode(secret, t.clock.now()) }, u.accessToken);
    expect(en.statusCode, en.body).toBe(200);
    const key = await register(u.accessToken, new SoftAuthenticator(), false);
    const o = await authOptions();
    const res = await post('/auth/passkeys/authentication/verify', {
      challengeId: o.challengeId,
      response: key.get(o.options, { uv: false }),
    });
    expect(res.statusCode, res.body).toBe(401);
    expect(json(res).accessToken).toBeUndefined();
  });

  it('a deactivated user cannot sign in with a passkey', async () => {
    const u = await signedInUser(t, 'pkdeact');
    const key = await register(u.accessToken);
    await t.deps.db.execute(sql`update users set is_active = false where id = ${u.userId}`);
    await t.deps.userCache.changed(u.userId);
    const o = await authOptions();
    const res = await post('/auth/passkeys/authentication/verify', {
      challengeId: o.challengeId,
      response: key.get(o.options),
    });
    expect(res.statusCode, res.body).toBe(401);
  });

  it('a passkey whose origin is not APP_ORIGIN is refused', async () => {
    const u = await signedInUser(t, 'pkorig');
    const key = await register(u.accessToken);
    const o = await authOptions();
    const res = await post('/auth/passkeys/authentication/verify', {
      challengeId: o.challengeId,
      response: key.get(o.options, { origin: 'http://evil.test' }),
    });
    expect(res.statusCode, res.body).toBe(401);
  });
});

describe('passkeys and the first proof of an address (AUTH_REQUIRE_EMAIL_VERIFICATION=false)', () => {
  let t2: TestApp;
  beforeAll(async () => {
    t2 = await createTestApp({ env: { AUTH_REQUIRE_EMAIL_VERIFICATION: 'false' } });
  });
  afterAll(async () => {
    await t2?.close();
  });

  it("a squatter's passkey on an unverified account is dropped when the owner claims the address by magic link (docs/api.md#claiming-an-unverified-address)", async () => {
    const victimEmail = uniqueEmail('squat');
    // The attacker registers the victim's address and, unverified, signs in and adds a passkey.
    await registerUser(t2, victimEmail, PASSWORD);
    const attacker = await login(t2, victimEmail, PASSWORD);
    const opts = json(
      await t2.request({
        method: 'POST',
        url: '/api/v1/auth/passkeys/registration/options',
        headers: bearer(attacker.accessToken),
      }),
    ) as CreateOpts;
    const key = new SoftAuthenticator();
    const reg = await t2.request({
      method: 'POST',
      url: '/api/v1/auth/passkeys/registration/verify',
      headers: bearer(attacker.accessToken),
      payload: { response: key.create(opts) },
    });
    expect(reg.statusCode, reg.body).toBe(201);
    // The owner of the address proves it with a magic link (the claim).
    const saved = t;
    t = t2;
    const { token } = await requestMagicLink(t2, victimEmail);
    t = saved;
    const claim = await t2.request({ method: 'POST', url: '/api/v1/auth/magic-link/verify', payload: { token } });
    expect(claim.statusCode, claim.body).toBe(200);
    // The attacker's passkey must no longer sign in.
    const o = json(await t2.request({ method: 'POST', url: '/api/v1/auth/passkeys/authentication/options' })) as {
      challengeId: string;
      options: GetOpts;
    };
    const res = await t2.request({
      method: 'POST',
      url: '/api/v1/auth/passkeys/authentication/verify',
      payload: { challengeId: o.challengeId, response: key.get(o.options) },
    });
    expect(res.statusCode, res.body).toBe(401);
  });

  it("the same, claimed by a password reset: the squatter's passkey must not sign in", async () => {
    const victimEmail = uniqueEmail('squat2');
    await registerUser(t2, victimEmail, PASSWORD);
    const attacker = await login(t2, victimEmail, PASSWORD);
    const opts = json(
      await t2.request({
        method: 'POST',
        url: '/api/v1/auth/passkeys/registration/options',
        headers: bearer(attacker.accessToken),
      }),
    ) as CreateOpts;
    const key = new SoftAuthenticator();
    const reg = await t2.request({
      method: 'POST',
      url: '/api/v1/auth/passkeys/registration/verify',
      headers: bearer(attacker.accessToken),
      payload: { response: key.create(opts) },
    });
    expect(reg.statusCode, reg.body).toBe(201);
    expect(
      (await t2.request({ method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email: victimEmail } }))
        .statusCode,
    ).toBe(200);
    const token = await t2.mail.tokenFrom(victimEmail, /Reset your password/, '/reset-password');
    const reset = await t2.request({
      method: 'POST',
      url: '/api/v1/auth/password/reset',
      payload: { token, newPassword: 'Owner-Claims-1' },
    });
    expect(reset.statusCode, reset.body).toBe(200);
    const o = json(await t2.request({ method: 'POST', url: '/api/v1/auth/passkeys/authentication/options' })) as {
      challengeId: string;
      options: GetOpts;
    };
    const res = await t2.request({
      method: 'POST',
      url: '/api/v1/auth/passkeys/authentication/verify',
      payload: { challengeId: o.challengeId, response: key.get(o.options) },
    });
    expect(res.statusCode, res.body).toBe(401);
  });
});

describe('a password reset removes passkeys', () => {
  it('a passkey added with a stolen access token no longer signs in once the owner resets the password', async () => {
    const u = await signedInUser(t, 'pkpersist');
    // The attacker, holding only a (15-minute) access token, adds a UV passkey: no password asked.
    const key = await register(u.accessToken);
    // The owner resets the password (every session revoked).
    expect((await post('/auth/password/forgot', { email: u.email })).statusCode).toBe(200);
    const token = await t.mail.tokenFrom(u.email, /Reset your password/, '/reset-password');
    expect((await post('/auth/password/reset', { token, newPassword: 'Owner-Reset-2' })).statusCode).toBe(200);
    const o = await authOptions();
    const res = await post('/auth/passkeys/authentication/verify', {
      challengeId: o.challengeId,
      response: key.get(o.options),
    });
    expect(res.statusCode, 'the attacker passkey still signs in after the reset').toBe(401);
  });
});

describe('account enumeration through email-targeted options', () => {
  it('options for an address with an account (and a passkey) look like those for an unknown address (docs/decisions.md: "does not reveal accounts")', async () => {
    const u = await signedInUser(t, 'pkenum');
    await register(u.accessToken);
    const known = await authOptions(u.email);
    const unknown = await authOptions(uniqueEmail('nobody'));
    expect(
      (known.options.allowCredentials ?? []).length,
      'allowCredentials reveals the account and its credential ids',
    ).toBe((unknown.options.allowCredentials ?? []).length);
  });
});
