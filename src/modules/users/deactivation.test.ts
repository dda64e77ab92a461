// A deactivated account (users.is_active = false) can do nothing with tokens issued before: every
// request with its access token answers 401, its refresh token answers 401, its sessions are
// revoked. Deactivation comes two ways: `deactivateUser` (the service an admin command will call:
// the flag and every session in one transaction, the user cache moved on), and an operator's direct
// update of the row, which the request path finds on its own (the organization check reads the flag
// in its lookup; the signed-in guard reads the cached user). With Redis (TEST_REDIS_URL) the tokens
// are also used on a second instance sharing the database.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrg, login, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { json, onRedis, queryRows, type TestApp } from '../../../test/harness.js';
import { a, b, useTwoInstances } from '../../../test/fixtures/instances.js';
import { deactivateUser } from '../auth/account.service.js';

useTwoInstances();

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const me = (app: TestApp, token: string) =>
  app.request({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) });
const renameOrg = (app: TestApp, token: string, orgId: string, name: string) =>
  app.request({ method: 'PATCH', url: `/api/v1/organizations/${orgId}`, headers: bearer(token), payload: { name } });
const refresh = (app: TestApp, refreshToken: string) =>
  app.request({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken } });

function expect401(res: LightMyRequestResponse, what: string) {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(401);
  expect(json(res)).toEqual({
    success: false,
    error: { code: 'AUTHENTICATION_ERROR', message: expect.any(String), details: expect.any(String) },
  });
}

const orgName = async (orgId: string) =>
  (await queryRows<{ name: string }>(a, sql`select name from organizations where id = ${orgId}`))[0]?.name;
const sessionsOf = (userId: string) =>
  queryRows<{ revoked_at: unknown; revoked_reason: string | null }>(
    a,
    sql`select revoked_at, revoked_reason from sessions where user_id = ${userId} order by created_at, id`,
  );
const changesBy = async (orgId: string, userId: string) =>
  (
    await queryRows<{ n: number }>(
      a,
      sql`select count(*)::int as n from audit_logs where organization_id = ${orgId} and actor_id = ${userId}`,
    )
  )[0]!.n;

/** A signed-in user with two sessions and an organization of their own, every token used on both instances. */
async function activeUser(label: string) {
  const user = await signedInUser(a, label);
  const second = await login(a, user.email);
  const org = (await createOrg(a, user)).id;
  for (const app of [a, b]) {
    for (const token of [user.accessToken, second.accessToken]) expect((await me(app, token)).statusCode).toBe(200);
    const renamed = await renameOrg(app, user.accessToken, org, 'Before');
    expect(renamed.statusCode, renamed.body).toBe(200);
  }
  return { user, second, org };
}

/** Everything the account held answers 401, changes nothing, and its sessions are revoked. */
async function expectLockedOut(user: SignedInUser, second: { accessToken: string; refreshToken: string }, org: string) {
  const audited = await changesBy(org, user.userId);
  for (const app of [a, b]) {
    for (const token of [user.accessToken, second.accessToken]) {
      expect401(await renameOrg(app, token, org, 'After'), 'an organization write');
      expect401(await me(app, token), 'GET /users/me');
      expect401(
        await app.request({
          method: 'POST',
          url: '/api/v1/organizations',
          headers: bearer(token),
          payload: { name: 'New', slug: `new-${Date.now()}` },
        }),
        'creating an organization',
      );
    }
  }
  expect(await orgName(org)).toBe('Before');
  expect(await changesBy(org, user.userId)).toBe(audited);
  expect401(await refresh(b, user.refreshToken), 'refresh');
  expect401(await refresh(a, second.refreshToken), 'refresh of the second session');
  const sessions = await sessionsOf(user.userId);
  expect(sessions).toHaveLength(2);
  for (const s of sessions) {
    expect(s.revoked_at).not.toBeNull();
    expect(s.revoked_reason).toBe('deactivated');
  }
  const again = await a.request({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { email: user.email, password: user.password },
  });
  expect(again.statusCode, again.body).toBe(401);
}

