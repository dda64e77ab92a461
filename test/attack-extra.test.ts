// Attack tests (outside review): the email-change takeover chain, keys after deletion, other users'
// passkeys. (Login CSRF through the hand-off code: src/modules/auth/oauth-handoff-binding.test.ts.)
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from './harness.js';
import { addMember, createApiKey, createOrg, login, PASSWORD, signedInUser, uniqueEmail } from './factories.js';
import { bearer } from './fixtures/auth.js';
import { SoftAuthenticator } from './webauthn.js';
import { t, useOAuthApp } from './fixtures/oauth.js';

useOAuthApp();

const req = (
  method: 'POST' | 'DELETE' | 'GET' | 'PATCH',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
) =>
  t.request({
    method,
    url: `/api/v1${url}`,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    headers,
  });

describe('email change after the owner recovers the account', () => {
  it('full chain: leaked password -> change request -> owner resets -> attacker confirms -> attacker resets password', async () => {
    const victim = await signedInUser(t, 'chain');
    const attacker = await login(t, victim.email, PASSWORD);
    const attackerEmail = uniqueEmail('chain-attacker');
    expect(
      (
        await req(
          'POST',
          '/users/me/email',
          { newEmail: attackerEmail, password: PASSWORD },
          bearer(attacker.accessToken),
        )
      ).statusCode,
    ).toBe(202);
    const token = await t.mail.tokenFrom(attackerEmail, /Confirm your new email/i, '/confirm-email');
    // The owner notices and resets the password: every session ends.
    expect((await req('POST', '/auth/password/forgot', { email: victim.email })).statusCode).toBe(200);
    const resetToken = await t.mail.tokenFrom(victim.email, /Reset your password/, '/reset-password');
    expect(
      (await req('POST', '/auth/password/reset', { token: resetToken, newPassword: 'Owner-New-Pass-1' })).statusCode,
    ).toBe(200);
    // Later, the attacker uses the link in their own mailbox (with the session the reset ended), then
    // resets the password through it.
    const confirmed = await req('POST', '/auth/confirm-email-change', { token }, bearer(attacker.accessToken));
    if (confirmed.statusCode === 200) {
      await req('POST', '/auth/password/forgot', { email: attackerEmail });
      const t2 = await t.mail.tokenFrom(attackerEmail, /Reset your password/, '/reset-password');
      await req('POST', '/auth/password/reset', { token: t2, newPassword: 'Attacker-Pass-1' });
      const taken = await req('POST', '/auth/login', { email: attackerEmail, password: 'Attacker-Pass-1' });
      expect(
        taken.statusCode === 200 && json(taken).user.id === victim.userId,
        'attacker signed in to the victim account',
      ).toBe(false);
    }
    expect(confirmed.statusCode).toBe(401);
    // The link itself died with the reset: even the account's owner, signed in again, cannot use it.
    const owner = await login(t, victim.email, 'Owner-New-Pass-1');
    expect((await req('POST', '/auth/confirm-email-change', { token }, bearer(owner.accessToken))).statusCode).toBe(
      400,
    );
  });
});

describe('account deletion and keys', () => {
  it('a key the deleted user created in an organization they leave stops working', async () => {
    const owner = await signedInUser(t, 'dk-owner');
    const admin = await signedInUser(t, 'dk-admin');
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, admin, 'admin');
    const key = await createApiKey(t, org.id, admin, ['read:projects']);
    expect((await req('GET', `/organizations/${org.id}/projects`, undefined, key.headers)).statusCode).toBe(200);
    expect((await req('DELETE', '/users/me', { password: PASSWORD }, admin.auth)).statusCode).toBe(200);
    expect((await req('GET', `/organizations/${org.id}/projects`, undefined, key.headers)).statusCode).toBe(401);
  });
});

describe("another user's passkeys", () => {
  it('cannot be renamed or deleted', async () => {
    const victim = await signedInUser(t, 'pkown');
    const attacker = await signedInUser(t, 'pkatt');
    const opts = json(await req('POST', '/auth/passkeys/registration/options', undefined, victim.auth));
    const reg = await req(
      'POST',
      '/auth/passkeys/registration/verify',
      { response: new SoftAuthenticator().create(opts as Parameters<SoftAuthenticator['create']>[0]) },
      victim.auth,
    );
    expect(reg.statusCode, reg.body).toBe(201);
    const id = json(reg).id as string;
    expect((await req('PATCH', `/users/me/passkeys/${id}`, { name: 'pwned' }, attacker.auth)).statusCode).toBe(404);
    expect((await req('DELETE', `/users/me/passkeys/${id}`, undefined, attacker.auth)).statusCode).toBe(404);
    const rows = await queryRows<{ name: string }>(t, sql`select name from passkeys where id = ${id}`);
    expect(rows).toEqual([{ name: 'Passkey' }]);
  });
});
