// Moving an account to a new email address over HTTP (docs/api.md#email-change), with the real mails.
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { login, PASSWORD, registerUser, signedInUser, uniqueEmail } from '../../../test/factories.js';
import { bearer, getMe } from '../../../test/fixtures/auth.js';
import { expectError } from '../../../test/expect.js';

useApp();

const SUBJECT = /Confirm your new email address/;
const NOTICE = /The email address of your account has changed/;

const requestChange = (accessToken: string, newEmail: string, password = PASSWORD) =>
  t.request({
    method: 'POST',
    url: '/api/v1/users/me/email',
    headers: bearer(accessToken),
    payload: { newEmail, password },
  });
const confirm = (token: string, accessToken?: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/auth/confirm-email-change',
    payload: { token },
    headers: accessToken ? bearer(accessToken) : {},
  });

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
    const res = await confirm(token, user.accessToken);
    expect(res.statusCode, res.body).toBe(200);
    const me = json(await getMe(t, user.accessToken));
    expect(me.email).toBe(newEmail);
    expect(me.emailVerified).toBe(t.clock.now().toISOString());
    const notice = await t.mail.waitFor(user.email, NOTICE);
    expect(notice.decoded).toContain(newEmail);
    // Signing in: the new address works, the old one does not.
    await login(t, newEmail);
    expectError(
      await t.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: user.email, password: PASSWORD },
      }),
      401,
      'AUTHENTICATION_ERROR',
    );
    // The old address may register again.
    await registerUser(t, user.email);
  });

  it('refuses a replayed token (400)', async () => {
    const user = await signedInUser(t, 'chg-replay');
    const token = await changeToken(user.accessToken, uniqueEmail('chg-replay-new'));
    expect((await confirm(token, user.accessToken)).statusCode).toBe(200);
    expectError(await confirm(token, user.accessToken), 400, 'VALIDATION_ERROR');
  });

  it('refuses an expired token (24 hours, app clock) and an unknown one (400)', async () => {
    const user = await signedInUser(t, 'chg-expired');
    const token = await changeToken(user.accessToken, uniqueEmail('chg-expired-new'));
    t.clock.advance(24 * 60 * 60 * 1000);
    // (The access token has expired meanwhile: a new sign-in confirms.)
    const again = await login(t, user.email);
    expectError(await confirm(token, again.accessToken), 400, 'VALIDATION_ERROR');
    expectError(await confirm('x'.repeat(43), again.accessToken), 400, 'VALIDATION_ERROR');
    expect(json(await getMe(t, again.accessToken)).email).toBe(user.email);
  });

  it('a newer request voids the earlier link', async () => {
    const user = await signedInUser(t, 'chg-newer');
    const first = await changeToken(user.accessToken, uniqueEmail('chg-first'));
    const secondEmail = uniqueEmail('chg-second');
    const second = await changeToken(user.accessToken, secondEmail);
    expectError(await confirm(first, user.accessToken), 400, 'VALIDATION_ERROR');
    expect((await confirm(second, user.accessToken)).statusCode).toBe(200);
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
    expectError(await confirm(token, user.accessToken), 400, 'VALIDATION_ERROR');
    expect(json(await getMe(t, user.accessToken)).email).toBe(user.email);
  });

  it('refuses a wrong password (401), the same address (400), and a taken address at request (409)', async () => {
    const user = await signedInUser(t, 'chg-refuse');
    const other = await registerUser(t, uniqueEmail('chg-taken'));
    expectError(
      await requestChange(user.accessToken, uniqueEmail('chg-x'), 'Wrong-Password-1'),
      401,
      'AUTHENTICATION_ERROR',
    );
    expectError(await requestChange(user.accessToken, user.email.toUpperCase()), 400, 'VALIDATION_ERROR');
    expectError(await requestChange(user.accessToken, other.email.toUpperCase()), 409, 'CONFLICT');
    expectError(await requestChange(user.accessToken, 'not-an-email'), 400, 'VALIDATION_ERROR');
  });

  it('answers 409 at confirmation when the address was registered meanwhile, and the account keeps its address', async () => {
    const user = await signedInUser(t, 'chg-race');
    const newEmail = uniqueEmail('chg-race-new');
    const token = await changeToken(user.accessToken, newEmail);
    await registerUser(t, newEmail);
    expectError(await confirm(token, user.accessToken), 409, 'CONFLICT');
    expect(json(await getMe(t, user.accessToken)).email).toBe(user.email);
  });

  it('is confirmed only by the account that asked: 401 without a token, 403 with another account’s, and the link stays usable', async () => {
    const user = await signedInUser(t, 'chg-owner');
    const other = await signedInUser(t, 'chg-other');
    const newEmail = uniqueEmail('chg-owner-new');
    const token = await changeToken(user.accessToken, newEmail);
    const anonymous = expectError(await confirm(token), 401, 'AUTHENTICATION_ERROR');
    expect(anonymous.message).toBe('Authentication required');
    const foreign = expectError(await confirm(token, other.accessToken), 403, 'AUTHORIZATION_ERROR');
    expect(foreign.message).toBe('This link is for another account');
    // Nothing moved, nobody was told, and the owner's link still works.
    expect(json(await getMe(t, user.accessToken)).email).toBe(user.email);
    expect(json(await getMe(t, other.accessToken)).email).toBe(other.email);
    expect(t.mail.mails.filter((m) => m.to.includes(user.email) && NOTICE.test(m.subject))).toEqual([]);
    expect((await confirm(token, user.accessToken)).statusCode).toBe(200);
    expect(json(await getMe(t, user.accessToken)).email).toBe(newEmail);
  });
});
