// Attack tests (outside review): email change, account deletion, export.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from './harness.js';
import { t, useApp } from './fixtures/app.js';
import { addMember, createOrg, invite, login, PASSWORD, registerUser, signedInUser, uniqueEmail } from './factories.js';
import { bearer } from './fixtures/auth.js';
import { totpCode } from './totp.js';

useApp();

const req = (method: 'POST' | 'DELETE' | 'GET', url: string, payload?: unknown, accessToken?: string) =>
  t.request({
    method,
    url: `/api/v1${url}`,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    headers: accessToken ? bearer(accessToken) : {},
  });

async function askChange(accessToken: string, newEmail: string) {
  const res = await req('POST', '/users/me/email', { newEmail, password: PASSWORD }, accessToken);
  expect(res.statusCode, res.body).toBe(202);
  return t.mail.tokenFrom(newEmail, /Confirm your new email/i, '/confirm-email');
}
// Confirming needs the Bearer of the account that asked (docs/api.md#email-change).
const confirm = (token: string, accessToken?: string) =>
  req('POST', '/auth/confirm-email-change', { token }, accessToken);

describe('email change', () => {
  it("to an address that is someone else's: 409 (also in another case)", async () => {
    const a = await signedInUser(t, 'ecA');
    const b = await signedInUser(t, 'ecB');
    expect(
      (await req('POST', '/users/me/email', { newEmail: b.email, password: PASSWORD }, a.accessToken)).statusCode,
    ).toBe(409);
    expect(
      (await req('POST', '/users/me/email', { newEmail: b.email.toUpperCase(), password: PASSWORD }, a.accessToken))
        .statusCode,
    ).toBe(409);
  });

  it('token replay: the second confirm is 400', async () => {
    const a = await signedInUser(t, 'ecR');
    const token = await askChange(a.accessToken, uniqueEmail('ecR-new'));
    expect((await confirm(token, a.accessToken)).statusCode).toBe(200);
    expect((await confirm(token, a.accessToken)).statusCode).toBe(400);
  });

  it('an address registered by its owner between request and confirm: 409, and the owner keeps it', async () => {
    const attacker = await signedInUser(t, 'ecAtt');
    const victimEmail = uniqueEmail('ecVictim');
    const token = await askChange(attacker.accessToken, victimEmail);
    const victim = await registerUser(t, victimEmail);
    expect((await confirm(token, attacker.accessToken)).statusCode).toBe(409);
    const rows = await queryRows<{ id: string }>(
      t,
      sql`select id from users where lower(email) = ${victimEmail.toLowerCase()}`,
    );
    expect(rows.map((r) => r.id)).toEqual([victim.userId]);
  });

  it('after the account is deleted, the pending change link does nothing', async () => {
    const a = await signedInUser(t, 'ecDel');
    const newEmail = uniqueEmail('ecDel-new');
    const token = await askChange(a.accessToken, newEmail);
    expect((await req('DELETE', '/users/me', { password: PASSWORD }, a.accessToken)).statusCode).toBe(200);
    // The deleted account's session is gone with it; the address was never taken.
    expect((await confirm(token, a.accessToken)).statusCode).toBe(401);
    expect((await confirm(token)).statusCode).toBe(401);
    expect(await queryRows(t, sql`select id from users where lower(email) = ${newEmail.toLowerCase()}`)).toEqual([]);
  });

  it('a password reset (the owner recovering from a leaked password) voids a pending email change asked with the old password', async () => {
    const victim = await signedInUser(t, 'ecReset');
    // The attacker, holding the leaked password, signs in and asks to move the account to their address.
    const attacker = await login(t, victim.email, PASSWORD);
    const attackerEmail = uniqueEmail('ecReset-attacker');
    const token = await askChange(attacker.accessToken, attackerEmail);
    // The owner resets the password (which signs every session out).
    expect((await req('POST', '/auth/password/forgot', { email: victim.email })).statusCode).toBe(200);
    const resetToken = await t.mail.tokenFrom(victim.email, /Reset your password/, '/reset-password');
    expect(
      (await req('POST', '/auth/password/reset', { token: resetToken, newPassword: 'Brand-New-Pass-77' })).statusCode,
    ).toBe(200);
    // The attacker's link from their own mailbox must no longer take the account: the attacker's
    // session ended with the reset, and the link died with it, even for the owner signed in again.
    expect((await confirm(token, attacker.accessToken)).statusCode).toBe(401);
    const owner = await login(t, victim.email, 'Brand-New-Pass-77');
    const res = await confirm(token, owner.accessToken);
    expect(res.statusCode, res.body).toBe(400);
    const [row] = await queryRows<{ email: string }>(t, sql`select email from users where id = ${victim.userId}`);
    expect(row!.email.toLowerCase()).toBe(victim.email.toLowerCase());
  });

  it('a password change voids a pending email change asked with the old password', async () => {
    const victim = await signedInUser(t, 'ecChg');
    const attacker = await login(t, victim.email, PASSWORD);
    const attackerEmail = uniqueEmail('ecChg-attacker');
    const token = await askChange(attacker.accessToken, attackerEmail);
    const chg = await t.request({
      method: 'PUT',
      url: '/api/v1/users/me/password',
      headers: bearer(victim.accessToken),
      payload: { currentPassword: PASSWORD, newPassword: 'Brand-New-Pass-78' },
    });
    expect(chg.statusCode, chg.body).toBe(200);
    // The owner's session (the one that changed the password) stays; the link is dead for it too.
    const res = await confirm(token, victim.accessToken);
    expect(res.statusCode, res.body).toBe(400);
  });
});

