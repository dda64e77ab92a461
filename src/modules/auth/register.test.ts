import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { login, PASSWORD, registerUser, uniqueEmail, verifyEmailOf } from '../../../test/factories.js';

useApp();

describe('registration and email verification', () => {
  it('registers, mails a verification link, verifies and signs in', async () => {
    const email = uniqueEmail('reg');
    const { userId } = await registerUser(t, email);
    expect(userId).toMatch(/^usr_[0-9a-z]{26}$/);

    const before = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email, password: PASSWORD },
    });
    expect(before.statusCode).toBe(403);
    expect(json(before).error.code).toBe('EMAIL_NOT_VERIFIED');

    await verifyEmailOf(t, email);
    const tokens = await login(t, email);
    expect(tokens.user).toMatchObject({ id: userId, email, fullName: 'Test User', twoFactorEnabled: false });
    expect(tokens.user.emailVerified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('refuses a duplicate email, whatever its case, with 409', async () => {
    const email = uniqueEmail('dup');
    await registerUser(t, email);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: `  ${email.toUpperCase()} `, password: PASSWORD },
    });
    expect(res.statusCode).toBe(409);
    expect(json(res)).toEqual({
      success: false,
      error: { code: 'CONFLICT', message: expect.any(String), details: expect.stringContaining('email') },
    });
  });
});
