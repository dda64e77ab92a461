// POST /auth/register: the body contract, the password policy (docs/api.md#password-policy), duplicate emails and
// the verification mail (docs/api.md#registration-and-email-verification).
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { PASSWORD, uniqueEmail } from '../../../test/factories.js';
import { expectError } from '../../../test/expect.js';

useApp();

const register = (payload: unknown, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: '/api/v1/auth/register', payload: payload as Record<string, unknown>, headers });

describe('POST /auth/register', () => {
  it('answers 201 with exactly {userId}, a usr_ id', async () => {
    const res = await register({ email: uniqueEmail('ok'), password: PASSWORD, fullName: 'Ada Lovelace' });
    expect(res.statusCode, res.body).toBe(201);
    expect(Object.keys(json(res))).toEqual(['userId']);
    expect(json(res).userId).toMatch(/^usr_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it.each([
    ['too short (7 characters)', 'Abcdef1'],
    ['no uppercase letter', 'abcdefgh1'],
    ['no lowercase letter', 'ABCDEFGH1'],
    ['no number', 'Abcdefghij'],
  ])('refuses a password with %s: 400 naming password', async (_rule, password) => {
    const email = uniqueEmail('weak');
    const err = expectError(await register({ email, password }), 400, 'VALIDATION_ERROR');
    expect(err.details).toMatch(/^password: /);
    // Nothing was created: the same email registers afterwards.
    expect((await register({ email, password: PASSWORD })).statusCode).toBe(201);
  });

  it('names every missing rule in one answer', async () => {
    const err = expectError(await register({ email: uniqueEmail('weak'), password: 'abc' }), 400, 'VALIDATION_ERROR');
    expect(err.details).toContain('password');
    expect(err.details).toContain('8 characters');
    expect(err.details).toContain('uppercase');
    expect(err.details).toContain('number');
  });

  it('accepts a password of exactly 8 characters meeting every rule, refuses one over 128', async () => {
    expect((await register({ email: uniqueEmail('min'), password: 'Abcdefg1' })).statusCode).toBe(201);
    const err = expectError(
      await register({ email: uniqueEmail('long'), password: `Aa1${'x'.repeat(126)}` }),
      400,
      'VALIDATION_ERROR',
    );
    expect(err.details).toContain('password');
  });

  it.each([['not-an-email'], ['a@'], ['@example.com'], ['two words@example.com'], ['']])(
    'refuses the email %j with 400 naming email',
    async (email) => {
      const err = expectError(await register({ email, password: PASSWORD }), 400, 'VALIDATION_ERROR');
      expect(err.details).toContain('email');
    },
  );

  it('refuses a missing email or password, naming the field', async () => {
    expect(expectError(await register({ password: PASSWORD }), 400, 'VALIDATION_ERROR').details).toContain('email');
    expect(expectError(await register({ email: uniqueEmail('nopw') }), 400, 'VALIDATION_ERROR').details).toContain(
      'password',
    );
  });

  it('refuses an unknown body field with 400 naming it', async () => {
    const err = expectError(
      await register({ email: uniqueEmail('extra'), password: PASSWORD, role: 'admin' }),
      400,
      'VALIDATION_ERROR',
    );
    expect(err.details).toContain('role');
  });

  it('refuses wrong types, malformed JSON and non-JSON bodies', async () => {
    expect(expectError(await register({ email: 42, password: PASSWORD }), 400, 'VALIDATION_ERROR').details).toContain(
      'email',
    );
    const malformed = await t.request({
      method: 'POST',
      url: '/api/v1/auth/register',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": ',
    });
    expectError(malformed, 400, 'VALIDATION_ERROR');
    const text = await t.request({
      method: 'POST',
      url: '/api/v1/auth/register',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expectError(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('bounds fullName to 1-100 characters', async () => {
    expect(
      expectError(
        await register({ email: uniqueEmail('fn0'), password: PASSWORD, fullName: '' }),
        400,
        'VALIDATION_ERROR',
      ).details,
    ).toContain('fullName');
    const long = await register({ email: uniqueEmail('fn101'), password: PASSWORD, fullName: 'x'.repeat(101) });
    expect(expectError(long, 400, 'VALIDATION_ERROR').details).toContain('fullName');
    expect(
      (await register({ email: uniqueEmail('fn100'), password: PASSWORD, fullName: 'x'.repeat(100) })).statusCode,
    ).toBe(201);
  });

  it('refuses a duplicate email in another case and with blanks around it: 409 CONFLICT', async () => {
    const email = uniqueEmail('dup');
    expect((await register({ email: email.toUpperCase(), password: PASSWORD })).statusCode).toBe(201);
    const err = expectError(await register({ email: ` ${email} `, password: PASSWORD }), 409, 'CONFLICT');
    expect(err.details).toContain('email');
    expectError(await register({ email: email.replace('dup', 'DUP'), password: PASSWORD }), 409, 'CONFLICT');
  });

  it('mails a verification link to the normalized address', async () => {
    const email = uniqueEmail('mail');
    expect(
      (await register({ email: `  ${email.toUpperCase()}  `, password: PASSWORD, fullName: 'Mail Test' })).statusCode,
    ).toBe(201);
    const mail = await t.mail.waitFor(email, /Verify your email/);
    expect(mail.to).toEqual([email]);
    expect(mail.decoded).toMatch(/http:\/\/app\.test\/verify-email\?token=[A-Za-z0-9_-]{40,}/);
  });
});
