// POST /auth/login (docs/api.md#sign-in-with-email-and-password): one message for a wrong email or password,
// 403 for an unverified account only once the password is right, the lockout, the response shape
// and the token claims.
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { PASSWORD, registerUser, uniqueEmail } from '../../../test/factories.js';
import { decodeJwt, getMe, listSessions, loginRaw, verifiedUser } from '../../../test/fixtures/auth.js';
import { expectError } from '../../../test/expect.js';

useApp();

const MINUTE = 60 * 1000;
const WRONG = 'Wrong-Password-1';
// Lockout tests verify up to a dozen passwords: room for a loaded machine.
const SLOW = 90_000;

async function fail(email: string, times: number) {
  for (let i = 0; i < times; i++) {
    const res = await loginRaw(t, email, WRONG);
    expect(res.statusCode, `failure ${i + 1}: ${res.body}`).toBe(401);
  }
}

describe('login: credentials', () => {
  it('answers a wrong password and an unknown email alike: 401 Invalid email or password', async () => {
    const { email } = await verifiedUser(t, 'creds');
    const wrongPassword = expectError(await loginRaw(t, email, WRONG), 401, 'AUTHENTICATION_ERROR');
    const unknownEmail = expectError(await loginRaw(t, uniqueEmail('nobody'), PASSWORD), 401, 'AUTHENTICATION_ERROR');
    expect(wrongPassword.message).toBe('Invalid email or password');
    expect(unknownEmail).toEqual(wrongPassword);
  });

  it('refuses an unverified account with 403 only when the password is right', async () => {
    const { email } = await registerUser(t, uniqueEmail('unverified'));
    expect(expectError(await loginRaw(t, email, WRONG), 401, 'AUTHENTICATION_ERROR').message).toBe(
      'Invalid email or password',
    );
    expectError(await loginRaw(t, email, PASSWORD), 403, 'EMAIL_NOT_VERIFIED');
  });

  it('compares the email case-insensitively and ignores blanks around it', async () => {
    const { email, userId } = await verifiedUser(t, 'case');
    const res = await loginRaw(t, `  ${email.toUpperCase()}\t`, PASSWORD);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user).toMatchObject({ id: userId, email });
  });

  it('refuses a body with an unknown field or without a password', async () => {
    const extra = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: uniqueEmail(), password: PASSWORD, remember: true },
    });
    expect(expectError(extra, 400, 'VALIDATION_ERROR').details).toContain('remember');
    const missing = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: uniqueEmail() } });
    expect(expectError(missing, 400, 'VALIDATION_ERROR').details).toContain('password');
  });
});

describe('login: response and tokens', () => {
  it('answers exactly {accessToken, refreshToken, expiresIn: 900, organizationId: null, user}', async () => {
    const { email, userId } = await verifiedUser(t, 'shape');
    const res = await loginRaw(t, email, PASSWORD);
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['accessToken', 'expiresIn', 'organizationId', 'refreshToken', 'user']);
    expect(body.expiresIn).toBe(900);
    expect(body.organizationId).toBeNull();
    expect(body.user).toEqual({
      id: userId,
      email,
      fullName: 'Test User',
      emailVerified: expect.any(String),
      twoFactorEnabled: false,
    });
    expect(new Date(body.user.emailVerified).toISOString()).toBe(body.user.emailVerified);
  });

  it('signs an access token with userId, email, sessionId (a real session), sub, amr, iss, iat and exp = iat + 900', async () => {
    const { email, userId } = await verifiedUser(t, 'claims');
    const body = json(await loginRaw(t, email, PASSWORD));
    const { header, payload } = decodeJwt(body.accessToken);
    expect(header).toMatchObject({ alg: 'HS256' });
    expect(payload).toEqual({
      userId,
      email,
      sessionId: expect.stringMatching(/^ses_[0-9a-z]{26}$/),
      sub: userId,
      amr: ['pwd'],
      iss: 'tenantry',
      iat: Math.floor(t.clock.now().getTime() / 1000),
      exp: expect.any(Number),
    });
    expect(payload.exp).toBe((payload.iat as number) + 900);

    const sessions = json(await listSessions(t, body.accessToken));
    expect(sessions.total).toBe(1);
    expect(sessions.sessions[0]).toMatchObject({ id: payload.sessionId, isCurrent: true });
  });

  it('signs a refresh token with userId, sessionId, iss, iat and exp = iat + 7 days', async () => {
    const { email, userId } = await verifiedUser(t, 'rclaims');
    const body = json(await loginRaw(t, email, PASSWORD));
    const access = decodeJwt(body.accessToken).payload;
    const { header, payload } = decodeJwt(body.refreshToken);
    expect(header).toMatchObject({ alg: 'HS256' });
    expect(payload).toMatchObject({ userId, sessionId: access.sessionId, iss: 'tenantry', iat: access.iat });
    expect(payload.exp).toBe((payload.iat as number) + 7 * 24 * 60 * 60);
    expect(payload).not.toHaveProperty('email');
  });

  it('creates a new session for each login', async () => {
    const { email } = await verifiedUser(t, 'twice');
    const a = json(await loginRaw(t, email, PASSWORD));
    const b = json(await loginRaw(t, email, PASSWORD));
    expect(decodeJwt(a.accessToken).payload.sessionId).not.toBe(decodeJwt(b.accessToken).payload.sessionId);
    expect(json(await listSessions(t, b.accessToken)).total).toBe(2);
    expect((await getMe(t, a.accessToken)).statusCode).toBe(200);
  });
});