describe('account deletion', () => {
  it('owner of an organization with other members: 409 and nothing deleted', async () => {
    const owner = await signedInUser(t, 'delO');
    const m = await signedInUser(t, 'delM');
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, m, 'member');
    const res = await req('DELETE', '/users/me', { password: PASSWORD }, owner.accessToken);
    expect(res.statusCode, res.body).toBe(409);
    expect((await queryRows(t, sql`select id from organizations where id = ${org.id}`)).length).toBe(1);
    expect((await queryRows(t, sql`select id from users where id = ${owner.userId}`)).length).toBe(1);
  });

  it('racing an invitation acceptance: no organization is left without an owner, no member orphaned', async () => {
    for (let i = 0; i < 3; i++) {
      const owner = await signedInUser(t, 'delRace');
      const joiner = await signedInUser(t, 'delJoin');
      const org = await createOrg(t, owner);
      const { token } = await invite(t, org.id, owner, joiner.email, 'member');
      const [del, acc] = await Promise.all([
        req('DELETE', '/users/me', { password: PASSWORD }, owner.accessToken),
        req('POST', '/invitations/accept', { token }, joiner.accessToken),
      ]);
      const owners = await queryRows<{ n: number }>(
        t,
        sql`select count(*)::int as n from memberships where organization_id = ${org.id} and role = 'owner'`,
      );
      const members = await queryRows<{ n: number }>(
        t,
        sql`select count(*)::int as n from memberships where organization_id = ${org.id}`,
      );
      if (members[0]!.n > 0) expect(owners[0]!.n, `${del.statusCode} ${acc.statusCode}`).toBe(1);
    }
  });

  it('racing an ownership transfer to the deleting member: no ownerless organization', async () => {
    for (let i = 0; i < 3; i++) {
      const owner = await signedInUser(t, 'trO');
      const m = await signedInUser(t, 'trM');
      const org = await createOrg(t, owner);
      const membership = await addMember(t, org.id, owner, m, 'admin');
      await Promise.all([
        req('DELETE', '/users/me', { password: PASSWORD }, m.accessToken),
        req('POST', `/organizations/${org.id}/transfer-ownership`, { memberId: membership.id }, owner.accessToken),
      ]);
      const owners = await queryRows<{ n: number }>(
        t,
        sql`select count(*)::int as n from memberships where organization_id = ${org.id} and role = 'owner'`,
      );
      const members = await queryRows<{ n: number }>(
        t,
        sql`select count(*)::int as n from memberships where organization_id = ${org.id}`,
      );
      if (members[0]!.n > 0) expect(owners[0]!.n).toBe(1);
    }
  });

  it('after deletion, the old access and refresh tokens are dead, also after the address registers again', async () => {
    const u = await signedInUser(t, 'delTok');
    expect((await req('DELETE', '/users/me', { password: PASSWORD }, u.accessToken)).statusCode).toBe(200);
    await registerUser(t, u.email);
    expect((await req('GET', '/users/me', undefined, u.accessToken)).statusCode).toBe(401);
    expect((await req('POST', '/auth/refresh', { refreshToken: u.refreshToken })).statusCode).toBe(401);
  });
});

describe('export', () => {
  it('carries no secret and nothing of another user', async () => {
    const u = await signedInUser(t, 'exp');
    const other = await signedInUser(t, 'expOther');
    const org = await createOrg(t, u);
    await addMember(t, org.id, u, other, 'member');
    const setup = await req('POST', '/auth/two-factor/setup', { password: PASSWORD }, u.accessToken);
    const secret = json(setup).secret as string;
    const enable = await req(
      'POST',
      '/auth/two-factor/verify',
      { code: totpCode(secret, t.clock.now()) },
      u.accessToken,
    );
    expect(enable.statusCode, enable.body).toBe(200);
    const backup = (json(enable).backupCodes as string[] | undefined) ?? [];
    const res = await req('GET', '/users/me/export', undefined, u.accessToken);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.body;
    const [row] = await queryRows<{ password_hash: string }>(
      t,
      sql`select password_hash from users where id = ${u.userId}`,
    );
    const hashes = await queryRows<{ token_hash: string }>(
      t,
      sql`select refresh_token_hash as token_hash from sessions where user_id = ${u.userId}`,
    ).catch(() => []);
    for (const s of [
      row!.password_hash,
      secret,
      u.refreshToken,
      u.accessToken,
      PASSWORD,
      ...backup,
      ...hashes.map((h) => h.token_hash),
      other.email,
      other.userId,
    ]) {
      if (s) expect(body.includes(s), `export contains ${s.slice(0, 12)}…`).toBe(false);
    }
    expect(body).not.toMatch(/\$argon2/);
    expect(body).not.toMatch(/passwordHash|password_hash|secret/i);
  });
});
