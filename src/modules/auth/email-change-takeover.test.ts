// The email-change takeover, replayed over HTTP with the local OAuth server: an attacker whose
// account has a GitHub link asks to move it to the victim's address; the victim opens the mailed link.
// If that confirmed the change, the attacker's account would now be the victim's address: the
// victim's password reset would hand the victim an account the attacker still enters with GitHub,
// and the victim's Google sign-in would link into it. The confirmation needs the Bearer of the account
// that asked (docs/api.md#email-change), so the chain stops at the link.
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { PASSWORD, signedInUser, uniqueEmail } from '../../../test/factories.js';
import { bearer, getMe } from '../../../test/fixtures/auth.js';
import { identity, linksOf, signIn, t, useOAuthApp } from '../../../test/fixtures/oauth.js';
import { expectError } from '../../../test/expect.js';

useOAuthApp();

const confirm = (token: string, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: '/api/v1/auth/confirm-email-change', payload: { token }, headers });

describe('email change: the account that asked confirms', () => {
  it('an attacker cannot move a GitHub-linked account onto the victim’s address by getting the victim to open the link', async () => {
    // The attacker: an account of their own, with their GitHub account linked.
    const attacker = await signedInUser(t, 'ec-attacker');
    const github = identity(attacker.email);
    const linked = await signIn(github, 'github');
    expect(linked.statusCode, linked.body).toBe(200);
    expect(json(linked).user.id).toBe(attacker.userId);
    expect((await linksOf(attacker.userId)).map((l) => l.provider)).toEqual(['github']);

    // They ask to move it to the victim's address: the link goes to the victim.
    const victimEmail = uniqueEmail('ec-victim');
    const asked = await t.request({
      method: 'POST',
      url: '/api/v1/users/me/email',
      headers: bearer(attacker.accessToken),
      payload: { newEmail: victimEmail, password: PASSWORD },
    });
    expect(asked.statusCode, asked.body).toBe(202);
    const token = await t.mail.tokenFrom(victimEmail, /Confirm your new email address/, '/confirm-email');

    // The victim opens it: not signed in to the attacker's account, so it confirms nothing: without
    // a session 401, signed in to an account of the victim's own 403.
    expectError(await confirm(token), 401, 'AUTHENTICATION_ERROR');
    const bystander = await signedInUser(t, 'ec-victim-other');
    expectError(await confirm(token, bearer(bystander.accessToken)), 403, 'AUTHORIZATION_ERROR');
    expect(json(await getMe(t, attacker.accessToken)).email).toBe(attacker.email);

    // The rest of the chain finds nothing: the victim's Google sign-in makes the victim's own account…
    const victim = await signIn(identity(victimEmail), 'google');
    expect(victim.statusCode, victim.body).toBe(200);
    expect(json(victim).user.id).not.toBe(attacker.userId);
    expect(json(victim).user.email).toBe(victimEmail);
    expect(await linksOf(attacker.userId)).toHaveLength(1);
    // …the attacker's GitHub still opens only the attacker's account, at the attacker's address…
    const back = await signIn(github, 'github');
    expect(back.statusCode, back.body).toBe(200);
    expect(json(back).user).toMatchObject({ id: attacker.userId, email: attacker.email });
    // …and the link, now confirmed by the attacker's own session, meets a registered address.
    expectError(await confirm(token, bearer(attacker.accessToken)), 409, 'CONFLICT');
    expect(json(await getMe(t, attacker.accessToken)).email).toBe(attacker.email);
  });
});
