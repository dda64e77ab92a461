// Magic links (docs/api.md#magic-links): 200 whatever the email, a mailed {APP_ORIGIN}/magic-link?token=… link,
// 15 minutes, single use; verifying answers as login does (lockout, two-factor step, session cap)
// and marks the address verified.
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { PASSWORD, registerUser, uniqueEmail } from '../../../test/factories.js';
import {
  bearer,
  decodeJwt,
  getMe,
  listSessions,
  loginRaw,
  MAGIC_LINK_SUBJECT,
  requestMagicLink,
  verifiedUser,
} from '../../../test/fixtures/auth.js';
import { totpCode, wrongCode } from '../../../test/totp.js';
import { expectError } from '../../../test/expect.js';

useApp();

const MINUTE = 60 * 1000;
const SUBJECT = MAGIC_LINK_SUBJECT;

const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: `/api/v1${url}`, payload, headers });

const requestLink = (email: string) => requestMagicLink(t, email);

const verify = (token: string, twoFactorCode?: string) =>
  post('/auth/magic-link/verify', { token, ...(twoFactorCode ? { twoFactorCode } : {}) });

describe('requesting a magic link', () => {
  it('answers 200 with the same body for known and unknown emails, and mails only the known one', async () => {
    const { email } = await verifiedUser(t, 'ml-known');
    const unknown = uniqueEmail('ml-unknown');
    const a = await post('/auth/magic-link', { email: unknown });
    const b = await post('/auth/magic-link', { email });
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(json(a)).toEqual(json(b));
    expect(Object.keys(json(a))).toEqual(['message']);

    // The known address's link was asked for after the unknown one: once it arrived and no mail is
    // on its way, a mail to the unknown address would be here.
    await t.mail.waitFor(email, SUBJECT);
    await t.mail.settled();
    expect(t.mail.mails.filter((m) => m.to.includes(unknown))).toEqual([]);
  });

  it('mails {APP_ORIGIN}/magic-link?token=… to the account, whatever the case of the email asked for', async () => {
    const { email } = await verifiedUser(t, 'ml-mail');
    const res = await post('/auth/magic-link', { email: `  ${email.toUpperCase()} ` });
    expect(res.statusCode).toBe(200);
    const mail = await t.mail.waitFor(email, SUBJECT);
    expect(mail.decoded).toContain('http://app.test/magic-link?token=');
  });

  it('refuses a malformed email with 400', async () => {
    expectError(await post('/auth/magic-link', { email: 'not-an-email' }), 400, 'VALIDATION_ERROR');
  });
});

