// Password reset (docs/api.md#password-reset): forgot answers alike for every email, the link is single use and
// valid 1 h, the policy applies (a refused password leaves the token usable), and a reset revokes
// every session and clears a lockout.
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { login, PASSWORD, registerUser, signedInUser, uniqueEmail } from '../../../test/factories.js';
import { getMe, loginRaw, refreshRaw, verifiedUser } from '../../../test/fixtures/auth.js';
import { expectError } from '../../../test/expect.js';

useApp();

const NEW_PASSWORD = 'Brand-New-Secret-7';
const MINUTE = 60 * 1000;

const forgot = (email: string) =>
  t.request({ method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email } });
const reset = (token: string, newPassword: string) =>
  t.request({ method: 'POST', url: '/api/v1/auth/password/reset', payload: { token, newPassword } });
const resetMails = (email: string) =>
  t.mail.mails.filter((m) => m.to.includes(email) && /Reset your password/.test(m.subject));

async function resetToken(email: string): Promise<string> {
  const before = resetMails(email).length;
  expect((await forgot(email)).statusCode).toBe(200);
  for (let i = 0; i < 100 && resetMails(email).length <= before; i++) await new Promise((r) => setTimeout(r, 50));
  return t.mail.tokenFrom(email, /Reset your password/, '/reset-password');
}

describe('POST /auth/password/forgot', () => {
  it('answers 200 with the same body for an unknown and a known email; only the known one gets mail', async () => {
    const { email } = await verifiedUser(t, 'forgot');
    const nobody = uniqueEmail('forgot-nobody');
    const unknown = await forgot(nobody);
    const known = await forgot(email);
    expect(unknown.statusCode).toBe(200);
    expect(known.statusCode).toBe(200);
    expect(json(unknown)).toEqual(json(known));
    expect(Object.keys(json(known))).toEqual(['message']);
    const mail = await t.mail.waitFor(email, /Reset your password/);
    expect(mail.decoded).toMatch(/http:\/\/app\.test\/reset-password\?token=[A-Za-z0-9_-]{40,}/);
    expect(t.mail.mails.some((m) => m.to.includes(nobody))).toBe(false);
  });

  it('finds the account whatever the case of the email', async () => {
    const { email } = await verifiedUser(t, 'forgot-case');
    expect((await forgot(` ${email.toUpperCase()} `)).statusCode).toBe(200);
    await t.mail.waitFor(email, /Reset your password/);
  });

  it('refuses an invalid email with 400', async () => {
    expect(expectError(await forgot('not-an-email'), 400, 'VALIDATION_ERROR').details).toContain('email');
  });
});

describe('POST /auth/password/reset', () => {
  it('sets the new password: it signs in, the old one does not', async () => {
    const { email } = await verifiedUser(t, 'reset');
    const token = await resetToken(email);
    const res = await reset(token, NEW_PASSWORD);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ message: expect.any(String) });
    expect(expectError(await loginRaw(t, email, PASSWORD), 401, 'AUTHENTICATION_ERROR').message).toBe(
      'Invalid email or password',
    );
    await login(t, email, NEW_PASSWORD);
  });

  it('applies the policy; a refused password does not consume the token', async () => {
    const { email } = await verifiedUser(t, 'reset-weak');
    const token = await resetToken(email);
    for (const weak of ['short1A', 'alllowercase1', 'ALLUPPERCASE1', 'NoDigitsHere']) {
      const err = expectError(await reset(token, weak), 400, 'VALIDATION_ERROR');
      expect(err.details).toMatch(/^newPassword: /);
    }
    expect((await reset(token, NEW_PASSWORD)).statusCode).toBe(200);
    await login(t, email, NEW_PASSWORD);
  });

  it('is single use', async () => {
    const { email } = await verifiedUser(t, 'reset-once');
    const token = await resetToken(email);
    expect((await reset(token, NEW_PASSWORD)).statusCode).toBe(200);
    expectError(await reset(token, 'Another-Secret-8'), 400, 'VALIDATION_ERROR');
    await login(t, email, NEW_PASSWORD);
  });

  it('expires after 1 hour', async () => {
    const early = await verifiedUser(t, 'reset-early');
    const late = await verifiedUser(t, 'reset-late');
    const earlyToken = await resetToken(early.email);
    const lateToken = await resetToken(late.email);
    t.clock.advance(60 * MINUTE - 1000);
    expect((await reset(earlyToken, NEW_PASSWORD)).statusCode).toBe(200);
    t.clock.advance(2000);
    expectError(await reset(lateToken, NEW_PASSWORD), 400, 'VALIDATION_ERROR');
    await login(t, late.email, PASSWORD);
  });

  it('a newer link replaces the older unused one', async () => {
    const { email } = await verifiedUser(t, 'reset-newer');
    const first = await resetToken(email);
    const second = await resetToken(email);
    expect(second).not.toBe(first);
    expectError(await reset(first, NEW_PASSWORD), 400, 'VALIDATION_ERROR');
    expect((await reset(second, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('refuses an unknown token and a verification token', async () => {
    expectError(await reset('never-issued-0123456789abcdefghijklmnopqrstuv', NEW_PASSWORD), 400, 'VALIDATION_ERROR');
    const { email } = await registerUser(t, uniqueEmail('reset-purpose'));
    const verifyToken = await t.mail.tokenFrom(email, /Verify your email/, '/verify-email');
    expectError(await reset(verifyToken, NEW_PASSWORD), 400, 'VALIDATION_ERROR');
  });

  it('revokes every session of the account', async () => {
    const user = await signedInUser(t, 'reset-sessions');
    const second = await login(t, user.email);
    const token = await resetToken(user.email);
    expect((await reset(token, NEW_PASSWORD)).statusCode).toBe(200);
    for (const s of [user, second]) {
      expectError(await getMe(t, s.accessToken), 401, 'AUTHENTICATION_ERROR');
      expectError(await refreshRaw(t, s.refreshToken), 401, 'AUTHENTICATION_ERROR');
    }
    const fresh = await login(t, user.email, NEW_PASSWORD);
    expect((await getMe(t, fresh.accessToken)).statusCode).toBe(200);
  });

  it('clears a lockout', async () => {
    const { email } = await verifiedUser(t, 'reset-lock');
    for (let i = 0; i < 5; i++) expect((await loginRaw(t, email, 'Wrong-Password-1')).statusCode).toBe(401);
    expectError(await loginRaw(t, email, PASSWORD), 423, 'ACCOUNT_LOCKED');
    const token = await resetToken(email);
    expect((await reset(token, NEW_PASSWORD)).statusCode).toBe(200);
    expect((await loginRaw(t, email, NEW_PASSWORD)).statusCode).toBe(200);
  });
});