describe('login: lockout', () => {
  it(
    'locks after 5 consecutive failures: even the right password gets 423 with Retry-After',
    async () => {
      const { email } = await verifiedUser(t, 'lock');
      await fail(email, 5);
      const locked = await loginRaw(t, email, PASSWORD);
      expectError(locked, 423, 'ACCOUNT_LOCKED');
      expect(locked.headers['retry-after']).toMatch(/^\d+$/);
      expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(895);
      expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(900);
      // A wrong password while locked is 423 too, and does not extend the lock.
      expectError(await loginRaw(t, email, WRONG), 423, 'ACCOUNT_LOCKED');

      t.clock.advance(5 * MINUTE);
      const later = await loginRaw(t, email, PASSWORD);
      expectError(later, 423, 'ACCOUNT_LOCKED');
      expect(Number(later.headers['retry-after'])).toBeGreaterThanOrEqual(595);
      expect(Number(later.headers['retry-after'])).toBeLessThanOrEqual(600);

      t.clock.advance(10 * MINUTE);
      const after = await loginRaw(t, email, PASSWORD);
      expect(after.statusCode, after.body).toBe(200);
      // The counter was reset: four more failures do not lock.
      await fail(email, 4);
      expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(200);
    },
    SLOW,
  );

  it(
    'the 4th failure does not lock; the 5th does',
    async () => {
      const { email } = await verifiedUser(t, 'lock4');
      await fail(email, 4);
      const fifth = expectError(await loginRaw(t, email, WRONG), 401, 'AUTHENTICATION_ERROR');
      expect(fifth.message).toBe('Invalid email or password');
      expectError(await loginRaw(t, email, PASSWORD), 423, 'ACCOUNT_LOCKED');
    },
    SLOW,
  );

  it(
    'a success in between resets the counter: 4 failures, success, 4 failures is not locked',
    async () => {
      const { email } = await verifiedUser(t, 'reset-count');
      await fail(email, 4);
      expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(200);
      await fail(email, 4);
      expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(200);
    },
    SLOW,
  );

  it(
    'after a lock expires, one failure does not lock again at once',
    async () => {
      const { email } = await verifiedUser(t, 'relock');
      await fail(email, 5);
      t.clock.advance(15 * MINUTE);
      expectError(await loginRaw(t, email, WRONG), 401, 'AUTHENTICATION_ERROR');
      expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(200);
    },
    SLOW,
  );

  it(
    'counts failures of an unverified account too',
    async () => {
      const { email } = await registerUser(t, uniqueEmail('lock-unverified'));
      await fail(email, 5);
      expectError(await loginRaw(t, email, PASSWORD), 423, 'ACCOUNT_LOCKED');
    },
    SLOW,
  );

  it(
    'a lock on one account does not touch another',
    async () => {
      const a = await verifiedUser(t, 'lock-a');
      const b = await verifiedUser(t, 'lock-b');
      await fail(a.email, 5);
      expect((await loginRaw(t, b.email, PASSWORD)).statusCode).toBe(200);
    },
    SLOW,
  );
});
