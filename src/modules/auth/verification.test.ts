// Email verification (docs/api.md#registration-and-email-verification): single-use tokens, valid 24 h, a resend replaces the older link,
// and the resend endpoint says the same thing whether or not the account exists.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { login, PASSWORD, registerUser, uniqueEmail } from '../../../test/factories.js';
import { loginRaw } from '../../../test/fixtures/auth.js';
import { expectError } from '../../../test/expect.js';

useApp();

const HOUR = 60 * 60 * 1000;
const verify = (token: string) => t.request({ method: 'POST', url: '/api/v1/auth/verify-email', payload: { token } });
const resend = (email: string) =>
  t.request({ method: 'POST', url: '/api/v1/auth/resend-verification', payload: { email } });
const verifyToken = (email: string) => t.mail.tokenFrom(email, /Verify your email/, '/verify-email');
const verifyMails = (email: string) =>
  t.mail.mails.filter((m) => m.to.includes(email) && /Verify your email/.test(m.subject));

describe('POST /auth/verify-email', () => {
  it('verifies once; the same token a second time is 400', async () => {
    const { email, userId } = await registerUser(t, uniqueEmail('once'));
    expectError(await loginRaw(t, email, PASSWORD), 403, 'EMAIL_NOT_VERIFIED');
    const token = await verifyToken(email);
    const first = await verify(token);
    expect(first.statusCode, first.body).toBe(200);
    expect(json(first)).toEqual({ message: expect.any(String) });
    const again = expectError(await verify(token), 400, 'VALIDATION_ERROR');
    expect(again.details).toContain('token');
    const session = await login(t, email);
    expect(session.user).toMatchObject({ id: userId, emailVerified: t.clock.now().toISOString() });
  });

  it('accepts a token just before 24 h and refuses it after', async () => {
    const early = await registerUser(t, uniqueEmail('early'));
    const late = await registerUser(t, uniqueEmail('late'));
    const earlyToken = await verifyToken(early.email);
    const lateToken = await verifyToken(late.email);
    t.clock.advance(24 * HOUR - 1000);
    expect((await verify(earlyToken)).statusCode).toBe(200);
    t.clock.advance(2000);
    expectError(await verify(lateToken), 400, 'VALIDATION_ERROR');
    expectError(await loginRaw(t, late.email, PASSWORD), 403, 'EMAIL_NOT_VERIFIED');
  });

  it('refuses an unknown token, and an empty or missing one', async () => {
    expectError(await verify('this-token-was-never-issued-0123456789abcdef'), 400, 'VALIDATION_ERROR');
    expect(expectError(await verify(''), 400, 'VALIDATION_ERROR').details).toContain('token');
    const missing = await t.request({ method: 'POST', url: '/api/v1/auth/verify-email', payload: {} });
    expect(expectError(missing, 400, 'VALIDATION_ERROR').details).toContain('token');
  });

  it('does not take a password reset token', async () => {
    const { email } = await registerUser(t, uniqueEmail('purpose'));
    await t.request({ method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email } });
    const resetToken = await t.mail.tokenFrom(email, /Reset your password/, '/reset-password');
    expectError(await verify(resetToken), 400, 'VALIDATION_ERROR');
    expectError(await loginRaw(t, email, PASSWORD), 403, 'EMAIL_NOT_VERIFIED');
  });
});

describe('POST /auth/resend-verification', () => {
  it('answers 200 with the same body for an unknown email and a known one', async () => {
    const { email } = await registerUser(t, uniqueEmail('resend-known'));
    const unknown = await resend(uniqueEmail('resend-nobody'));
    const known = await resend(email);
    expect(unknown.statusCode).toBe(200);
    expect(known.statusCode).toBe(200);
    expect(json(unknown)).toEqual(json(known));
  });

  it('sends a new link; the older unused link stops working and the new one works', async () => {
    const { email } = await registerUser(t, uniqueEmail('resend'));
    const oldToken = await verifyToken(email);
    expect((await resend(` ${email.toUpperCase()} `)).statusCode).toBe(200);
    // Wait for the second mail, then read its link.
    for (let i = 0; i < 50 && verifyMails(email).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(verifyMails(email)).toHaveLength(2);
    const newToken = await verifyToken(email);
    expect(newToken).not.toBe(oldToken);
    expectError(await verify(oldToken), 400, 'VALIDATION_ERROR');
    expect((await verify(newToken)).statusCode).toBe(200);
    await login(t, email);
  });

  it('sends nothing to an account already verified', async () => {
    const { email, userId } = await registerUser(t, uniqueEmail('resend-done'));
    expect((await verify(await verifyToken(email))).statusCode).toBe(200);
    expect((await resend(email)).statusCode).toBe(200);
    // A marker asked for after the resend and mailed the same way (token issued, then mailed, after
    // the answer): once it arrived and no mail is on its way, a verification mail would be here.
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email } })).statusCode,
    ).toBe(200);
    await t.mail.waitFor(email, /Reset your password/);
    await t.mail.settled();
    expect(
      await queryRows(t, sql`select id from email_tokens where user_id = ${userId} and purpose = 'verify_email'`),
    ).toHaveLength(1);
    expect(verifyMails(email)).toHaveLength(1);
  });

  it('refuses an invalid email with 400', async () => {
    expect(expectError(await resend('nope'), 400, 'VALIDATION_ERROR').details).toContain('email');
  });
});
