// The active organization (docs/api.md#active-organization) and GET /auth/session, through HTTP: a
// sign-in or refresh naming an organization makes it active and the access token carries org_id,
// org_role and org_permissions; null clears it; absent keeps it. A non-member gets 403 and nothing
// changes: no session starts, the refresh token stays unspent. A removed member's claims vanish at
// once from GET /auth/session and at the next refresh from the tokens; a role change shows the same
// way. Run under HS256 and ES256 alike.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, decodeJwt, refreshRaw } from '../../../test/fixtures/auth.js';
import {
  addMember,
  createApiKey,
  createOrg,
  PASSWORD,
  setPlan,
  signedInUser,
  type SignedInUser,
} from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { ROLE_PERMISSIONS } from '../../platform/permissions.js';
import { expectError } from '../../../test/expect.js';

const NO_ORG = 'org_00000000000000000000000000';

describe.each([{ alg: 'HS256' }, { alg: 'ES256' }])('under $alg', ({ alg }) => {
  let t: TestApp;
  let owner: SignedInUser;
  let org: { id: string };
  let other: { id: string };

  beforeAll(async () => {
    t = await createTestApp({ env: { JWT_ALGORITHM: alg } });
    owner = await signedInUser(t, 'owner');
    org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    other = await createOrg(t, await signedInUser(t, 'stranger'));
  });
  afterAll(async () => {
    await t?.close();
  });

  const login = (email: string, extra: Record<string, unknown> = {}) =>
    t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: PASSWORD, ...extra } });
  const refresh = (refreshToken: string, extra: Record<string, unknown> = {}) =>
    t.request({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken, ...extra } });
  const sessionNow = async (accessToken: string) => {
    const res = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: bearer(accessToken) });
    expect(res.statusCode, res.body).toBe(200);
    return json(res);
  };
  const sessionRow = async (sessionId: string) =>
    (
      await queryRows<{ org: string | null; revoked: boolean }>(
        t,
        sql`select active_organization_id as org, revoked_at is not null as revoked from sessions where id = ${sessionId}`,
      )
    )[0]!;
  const sessionsOf = async (userId: string) =>
    (await queryRows<{ n: number }>(t, sql`select count(*)::int as n from sessions where user_id = ${userId}`))[0]!.n;
  const permsOf = (role: 'owner' | 'admin' | 'member' | 'viewer') => [...ROLE_PERMISSIONS[role]];

  /** A member of the organization with `role`, signed in without an active organization. */
  async function member(role: 'admin' | 'member' | 'viewer', label: string = role) {
    const user = await signedInUser(t, label);
    const membership = await addMember(t, org.id, owner, user, role);
    return { user, membership };
  }

  it('a sign-in naming an organization makes it active: the answer says so and the token carries the role and its permissions', async () => {
    const { user } = await member('admin', 'signin');
    const res = await login(user.email, { organizationId: org.id });
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(body.organizationId).toBe(org.id);
    const { payload } = decodeJwt(body.accessToken as string);
    expect(payload).toMatchObject({ sub: user.userId, amr: ['pwd'], org_id: org.id, org_role: 'admin' });
    expect([...(payload.org_permissions as string[])].sort()).toEqual(permsOf('admin').sort());
    expect(payload.org_permissions).toContain('roles:manage');
    expect(await sessionRow(payload.sessionId as string)).toEqual({ org: org.id, revoked: false });
    expect(await sessionNow(body.accessToken as string)).toMatchObject({
      userId: user.userId,
      organizationId: org.id,
      role: 'admin',
      amr: ['pwd'],
      impersonatorId: null,
    });
    // Without organizationId (or with null), none is active and the token has no org_* claim.
    for (const extra of [{}, { organizationId: null }]) {
      const plain = json(await login(user.email, extra));
      expect(plain.organizationId).toBeNull();
      expect(Object.keys(decodeJwt(plain.accessToken as string).payload).filter((k) => k.startsWith('org_'))).toEqual(
        [],
      );
    }
  });

  it('a sign-in naming an organization the account is not a member of (or none at all): 403, no session, the failures untouched', async () => {
    const { user } = await member('viewer', 'signin-outsider');
    const before = await sessionsOf(user.userId);
    await t.deps.db.execute(sql`update users set failed_login_attempts = 2 where id = ${user.userId}`);
    for (const organizationId of [other.id, NO_ORG]) {
      const err = expectError(await login(user.email, { organizationId }), 403, 'AUTHORIZATION_ERROR');
      expect(err.message).toBe('You are not a member of this organization');
    }
    expect(await sessionsOf(user.userId)).toBe(before);
    const [row] = await queryRows<{ failed: number; inFlight: number }>(
      t,
      sql`select failed_login_attempts as failed, checks_in_flight as "inFlight" from users where id = ${user.userId}`,
    );
    expect(row).toEqual({ failed: 2, inFlight: 0 });
    // A wrong password with an organization the account is not in: 401 first (nothing said about membership).
    expectError(
      await t.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: user.email, password: 'Wrong-Password-1', organizationId: other.id },
      }),
      401,
      'AUTHENTICATION_ERROR',
    );
    // Bad values: 400.
    for (const organizationId of ['', 'x'.repeat(65), 42])
      expectError(await login(user.email, { organizationId }), 400, 'VALIDATION_ERROR');
  });

  it('refresh: a string makes it active, absent keeps it, null clears it', async () => {
    const { user } = await member('member', 'refresh');
    let pair = json(await login(user.email));
    expect(pair.organizationId).toBeNull();
    const step = async (extra: Record<string, unknown>) => {
      const res = await refresh(pair.refreshToken as string, extra);
      expect(res.statusCode, res.body).toBe(200);
      pair = json(res);
      return { answer: pair.organizationId as string | null, claims: decodeJwt(pair.accessToken as string).payload };
    };
    const made = await step({ organizationId: org.id });
    expect(made.answer).toBe(org.id);
    expect(made.claims).toMatchObject({ org_id: org.id, org_role: 'member', amr: ['pwd'] });
    // In catalogue order.
    expect(made.claims.org_permissions).toEqual(
      t.deps.permissions
        .list()
        .map((p) => p.key)
        .filter((k) => permsOf('member').includes(k as never)),
    );
    expect([...(made.claims.org_permissions as string[])].sort()).toEqual(permsOf('member').sort());
    const kept = await step({});
    expect(kept.answer).toBe(org.id);
    expect(kept.claims.org_id).toBe(org.id);
    const cleared = await step({ organizationId: null });
    expect(cleared.answer).toBeNull();
    expect(cleared.claims).not.toHaveProperty('org_id');
    expect(cleared.claims).not.toHaveProperty('org_permissions');
    expect((await step({})).answer).toBeNull();
  });

  it('refresh naming an organization the account is not a member of: 403, the session unchanged, the refresh token still good', async () => {
    const { user } = await member('viewer', 'refresh-outsider');
    const pair = json(await login(user.email, { organizationId: org.id }));
    const sessionId = decodeJwt(pair.accessToken as string).payload.sessionId as string;
    for (const organizationId of [other.id, NO_ORG])
      expectError(await refresh(pair.refreshToken as string, { organizationId }), 403, 'AUTHORIZATION_ERROR');
    expect(await sessionRow(sessionId)).toEqual({ org: org.id, revoked: false });
    // The same refresh token still works once, with the organization it had.
    const res = await refresh(pair.refreshToken as string);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).organizationId).toBe(org.id);
    // A spent token naming an outsider's organization is a replay: 401, and reuse detection as ever.
    t.clock.advance(60_000);
    expectError(await refresh(pair.refreshToken as string, { organizationId: other.id }), 401, 'AUTHENTICATION_ERROR');
    expect((await sessionRow(sessionId)).revoked).toBe(true);
  });

  it("a removed member's claims vanish at once from GET /auth/session, and from the tokens at the next refresh", async () => {
    const { user, membership } = await member('admin', 'removed');
    const pair = json(await login(user.email, { organizationId: org.id }));
    const sessionId = decodeJwt(pair.accessToken as string).payload.sessionId as string;
    expect((await sessionNow(pair.accessToken as string)).role).toBe('admin');
    const removed = await t.request({
      method: 'DELETE',
      url: `/api/v1/organizations/${org.id}/members/${membership.id}`,
      headers: owner.auth,
    });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(await sessionNow(pair.accessToken as string)).toMatchObject({
      organizationId: null,
      role: null,
      permissions: [],
    });
    // The organization's routes refuse at once too (they read the membership, not the token).
    expectError(
      await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id}`,
        headers: bearer(pair.accessToken as string),
      }),
      403,
      'AUTHORIZATION_ERROR',
    );
    const next = json(await refreshRaw(t, pair.refreshToken as string));
    expect(next.organizationId).toBeNull();
    expect(decodeJwt(next.accessToken as string).payload).not.toHaveProperty('org_id');
    expect((await sessionRow(sessionId)).org).toBeNull();
    // Asking for it again: 403, as for any non-member.
    expectError(await refresh(next.refreshToken as string, { organizationId: org.id }), 403, 'AUTHORIZATION_ERROR');
  });

  it('a role change shows at once in GET /auth/session and in the token at the next refresh', async () => {
    const { user, membership } = await member('admin', 'demoted');
    const pair = json(await login(user.email, { organizationId: org.id }));
    const changed = await t.request({
      method: 'PATCH',
      url: `/api/v1/organizations/${org.id}/members/${membership.id}`,
      headers: owner.auth,
      payload: { role: 'viewer' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    // The old token still says admin (a copy), the live view says viewer.
    expect(decodeJwt(pair.accessToken as string).payload.org_role).toBe('admin');
    const now = await sessionNow(pair.accessToken as string);
    expect(now).toMatchObject({ organizationId: org.id, role: 'viewer' });
    expect([...(now.permissions as string[])].sort()).toEqual(permsOf('viewer').sort());
    const next = json(await refreshRaw(t, pair.refreshToken as string));
    expect(decodeJwt(next.accessToken as string).payload).toMatchObject({ org_id: org.id, org_role: 'viewer' });
  });

  it('a deleted organization is no longer active for any session', async () => {
    const owner2 = await signedInUser(t, 'deleter');
    const doomed = await createOrg(t, owner2);
    const pair = json(await login(owner2.email, { organizationId: doomed.id }));
    expect(decodeJwt(pair.accessToken as string).payload).toMatchObject({ org_id: doomed.id, org_role: 'owner' });
    expect(decodeJwt(pair.accessToken as string).payload.org_permissions).toContain('org:delete');
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v1/organizations/${doomed.id}`,
      headers: bearer(pair.accessToken as string),
    });
    expect(del.statusCode, del.body).toBe(200);
    expect(await sessionNow(pair.accessToken as string)).toMatchObject({ organizationId: null, role: null });
    expect(json(await refreshRaw(t, pair.refreshToken as string)).organizationId).toBeNull();
  });

  it('GET /auth/session: the session as stored, 401 once revoked, 403 for an API key', async () => {
    const user = await signedInUser(t, 'session-view');
    const sessionId = decodeJwt(user.accessToken).payload.sessionId as string;
    const view = await sessionNow(user.accessToken);
    const [row] = await queryRows<{ expires: string }>(
      t,
      sql`select expires_at as expires from sessions where id = ${sessionId}`,
    );
    expect(view).toEqual({
      userId: user.userId,
      sessionId,
      organizationId: null,
      role: null,
      permissions: [],
      amr: ['pwd'],
      impersonatorId: null,
      expiresAt: new Date(row!.expires).toISOString(),
    });
    const key = await createApiKey(t, org.id, owner, ['read:members']);
    expectError(
      await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: key.headers }),
      403,
      'AUTHORIZATION_ERROR',
    );
    expectError(await t.request({ method: 'GET', url: '/api/v1/auth/session' }), 401, 'AUTHENTICATION_ERROR');
    const out = await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(user.accessToken) });
    expect(out.statusCode).toBe(200);
    expectError(
      await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: bearer(user.accessToken) }),
      401,
      'AUTHENTICATION_ERROR',
    );
  });

  it('cookie mode: the refresh takes organizationId beside the cookie', async () => {
    const { user } = await member('viewer', 'cookie');
    const signIn = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'x-session-mode': 'cookie' },
      payload: { email: user.email, password: PASSWORD },
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    const cookie = /tenantry_refresh=([^;]+)/.exec(String(signIn.headers['set-cookie']))![1]!;
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/refresh',
      headers: { 'x-session-mode': 'cookie', cookie: `tenantry_refresh=${cookie}` },
      payload: { organizationId: org.id },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toMatchObject({ organizationId: org.id });
    expect(json(res)).not.toHaveProperty('refreshToken');
  });
});