describe('signing in with a magic link', () => {
  it('answers as login does: a token pair and the user; the access token works', async () => {
    const { email, userId } = await verifiedUser(t, 'ml-login');
    const { token } = await requestLink(email);
    const res = await verify(token);
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['accessToken', 'expiresIn', 'organizationId', 'refreshToken', 'user']);
    expect(body.expiresIn).toBe(900);
    expect(body.user).toEqual({
      id: userId,
      email,
      fullName: 'Test User',
      emailVerified: expect.any(String),
      twoFactorEnabled: false,
    });
    expect(decodeJwt(body.accessToken).payload).toMatchObject({
      userId,
      email,
      sessionId: expect.stringMatching(/^ses_/),
    });
    const me = await getMe(t, body.accessToken);
    expect(me.statusCode).toBe(200);
    expect(json(me).id).toBe(userId);
    const refreshed = await post('/auth/refresh', { refreshToken: body.refreshToken });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
  });

  it('works once: a second use is 400', async () => {
    const { email } = await verifiedUser(t, 'ml-once');
    const { token } = await requestLink(email);
    expect((await verify(token)).statusCode).toBe(200);
    expectError(await verify(token), 400, 'VALIDATION_ERROR');
  });

  it('of parallel uses of one link, exactly one signs in', async () => {
    const { email } = await verifiedUser(t, 'ml-race');
    const { token } = await requestLink(email);
    const results = await Promise.all(Array.from({ length: 4 }, () => verify(token)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400]);
    const signedIn = results.find((r) => r.statusCode === 200)!;
    expect(json(await listSessions(t, json(signedIn).accessToken)).total).toBe(1);
  });

  it('expires after 15 minutes', async () => {
    const { email } = await verifiedUser(t, 'ml-expiry');
    const early = await requestLink(email);
    t.clock.advance(14 * MINUTE + 59 * 1000);
    expect((await verify(early.token)).statusCode).toBe(200);

    const late = await requestLink(email);
    t.clock.advance(15 * MINUTE + 1000);
    expectError(await verify(late.token), 400, 'VALIDATION_ERROR');
  });

  it('refuses an unknown token and a token of another purpose', async () => {
    expectError(await verify('not-a-real-token'), 400, 'VALIDATION_ERROR');
    const { email } = await registerUser(t, uniqueEmail('ml-purpose'));
    const verifyToken = await t.mail.tokenFrom(email, /Verify your email/, '/verify-email');
    expectError(await verify(verifyToken), 400, 'VALIDATION_ERROR');
  });

  it('a newer link replaces the unused older one', async () => {
    const { email } = await verifiedUser(t, 'ml-newer');
    const first = await requestLink(email);
    const second = await requestLink(email);
    expectError(await verify(first.token), 400, 'VALIDATION_ERROR');
    expect((await verify(second.token)).statusCode).toBe(200);
  });

  it('verifies an unverified account’s email and claims it: the password set before the proof no longer signs in', async () => {
    const { email } = await registerUser(t, uniqueEmail('ml-unverified'));
    expectError(await loginRaw(t, email, PASSWORD), 403, 'EMAIL_NOT_VERIFIED');
    const { token } = await requestLink(email);
    const res = await verify(token);
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(body.user.emailVerified).toBe(t.clock.now().toISOString());
    expect(json(await getMe(t, body.accessToken)).emailVerified).toBe(t.clock.now().toISOString());
    expectError(await loginRaw(t, email, PASSWORD), 401, 'AUTHENTICATION_ERROR');
    // The next link signs in as usual.
    expect((await verify((await requestLink(email)).token)).statusCode).toBe(200);
  });

  it('answers 423 for a locked account, and the link works once the lock is over', async () => {
    const { email } = await verifiedUser(t, 'ml-locked');
    for (let i = 0; i < 5; i++) expect((await loginRaw(t, email, 'Wrong-Password-1')).statusCode).toBe(401);
    const { token } = await requestLink(email);
    const locked = await verify(token);
    expectError(locked, 423, 'ACCOUNT_LOCKED');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);

    t.clock.advance(15 * MINUTE - 1000);
    expectError(await verify(token), 423, 'ACCOUNT_LOCKED');
    t.clock.advance(2000);
    const fresh = await requestLink(email);
    expect((await verify(fresh.token)).statusCode).toBe(200);
  });

  it('caps sessions: a sign-in by password, then five by link, leave five sessions, the oldest revoked', async () => {
    const { email } = await verifiedUser(t, 'ml-cap');
    // Five links, not six: an address gets at most five sign-in links an hour (platform/mail-cap.ts).
    const tokens: string[] = [json(await loginRaw(t, email, PASSWORD)).accessToken as string];
    t.clock.advance(1000);
    for (let i = 1; i < 6; i++) {
      const { token } = await requestLink(email);
      const res = await verify(token);
      expect(res.statusCode, res.body).toBe(200);
      tokens.push(json(res).accessToken as string);
      t.clock.advance(1000);
    }
    const list = json(await listSessions(t, tokens[5]!));
    expect(list.total).toBe(5);
    expectError(await getMe(t, tokens[0]!), 401, 'AUTHENTICATION_ERROR');
    expect((await getMe(t, tokens[1]!)).statusCode).toBe(200);
  });
});

describe('magic link with two-factor enabled', () => {
  async function twoFactorAccount(label: string) {
    const { email, userId } = await verifiedUser(t, label);
    const login = json(await loginRaw(t, email, PASSWORD));
    const setup = json(await post('/auth/two-factor/setup', { password: PASSWORD }, bearer(login.accessToken)));
    const ok = await post(
      '/auth/two-factor/verify',
      { code: totpCode(setup.secret, t.clock.now()) },
      bearer(login.accessToken),
    );
    expect(ok.statusCode, ok.body).toBe(200);
    t.clock.advance(30 * 1000);
    return { email, userId, secret: setup.secret as string, backupCodes: setup.backupCodes as string[] };
  }

  it('asks for the code without burning the link; the link then works with a code', async () => {
    const user = await twoFactorAccount('ml-2fa');
    const { token } = await requestLink(user.email);
    const ask = await verify(token);
    expect(ask.statusCode, ask.body).toBe(401);
    expect(json(ask)).toMatchObject({
      success: false,
      error: { code: 'AUTHENTICATION_ERROR', message: 'Two-factor code required' },
      requiresTwoFactor: true,
    });

    const wrong = await verify(token, wrongCode(user.secret, t.clock.now()));
    expect(expectError(wrong, 401, 'AUTHENTICATION_ERROR').message).toBe('Invalid two-factor code');

    const ok = await verify(token, totpCode(user.secret, t.clock.now()));
    expect(ok.statusCode, ok.body).toBe(200);
    expect(json(ok).user).toMatchObject({ id: user.userId, twoFactorEnabled: true });
    expectError(await verify(token, totpCode(user.secret, t.clock.now(), 1)), 400, 'VALIDATION_ERROR');
  });

  it('takes a backup code; wrong codes count toward the lockout and spend the link', async () => {
    const user = await twoFactorAccount('ml-2fa-lock');
    const { token } = await requestLink(user.email);
    for (let i = 0; i < 5; i++)
      expect((await verify(token, wrongCode(user.secret, t.clock.now()))).statusCode).toBe(401);
    expectError(await verify(token, user.backupCodes[0]), 400, 'VALIDATION_ERROR');
    expectError(await verify((await requestLink(user.email)).token, user.backupCodes[0]), 423, 'ACCOUNT_LOCKED');

    t.clock.advance(15 * MINUTE);
    const fresh = await requestLink(user.email);
    const ok = await verify(fresh.token, user.backupCodes[0]);
    expect(ok.statusCode, ok.body).toBe(200);
  });
});
