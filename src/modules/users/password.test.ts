// PUT /users/me/password (docs/api.md#password-change "password change keeps only the current session").
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { login, PASSWORD, signedInUser } from '../../../test/factories.js';
import { expectError } from '../../../test/expect.js';

useApp();

const NEW_PASSWORD = 'Battery-Staple-42';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const changePassword = (token: string, payload: unknown) =>
  t.request({ method: 'PUT', url: '/api/v1/users/me/password', headers: bearer(token), payload: payload as object });
const getMe = (token: string) => t.request({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) });
const tryLogin = (email: string, password: string) =>
  t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
const refresh = (refreshToken: string) =>
  t.request({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken } });

/** The password is still `password`: it signs in, and `NEW_PASSWORD` does not. */
async function expectPasswordIs(email: string, password: string, not: string) {
  expect((await tryLogin(email, password)).statusCode).toBe(200);
  const refused = await tryLogin(email, not);
  expectError(refused, 401, 'AUTHENTICATION_ERROR');
  expect(json(refused).error.message).toBe('Invalid email or password');
}

describe('PUT /users/me/password', () => {
  it('refuses a wrong current password with 401 and changes nothing', async () => {
    const u = await signedInUser(t, 'wrongpw');
    expectError(
      await changePassword(u.accessToken, { currentPassword: 'Not-The-Password-1', newPassword: NEW_PASSWORD }),
      401,
      'AUTHENTICATION_ERROR',
    );
    // The caller is not signed out by a wrong current password.
    expect((await getMe(u.accessToken)).statusCode).toBe(200);
    await expectPasswordIs(u.email, PASSWORD, NEW_PASSWORD);
  });

  it('refuses a new password equal to the current one with 400', async () => {
    const u = await signedInUser(t, 'samepw');
    expectError(
      await changePassword(u.accessToken, { currentPassword: PASSWORD, newPassword: PASSWORD }),
      400,
      'VALIDATION_ERROR',
      'newPassword',
    );
  });

  it('refuses a new password that breaks the policy or the 8-128 bounds with 400', async () => {
    const u = await signedInUser(t, 'weakpw');
    for (const weak of ['alllowercase-1', 'ALLUPPERCASE-1', 'No-Digits-Here', 'Sh0rt-A', `Aa1-${'x'.repeat(125)}`]) {
      expectError(
        await changePassword(u.accessToken, { currentPassword: PASSWORD, newPassword: weak }),
        400,
        'VALIDATION_ERROR',
        'newPassword',
      );
    }
    await expectPasswordIs(u.email, PASSWORD, 'alllowercase-1');
  });

  it('refuses a current password shorter than 8 characters, and missing or unknown fields, with 400', async () => {
    const u = await signedInUser(t, 'shortpw');
    expectError(
      await changePassword(u.accessToken, { currentPassword: 'Short-1', newPassword: NEW_PASSWORD }),
      400,
      'VALIDATION_ERROR',
      'currentPassword',
    );
    expectError(
      await changePassword(u.accessToken, { newPassword: NEW_PASSWORD }),
      400,
      'VALIDATION_ERROR',
      'currentPassword',
    );
    expectError(
      await changePassword(u.accessToken, { currentPassword: PASSWORD }),
      400,
      'VALIDATION_ERROR',
      'newPassword',
    );
    expectError(
      await changePassword(u.accessToken, {
        currentPassword: PASSWORD,
        newPassword: NEW_PASSWORD,
        logoutOthers: false,
      }),
      400,
      'VALIDATION_ERROR',
      'logoutOthers',
    );
    await expectPasswordIs(u.email, PASSWORD, NEW_PASSWORD);
  });

  it('changes the password and signs out every other session, keeping the current one', async () => {
    const u = await signedInUser(t, 'changepw');
    const other = await login(t, u.email);
    const current = await login(t, u.email);
    for (const s of [u, other, current]) expect((await getMe(s.accessToken)).statusCode).toBe(200);

    const res = await changePassword(current.accessToken, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ message: expect.stringMatching(/\S/) });

    // Other sessions: access tokens refused at once, refresh tokens refused too.
    for (const s of [u, other]) {
      expectError(await getMe(s.accessToken), 401, 'AUTHENTICATION_ERROR');
      expectError(await refresh(s.refreshToken), 401, 'AUTHENTICATION_ERROR');
    }
    // The current session goes on, and can still refresh.
    expect((await getMe(current.accessToken)).statusCode).toBe(200);
    const renewed = await refresh(current.refreshToken);
    expect(renewed.statusCode, renewed.body).toBe(200);
    expect((await getMe(json(renewed).accessToken)).statusCode).toBe(200);

    // The new password signs in; the old one does not.
    await expectPasswordIs(u.email, NEW_PASSWORD, PASSWORD);

    const sessions = await t.request({
      method: 'GET',
      url: '/api/v1/users/me/sessions',
      headers: bearer(json(renewed).accessToken),
    });
    expect(sessions.statusCode).toBe(200);
    // The current session plus the one opened by the successful sign-in above.
    expect(json(sessions).total).toBe(2);
  });
});
