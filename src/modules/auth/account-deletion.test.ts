// DELETE /users/me (docs/api.md#account-deletion) over HTTP, on a real database.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import {
  addMember,
  auditOf,
  createApiKey,
  createOrg,
  eventsOf,
  invite,
  keyState,
  PASSWORD,
  registerUser,
  setPlan,
  signedInUser,
} from '../../../test/factories.js';
import { bearer, getMe } from '../../../test/fixtures/auth.js';
import { totpCode } from '../../../test/totp.js';
import { SoftAuthenticator } from '../../../test/webauthn.js';
import { expectError } from '../../../test/expect.js';

useApp({ env: { WEBHOOK_WORKER: 'off' } });

const deleteMe = (accessToken: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request({ method: 'DELETE', url: '/api/v1/users/me', headers: { ...bearer(accessToken), ...headers }, payload });
const post = (url: string, payload: Record<string, unknown> | undefined, accessToken: string) =>
  t.request({ method: 'POST', url: `/api/v1${url}`, headers: bearer(accessToken), ...(payload ? { payload } : {}) });
const count = async (table: string, column: string, value: string) =>
  Number(
    (
      await queryRows<{ n: number | string }>(
        t,
        sql`select count(*)::int as n from ${sql.identifier(table)} where ${sql.identifier(column)} = ${value}`,
      )
    )[0]!.n,
  );

/** An organization of `owner` on a paid subscription of the test provider; answers its subscription id. */
async function subscribe(owner: { auth: Record<string, string> }, orgId: string) {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/billing/checkout`,
    headers: owner.auth,
    payload: { priceId: 'price_pro', successUrl: 'http://app.test/billing', cancelUrl: 'http://app.test/billing' },
  });
  expect(res.statusCode, res.body).toBe(200);
  const path = new URL(json(res).data.url as string).pathname;
  const done = await t.request({
    method: 'POST',
    url: `${path}/complete`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  });
  expect(done.statusCode, done.body).toBe(303);
  const [row] = await queryRows<{ subscription_id: string }>(
    t,
    sql`select subscription_id from subscriptions where organization_id = ${orgId}`,
  );
  return row!.subscription_id;
}

describe('deleting your account', () => {
  it('is refused (409) while you own an organization with other members, and nothing changes', async () => {
    const owner = await signedInUser(t, 'del-owner');
    const member = await signedInUser(t, 'del-member');
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, member, 'member');
    expectError(await deleteMe(owner.accessToken, { password: PASSWORD }), 409, 'CONFLICT');
    expect((await getMe(t, owner.accessToken)).statusCode).toBe(200);
    expect(await count('memberships', 'organization_id', org.id)).toBe(2);
  });

  it('refuses a wrong password (401), a missing one (400) and an anonymous caller (401)', async () => {
    const user = await signedInUser(t, 'del-wrong');
    expectError(await deleteMe(user.accessToken, { password: 'Wrong-Password-1' }), 401, 'AUTHENTICATION_ERROR');
    expectError(await deleteMe(user.accessToken, {}), 400, 'VALIDATION_ERROR');
    expectError(
      await t.request({ method: 'DELETE', url: '/api/v1/users/me', payload: { password: PASSWORD } }),
      401,
      'AUTHENTICATION_ERROR',
    );
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
  });

  it('deletes the account and what hangs from it, leaves the shared organizations with their events, in one go', async () => {
    const user = await signedInUser(t, 'del-user');
    const other = await signedInUser(t, 'del-other');
    // Alone in `solo` (on a paid plan); an admin with an API key in `shared`, owned by `other`.
    const solo = await createOrg(t, user);
    const subscriptionId = await subscribe(user, solo.id);
    const soloKey = await createApiKey(t, solo.id, user, ['read:projects']);
    const shared = await createOrg(t, other);
    await setPlan(t, shared.id, 'pro');
    const membership = await addMember(t, shared.id, other, user, 'admin');
    const key = await createApiKey(t, shared.id, user, ['read:projects']);
    const options = json(await post('/auth/passkeys/registration/options', undefined, user.accessToken));
    const authenticator = new SoftAuthenticator();
    expect(
      (
        await post(
          '/auth/passkeys/registration/verify',
          { response: authenticator.create(options as never) },
          user.accessToken,
        )
      ).statusCode,
    ).toBe(201);
    const second = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: user.email, password: PASSWORD },
    });
    expect(second.statusCode).toBe(200);
    expect((await auditOf(t, shared.id)).some((e) => e.actorId === user.userId && e.ipAddress !== null)).toBe(true);

    const res = await deleteMe(user.accessToken, { password: PASSWORD }, { 'x-session-mode': 'cookie' });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ deleted: true });
    expect(String(res.headers['set-cookie'])).toMatch(/^tenantry_refresh=; .*Max-Age=0/);

    // The person, their sessions (both), passkeys and tokens are gone; no token works.
    expectError(await getMe(t, user.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await getMe(t, json(second).accessToken as string), 401, 'AUTHENTICATION_ERROR');
    const refreshed = await t.request({
      method: 'POST',
      url: '/api/v1/auth/refresh',
      payload: { refreshToken: user.refreshToken },
    });
    expect(refreshed.statusCode).toBe(401);
    for (const table of ['users', 'sessions', 'passkeys', 'memberships', 'email_tokens', 'oauth_accounts']) {
      expect(await count(table, table === 'users' ? 'id' : 'user_id', user.userId), table).toBe(0);
    }
    // The solo organization is deleted, its subscription canceled at the provider, its key gone.
    expect(await count('organizations', 'id', solo.id)).toBe(0);
    expect((await t.deps.payments.getSubscription(subscriptionId)).status).toBe('canceled');
    expect(
      (await t.request({ method: 'GET', url: '/api/v1/api-keys/x/usage', headers: soloKey.headers })).statusCode,
    ).toBe(401);
    // The shared organization keeps its owner; the person left it: member.removed, the key revoked.
    expect(await count('memberships', 'organization_id', shared.id)).toBe(1);
    const events = await eventsOf(t, shared.id);
    expect(events.find((e) => e.type === 'member.removed')?.data).toMatchObject({
      memberId: membership.id,
      userId: user.userId,
      role: 'admin',
      reason: 'account_deleted',
    });
    expect(events.find((e) => e.type === 'api_key.revoked')?.data).toMatchObject({
      apiKeyId: key.id,
      createdBy: user.userId,
    });
    expect(await keyState(t, key.id)).toMatchObject({ isActive: false });
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/organizations/${shared.id}/projects`, headers: key.headers }))
        .statusCode,
    ).toBe(401);
    // Their audit entries keep the actor id, not where they came from.
    const entries = (await auditOf(t, shared.id)).filter((e) => e.actorId === user.userId);
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((e) => e.ipAddress === null && e.userAgent === null)).toBe(true);
    expect(entries.map((e) => e.action)).toContain('DELETE /api/v1/users/me');
    // The passkey signs in no more; the address registers again.
    const start = json(await t.request({ method: 'POST', url: '/api/v1/auth/passkeys/authentication/options' }));
    const signIn = await t.request({
      method: 'POST',
      url: '/api/v1/auth/passkeys/authentication/verify',
      payload: { challengeId: start.challengeId, response: authenticator.get(start.options) },
    });
    expect(signIn.statusCode).toBe(401);
    await registerUser(t, user.email);
    // The other owner is untouched.
    expect((await getMe(t, other.accessToken)).statusCode).toBe(200);
  });

  it('racing a member joining, either refuses (409) or deletes the organization before the join (run on PostgreSQL for real parallelism)', async () => {
    for (let round = 0; round < 6; round++) {
      const owner = await signedInUser(t, `del-race-${round}`);
      const joiner = await signedInUser(t, `del-joiner-${round}`);
      const org = await createOrg(t, owner);
      const { token } = await invite(t, org.id, owner, joiner.email, 'member');
      const [deleted, joined] = await Promise.all([
        deleteMe(owner.accessToken, { password: PASSWORD }),
        t.request({ method: 'POST', url: '/api/v1/invitations/accept', headers: joiner.auth, payload: { token } }),
      ]);
      const members = await count('memberships', 'organization_id', org.id);
      if (deleted.statusCode === 200) {
        // The organization went first, its invitations with it: the join finds no invitation.
        expectError(joined, 400, 'VALIDATION_ERROR');
        expect(await count('organizations', 'id', org.id)).toBe(0);
        expect(members).toBe(0);
      } else {
        expectError(deleted, 409, 'CONFLICT');
        expect(joined.statusCode, joined.body).toBe(200);
        expect(members).toBe(2);
        expect(await count('users', 'id', owner.userId)).toBe(1);
      }
    }
  });

  it('cancels the subscription only once decided: a join arriving during the provider call waits, then finds nothing', async () => {
    const owner = await signedInUser(t, 'del-slow');
    const joiner = await signedInUser(t, 'del-slow-joiner');
    const org = await createOrg(t, owner);
    const subscriptionId = await subscribe(owner, org.id);
    const { token } = await invite(t, org.id, owner, joiner.email, 'member');
    // A slow provider: the invitation is accepted while the cancellation is in flight.
    const payments = t.deps.payments;
    const original = payments.cancelNow.bind(payments);
    let join: Promise<Awaited<ReturnType<typeof t.request>>> | undefined;
    payments.cancelNow = async (id: string) => {
      join = t.request({ method: 'POST', url: '/api/v1/invitations/accept', headers: joiner.auth, payload: { token } });
      return original(id);
    };
    try {
      const res = await deleteMe(owner.accessToken, { password: PASSWORD });
      expect(res.statusCode, res.body).toBe(200);
    } finally {
      payments.cancelNow = original;
    }
    expectError(await join!, 400, 'VALIDATION_ERROR');
    expect(await count('organizations', 'id', org.id)).toBe(0);
    expect((await t.deps.payments.getSubscription(subscriptionId)).status).toBe('canceled');
  });

  it('takes a two-factor code from an account without a password, and refuses one with neither (400)', async () => {
    const user = await signedInUser(t, 'del-2fa');
    const setup = await post('/auth/two-factor/setup', { password: PASSWORD }, user.accessToken);
    const secret = json(setup).secret as string;
    expect(
      (await post('/auth/two-factor/verify', { code: totpCode(secret, t.clock.now()) }, user.accessToken)).statusCode,
    ).toBe(200);
    t.clock.advance(30 * 1000);
    // As a social sign-in leaves it: no password.
    await t.deps.db.execute(sql`update users set password_hash = null where id = ${user.userId}`);
    await t.deps.userCache.changed(user.userId);
    expectError(await deleteMe(user.accessToken, { password: PASSWORD }), 400, 'VALIDATION_ERROR');
    expectError(await deleteMe(user.accessToken, { twoFactorCode: '000000' }), 401, 'AUTHENTICATION_ERROR');
    const res = await deleteMe(user.accessToken, { twoFactorCode: totpCode(secret, t.clock.now()) });
    expect(res.statusCode, res.body).toBe(200);
    expect(await count('users', 'id', user.userId)).toBe(0);

    const bare = await signedInUser(t, 'del-bare');
    await t.deps.db.execute(sql`update users set password_hash = null where id = ${bare.userId}`);
    await t.deps.userCache.changed(bare.userId);
    expectError(await deleteMe(bare.accessToken, { twoFactorCode: '000000' }), 400, 'VALIDATION_ERROR');
  });
});