describe(
  onRedis ? 'deactivation, on two instances sharing Redis' : 'deactivation, on a single instance (no Redis)',
  () => {
    let bystander: SignedInUser;
    beforeAll(async () => {
      bystander = await signedInUser(a, 'bystander');
    }, 60_000);

    it('deactivateUser: the flag and every session in one go, the cached user moved on; 401 at once everywhere', async () => {
      const { user, second, org } = await activeUser('deactivated');
      const result = await deactivateUser(a.deps, user.userId);
      expect(result).toEqual({ revokedSessions: 2 });
      const [row] = await queryRows<{ is_active: boolean }>(
        a,
        sql`select is_active from users where id = ${user.userId}`,
      );
      expect(row?.is_active).toBe(false);
      await expectLockedOut(user, second, org);
      // Nobody else is affected.
      for (const app of [a, b]) expect((await me(app, bystander.accessToken)).statusCode).toBe(200);
    });

    it('an operator’s direct update, the user cached everywhere: an organization write answers 401 and changes nothing; then everything does', async () => {
      const { user, second, org } = await activeUser('operator-warm');
      await a.deps.db.execute(sql`update users set is_active = false where id = ${user.userId}`);
      // The organization check reads the flag in the lookup it makes anyway: refused, though every
      // instance still holds the user as active; finding it revokes the sessions and moves the cache on.
      expect401(await renameOrg(b, user.accessToken, org, 'After'), 'the first organization write');
      expect(await orgName(org)).toBe('Before');
      await expectLockedOut(user, second, org);
      for (const app of [a, b]) expect((await me(app, bystander.accessToken)).statusCode).toBe(200);
    });

    it('an operator’s direct update, the user not cached: GET /users/me answers 401 at once and the sessions are revoked', async () => {
      const user = await signedInUser(a, 'operator-cold');
      const second = await login(a, user.email);
      const org = (await createOrg(a, user)).id;
      await renameOrg(a, user.accessToken, org, 'Before');
      await a.deps.userCache.changed(user.userId);
      await a.deps.db.execute(sql`update users set is_active = false where id = ${user.userId}`);
      expect401(await me(b, second.accessToken), 'GET /users/me');
      await expectLockedOut(user, second, org);
    });

    it('deactivateUser of an unknown user: 404, nothing changes', async () => {
      await expect(deactivateUser(a.deps, 'usr_00000000000000000000000000')).rejects.toMatchObject({
        statusCode: 404,
        code: 'NOT_FOUND',
      });
      expect((await me(a, bystander.accessToken)).statusCode).toBe(200);
    });

    it('deactivateUser twice: the second finds nothing left to revoke', async () => {
      const user = await signedInUser(a, 'twice');
      expect(await deactivateUser(a.deps, user.userId)).toEqual({ revokedSessions: 1 });
      expect(await deactivateUser(a.deps, user.userId)).toEqual({ revokedSessions: 0 });
      expect401(await me(a, user.accessToken), 'GET /users/me');
    });

    it('deactivation racing a sign-in: a session started meanwhile is refused all the same', async () => {
      for (let i = 0; i < 4; i++) {
        const user = await signedInUser(a, `race-${i}`);
        const org = (await createOrg(a, user)).id;
        const [signIn] = await Promise.all([
          a.request({
            method: 'POST',
            url: '/api/v1/auth/login',
            payload: { email: user.email, password: user.password },
          }),
          deactivateUser(a.deps, user.userId),
        ]);
        expect([200, 401], signIn.body).toContain(signIn.statusCode);
        const tokens = [user.accessToken, ...(signIn.statusCode === 200 ? [json(signIn).accessToken as string] : [])];
        for (const app of [a, b]) {
          for (const token of tokens) {
            expect401(await me(app, token), 'GET /users/me');
            expect401(await renameOrg(app, token, org, 'After'), 'an organization write');
          }
        }
        if (signIn.statusCode === 200) expect401(await refresh(a, json(signIn).refreshToken as string), 'refresh');
        for (const s of await sessionsOf(user.userId)) expect(s.revoked_at).not.toBeNull();
      }
    });
  },
);
