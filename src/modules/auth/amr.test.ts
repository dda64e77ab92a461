// How a session signed in, as its tokens say (`amr`) and GET /auth/session shows, for every sign-in
// method through HTTP: a password (`pwd`), a magic link (`magic_link`), a social provider (`oauth`),
// a passkey (`webauthn`), each followed by `otp` when a second factor was checked; the value stays
// with the session across refreshes.
import { describe, expect, it } from 'vitest';
import { bearer, decodeJwt, requestMagicLink, verifiedUser } from '../../../test/fixtures/auth.js';
import { json } from '../../../test/harness.js';
import { PASSWORD, uniqueEmail } from '../../../test/factories.js';
import { totpCode } from '../../../test/totp.js';
import { SoftAuthenticator } from '../../../test/webauthn.js';
import { identity, o, signIn, start, callback, t, useOAuthApp } from '../../../test/fixtures/oauth.js';

useOAuthApp();

const post = (url: string, payload: Record<string, unknown> = {}, accessToken?: string) =>
  t.request({ method: 'POST', url: `/api/v1${url}`, payload, headers: accessToken ? bearer(accessToken) : {} });

async function amrOf(answer: { statusCode: number; body: string }) {
  expect(answer.statusCode, answer.body).toBe(200);
  const { accessToken, refreshToken } = json(answer as never) as { accessToken: string; refreshToken: string };
  const claimed = decodeJwt(accessToken).payload.amr;
  const live = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: bearer(accessToken) });
  expect(json(live).amr).toEqual(claimed);
  // A refresh keeps it.
  const next = await post('/auth/refresh', { refreshToken });
  expect(decodeJwt(json(next).accessToken as string).payload.amr).toEqual(claimed);
  return claimed;
}

/** A verified account signed in with its password, with two-factor on; its TOTP secret. */
async function withTwoFactor(email: string) {
  const signedIn = json(await post('/auth/login', { email, password: PASSWORD }));
  const setup = json(await post('/auth/two-factor/setup', { password: PASSWORD }, signedIn.accessToken as string));
  const verified = await post(
    '/auth/two-factor/verify',
    { code: totpCode(setup.secret as string, t.clock.now()) },
    signedIn.accessToken as string,
  );
  expect(verified.statusCode, verified.body).toBe(200);
  t.clock.advance(30_000);
  return { secret: setup.secret as string, accessToken: signedIn.accessToken as string };
}

async function passkeyOf(accessToken: string) {
  const authenticator = new SoftAuthenticator();
  const options = json(await post('/auth/passkeys/registration/options', {}, accessToken));
  const res = await post(
    '/auth/passkeys/registration/verify',
    { response: authenticator.create(options as never) },
    accessToken,
  );
  expect(res.statusCode, res.body).toBe(201);
  return authenticator;
}

async function passkeySignIn(authenticator: SoftAuthenticator, uv: boolean) {
  const { challengeId, options } = json(await post('/auth/passkeys/authentication/options'));
  return post('/auth/passkeys/authentication/verify', {
    challengeId,
    response: authenticator.get(options as never, { uv }),
  });
}

describe('amr', () => {
  it('password: pwd; with a two-factor code: pwd, otp', async () => {
    const { email } = await verifiedUser(t, 'amr-pwd');
    expect(await amrOf(await post('/auth/login', { email, password: PASSWORD }))).toEqual(['pwd']);
    const { secret } = await withTwoFactor(email);
    expect(
      await amrOf(
        await post('/auth/login', { email, password: PASSWORD, twoFactorCode: totpCode(secret, t.clock.now()) }),
      ),
    ).toEqual(['pwd', 'otp']);
  });

  it('magic link: magic_link; with a two-factor code: magic_link, otp', async () => {
    const { email } = await verifiedUser(t, 'amr-link');
    expect(
      await amrOf(await post('/auth/magic-link/verify', { token: (await requestMagicLink(t, email)).token })),
    ).toEqual(['magic_link']);
    const { secret } = await withTwoFactor(email);
    const token = (await requestMagicLink(t, email)).token;
    expect(
      await amrOf(await post('/auth/magic-link/verify', { token, twoFactorCode: totpCode(secret, t.clock.now()) })),
    ).toEqual(['magic_link', 'otp']);
  });

  it('social sign-in: oauth; through the two-factor ticket: oauth, otp', async () => {
    const who = identity(uniqueEmail('amr-social'));
    const first = await signIn(who);
    expect(await amrOf(first)).toEqual(['oauth']);
    // Two-factor setup asks for a password, which a social account lacks: it gets one by a reset.
    const email = json(first).user.email as string;
    await post('/auth/password/forgot', { email });
    const reset = await t.mail.tokenFrom(email, /Reset your password/, '/reset-password');
    expect((await post('/auth/password/reset', { token: reset, newPassword: PASSWORD })).statusCode).toBe(200);
    const { secret } = await withTwoFactor(email);
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), who);
    const challenge = await callback('google', { code: back.code, state: back.state }, s.cookie);
    expect(challenge.statusCode, challenge.body).toBe(401);
    const ticket = json(challenge).twoFactorToken as string;
    expect(
      await amrOf(
        await post('/auth/two-factor/login', { twoFactorToken: ticket, code: totpCode(secret, t.clock.now()) }),
      ),
    ).toEqual(['oauth', 'otp']);
  });

  it('passkey: webauthn (user verification counts as the second factor); without it, through the ticket: webauthn, otp', async () => {
    const { email } = await verifiedUser(t, 'amr-passkey');
    const { secret, accessToken } = await withTwoFactor(email);
    const authenticator = await passkeyOf(accessToken);
    expect(await amrOf(await passkeySignIn(authenticator, true))).toEqual(['webauthn']);
    const challenge = await passkeySignIn(authenticator, false);
    expect(challenge.statusCode, challenge.body).toBe(401);
    const ticket = json(challenge).twoFactorToken as string;
    expect(
      await amrOf(
        await post('/auth/two-factor/login', { twoFactorToken: ticket, code: totpCode(secret, t.clock.now()) }),
      ),
    ).toEqual(['webauthn', 'otp']);
  });
});
