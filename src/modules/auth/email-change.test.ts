// Moving an account to a new email address over HTTP (docs/api.md#email-change), with the real mails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { login, PASSWORD, registerUser, signedInUser, uniqueEmail } from '../../../test/factories.js';
import { bearer, expectError, getMe } from '../../../test/fixtures/auth.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const SUBJECT = /Confirm your new email address/;
const NOTICE = /The email address of your account has changed/;

const requestChange = (accessToken: string, newEmail: string, password = PASSWORD) =>
  t.request({ method: 'POST', url: '/api/v1/users/me/email', headers: bearer(accessToken), payload: { newEmail, password } });
const confirm = (token: string) => t.request({ method: 'POST', url: '/api/v1/auth/confirm-email-change', payload: { token } });

/** Asks for the change (202 checked) and reads the token of the mail to the new address. */
async function changeToken(accessToken: string, newEmail: string) {
  const res = await requestChange(accessToken, newEmail);
  expect(res.statusCode, res.body).toBe(202);
  return t.mail.tokenFrom(newEmail, SUBJECT, 'http://app.test/confirm-email');
}

describe('email change', () => {
  it('mails the new address, moves the account on confirmation, notifies the old address, keeps the sessions', async () => {
    const user = await signedInUser(t, 'chg');
    const newEmail = uniqueEmail('chg-new');
    const token = await changeToken(user.accessToken, newEmail);
    // Nothing has changed yet.
    expect(json(await getMe(t, user.accessToken)).email).toBe(user.email);
    const res = await confirm(token);
    expect(res.statusCode, res.body).toBe(200);
    const me = json(await getMe(t, user.accessToken));
    expect(me.email).toBe(newEmail);
    expect(me.emailVerified).toBe(t.clock.now().toISOString());
    const notice = await t.mail.waitFor(user.email, NOTICE);
    expect(notice.decoded).toContain(newEmail);
    // Signing in: the new address works, the old one does not.
    await login(t, newEmail);
    expectError(await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: PASSWORD } }), 401, 'AUTHENTICATION_ERROR');
    // The old address may register again.
    await registerUser(t, user.email);
  });

  it('refuses a replayed token (400)', async () => {
    const user = await signedInUser(t, 'chg-replay');
    const token = await changeToken(user.accessToken, uniqueEmail('chg-replay-new'));
    expect((await confirm(token)).statusCode).toBe(200);
    expectError(await confirm(token), 400, 'VALIDATION_ERROR');
  });

  it('refuses an expired token (24 hours, app clock) and an unknown one (400)', async () => {
    const user = await signedInUser(t, 'chg-expired');
    const token = await changeToken(user.accessToken, uniqueEmail('chg-expired-new'));
    t.clock.advance(24 * 60 * 60 * 1000);
    expectError(await confirm(token), 400, 'VALIDATION_ERROR');
    expectError(await confirm('x'.repeat(43)), 400, 'VALIDATION_ERROR');
    // (The access token has expired meanwhile: a new sign-in reads the account.)
    expect((await login(t, user.email)).user.email).toBe(user.email);
  });

  it('a newer request voids the earlier link', async () => {
    const user = await signedInUser(t, 'chg-newer');
    const first = await changeToken(user.accessToken, uniqueEmail('chg-first'));
    const secondEmail = uniqueEmail('chg-second');
    const second = await changeToken(user.accessToken, secondEmail);
    expectError(await confirm(first), 400, 'VALIDATION_ERROR');
    expect((await confirm(second)).statusCode).toBe(200);
    expect(json(await getMe(t, user.accessToken)).email).toBe(secondEmail);
  });

  it('a password change voids a pending change asked with the old password (it may have leaked)', async () => {
    const user = await signedInUser(t, 'chg-pw');
    const token = await changeToken(user.accessToken, uniqueEmail('chg-pw-new'));
    const changed = await t.request({
      method: 'PUT',
      url: '/api/v1/users/me/password',
      headers: bearer(user.accessToken),
      payload: { currentPassword: PASSWORD, newPassword: 'Another-Horse-7' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expectError(await confirm(token), 400, 'VALIDATION_ERROR');
    expect(json(await getMe(t, user.accessToken)).email).toBe(user.email);
  });

  it('refuses a wrong password (401), the same address (400), and a taken address at request (409)', async () => {
    const user = await signedInUser(t, 'chg-refuse');
    const other = await registerUser(t, uniqueEmail('chg-taken'));
    expectError(await requestChange(user.accessToken, uniqueEmail('chg-x'), 'Wrong-Password-1'), 401, 'AUTHENTICATION_ERROR');
    expectError(await requestChange(user.accessToken, user.email.toUpperCase()), 400, 'VALIDATION_ERROR');
    expectError(await requestChange(user.accessToken, other.email.toUpperCase()), 409, 'CONFLICT');
    expectError(await requestChange(user.accessToken, 'not-an-email'), 400, 'VALIDATION_ERROR');
  });

  it('answers 409 at confirmation when the address was registered meanwhile, and the account keeps its address', async () => {
    const user = await signedInUser(t, 'chg-race');
    const newEmail = uniqueEmail('chg-race-new');
    const token = await changeToken(user.accessToken, newEmail);
    await registerUser(t, newEmail);
    expectError(await confirm(token), 409, 'CONFLICT');
    expect(json(await getMe(t, user.accessToken)).email).toBe(user.email);
  });
});
