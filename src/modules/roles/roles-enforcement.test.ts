// Custom roles at work (docs/api.md#custom-roles), through HTTP: given to members and invitations of
// their own organization only, enforced on the built-in routes by the same permission table (a
// change to the role holds at the next request, no refresh needed), carried by the tokens, reported
// by the permission check. The privilege ceiling: a person gives, changes or takes away only roles
// within their own permissions, and makes API keys only within them; a key gives only member or
// viewer. And the races: a role deleted while it is being given is never left held.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, decodeJwt } from '../../../test/fixtures/auth.js';
import {
  addMember,
  createApiKey,
  eventsOf,
  keyState,
  PASSWORD,
  signedInUser,
  uniqueEmail,
} from '../../../test/factories.js';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import {
  api,
  APP_PERMISSIONS,
  makeRole,
  memberWith,
  roleState,
  team,
  type Team,
} from '../../../test/fixtures/roles.js';
import { expectError } from '../../../test/expect.js';

let x: Team;
let other: Team;

useApp({ env: { APP_PERMISSIONS } });
beforeAll(async () => {
  x = await team(t, 'x');
  other = await team(t, 'other');
});

const org = () => `/organizations/${x.org.id}`;

describe('giving a custom role', () => {
  it("to a member or an invitation: that organization's roles only; another organization's key, owner, or nonsense: 400, nothing changed", async () => {
    await makeRole(t, other.org.id, other.owner, 'elsewhere', ['org:read']);
    await makeRole(t, x.org.id, x.owner, 'here', ['org:read', 'projects:read'], 'Field crew');
    const before = await roleState(t, x.org.id);
    for (const role of ['elsewhere', 'owner', 'nobody', 'x'.repeat(41), 'Admin']) {
      expectError(
        await api(t, 'PATCH', `${org()}/members/${x.m.member}`, x.owner, { role }),
        400,
        'VALIDATION_ERROR',
        /role/,
      );
      expectError(
        await api(t, 'POST', `${org()}/invitations`, x.owner, { email: uniqueEmail('inv'), role }),
        400,
        'VALIDATION_ERROR',
        /role/,
      );
    }
    expect(await roleState(t, x.org.id)).toEqual(before);
    // Its own organization's role: accepted, for a member and for an invitation that is then accepted.
    const changed = await api(t, 'PATCH', `${org()}/members/${x.m.member}`, x.owner, { role: 'here' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(json(changed).role).toBe('here');
    expect((await eventsOf(t, x.org.id)).at(-1)).toMatchObject({
      type: 'member.updated',
      data: { role: 'here', previousRole: 'member' },
    });
    const invitee = await signedInUser(t, 'invitee');
    const sent = await api(t, 'POST', `${org()}/invitations`, x.owner, { email: invitee.email, role: 'here' });
    expect(sent.statusCode, sent.body).toBe(201);
    // The mail names the role as people read it: its name, not its key.
    const mail = await t.mail.waitFor(invitee.email, /invited to join/);
    expect(mail.decoded).toContain('invited you to join');
    expect(mail.decoded).toContain(' as Field crew.');
    const token = new URL(json(sent).inviteUrl as string).searchParams.get('token')!;
    const accepted = await api(t, 'POST', '/invitations/accept', invitee, { token });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(json(accepted).role).toBe('here');
    const mine = json(await api(t, 'GET', '/users/me/organizations', invitee));
    expect(mine.organizations.find((o: { id: string }) => o.id === x.org.id).role).toBe('here');
    // Back to member for the other tests.
    expect((await api(t, 'PATCH', `${org()}/members/${x.m.member}`, x.owner, { role: 'member' })).statusCode).toBe(200);
  });

  it('an API key gives only member or viewer, and never changes a custom-role holder', async () => {
    await makeRole(t, x.org.id, x.owner, 'small', ['org:read']);
    const holder = await memberWith(t, x, 'small', 'small-holder');
    const key = await createApiKey(t, x.org.id, x.owner, ['write:members']);
    const before = await roleState(t, x.org.id);
    expectError(
      await api(t, 'PATCH', `${org()}/members/${x.m.viewer}`, key, { role: 'small' }),
      403,
      'AUTHORIZATION_ERROR',
      /API key cannot give the small role/,
    );
    expectError(
      await api(t, 'POST', `${org()}/invitations`, key, { email: uniqueEmail('k'), role: 'small' }),
      403,
      'AUTHORIZATION_ERROR',
      /API key/,
    );
    expectError(
      await api(t, 'PATCH', `${org()}/members/${holder.membershipId}`, key, { role: 'viewer' }),
      403,
      'AUTHORIZATION_ERROR',
      /member with the small role/,
    );
    expectError(
      await api(t, 'DELETE', `${org()}/members/${holder.membershipId}`, key),
      403,
      'AUTHORIZATION_ERROR',
      /member with the small role/,
    );
    const after = await roleState(t, x.org.id);
    expect({ ...after, audit: after.audit.filter((a) => a.actorType !== 'api_key') }).toEqual({
      ...before,
      audit: before.audit.filter((a) => a.actorType !== 'api_key'),
    });
  });
});

describe('enforcement on the built-in routes', () => {
  it("a custom role opens exactly its permissions' routes; a change to the role holds at the next request", async () => {
    await makeRole(t, x.org.id, x.owner, 'billing', ['org:read', 'billing:read', 'audit-logs:read']);
    const holder = await memberWith(t, x, 'billing', 'billing-holder');
    expect((await api(t, 'GET', `${org()}/billing`, holder)).statusCode).toBe(200);
    expect((await api(t, 'GET', `${org()}/audit-logs`, holder)).statusCode).toBe(200);
    expect((await api(t, 'GET', org(), holder)).statusCode).toBe(200);
    // Not granted: members:read, projects:read (which every built-in role has), projects:write.
    expectError(
      await api(t, 'GET', `${org()}/members`, holder),
      403,
      'AUTHORIZATION_ERROR',
      /Missing permission members:read.*billing/,
    );
    expectError(await api(t, 'GET', `${org()}/projects`, holder), 403, 'AUTHORIZATION_ERROR', /projects:read/);
    expectError(await api(t, 'POST', `${org()}/projects`, holder, { name: 'No' }), 403, 'AUTHORIZATION_ERROR');
    // The role changes: at once, with the same access token.
    expect(
      (
        await api(t, 'PATCH', `${org()}/roles/billing`, x.owner, {
          permissions: ['org:read', 'projects:read', 'projects:write'],
        })
      ).statusCode,
    ).toBe(200);
    expectError(await api(t, 'GET', `${org()}/billing`, holder), 403, 'AUTHORIZATION_ERROR');
    expect((await api(t, 'GET', `${org()}/projects`, holder)).statusCode).toBe(200);
    expect((await api(t, 'POST', `${org()}/projects`, holder, { name: 'Yes' })).statusCode).toBe(201);
  });

  it("carries the custom role and its permissions (the product's too) in the tokens; a change shows at the next refresh", async () => {
    await makeRole(t, x.org.id, x.owner, 'approver', ['org:read', 'invoices:approve']);
    const holder = await memberWith(t, x, 'approver', 'approver-holder');
    const signIn = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: holder.email, password: PASSWORD, organizationId: x.org.id },
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    expect(decodeJwt(json(signIn).accessToken as string).payload).toMatchObject({
      org_id: x.org.id,
      org_role: 'approver',
      org_permissions: ['org:read', 'invoices:approve'],
    });
    expect(
      (await api(t, 'PATCH', `${org()}/roles/approver`, x.owner, { permissions: ['org:read', 'reports:read'] }))
        .statusCode,
    ).toBe(200);
    const live = await t.request({
      method: 'GET',
      url: '/api/v1/auth/session',
      headers: bearer(json(signIn).accessToken as string),
    });
    expect(json(live)).toMatchObject({ role: 'approver', permissions: ['org:read', 'reports:read'] });
    const next = await t.request({
      method: 'POST',
      url: '/api/v1/auth/refresh',
      payload: { refreshToken: json(signIn).refreshToken },
    });
    expect(decodeJwt(json(next).accessToken as string).payload.org_permissions).toEqual(['org:read', 'reports:read']);
  });

  it('owners and admins hold the product’s permissions, members and viewers none', async () => {
    const check = async (userId: string) =>
      json(
        await api(t, 'POST', `${org()}/permissions/check`, x.viewer, {
          userId,
          permissions: ['invoices:approve', 'reports:read', 'members:read'],
        }),
      );
    expect(await check(x.owner.userId)).toEqual({
      userId: x.owner.userId,
      role: 'owner',
      allowed: { 'invoices:approve': true, 'reports:read': true, 'members:read': true },
    });
    expect((await check(x.admin.userId)).allowed).toEqual({
      'invoices:approve': true,
      'reports:read': true,
      'members:read': true,
    });
    expect((await check(x.member.userId)).allowed).toEqual({
      'invoices:approve': false,
      'reports:read': false,
      'members:read': true,
    });
    expect((await check(x.viewer.userId)).allowed).toEqual({
      'invoices:approve': false,
      'reports:read': false,
      'members:read': true,
    });
  });
});

describe('POST …/permissions/check', () => {
  it("answers a member's role and each permission; a non-member: role null, all false; an unknown permission: 400; keys need read:members", async () => {
    await makeRole(t, x.org.id, x.owner, 'reporter', ['org:read', 'reports:read']);
    const holder = await memberWith(t, x, 'reporter', 'reporter-holder');
    const url = `${org()}/permissions/check`;
    const res = await api(t, 'POST', url, x.member, {
      userId: holder.userId,
      permissions: ['reports:read', 'invoices:approve', 'org:delete'],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({
      userId: holder.userId,
      role: 'reporter',
      allowed: { 'reports:read': true, 'invoices:approve': false, 'org:delete': false },
    });
    const outsider = json(
      await api(t, 'POST', url, x.member, { userId: other.owner.userId, permissions: ['org:read'] }),
    );
    expect(outsider).toEqual({ userId: other.owner.userId, role: null, allowed: { 'org:read': false } });
    expect(
      json(await api(t, 'POST', url, x.member, { userId: 'usr_00000000000000000000000000', permissions: ['org:read'] }))
        .role,
    ).toBeNull();
    expectError(
      await api(t, 'POST', url, x.member, { userId: holder.userId, permissions: ['reports:read', 'reports:write'] }),
      400,
      'VALIDATION_ERROR',
      /"reports:write" is not in the permission catalogue/,
    );
    expectError(
      await api(t, 'POST', url, x.member, { userId: holder.userId, permissions: [] }),
      400,
      'VALIDATION_ERROR',
    );
    expect(
      (
        await api(t, 'POST', url, await createApiKey(t, x.org.id, x.owner, ['read:members']), {
          userId: holder.userId,
          permissions: ['org:read'],
        })
      ).statusCode,
    ).toBe(200);
    expectError(
      await api(t, 'POST', url, await createApiKey(t, x.org.id, x.owner, ['read:projects']), {
        userId: holder.userId,
        permissions: ['org:read'],
      }),
      403,
      'AUTHORIZATION_ERROR',
      /read:members/,
    );
    expectError(
      await api(t, 'POST', url, other.owner, { userId: holder.userId, permissions: ['org:read'] }),
      403,
      'AUTHORIZATION_ERROR',
    );
  });
});

describe('the privilege ceiling', () => {
  it('a custom role with members:update and invitations:create gives, changes and removes only roles within its own permissions', async () => {
    // Everything a viewer has, and the people permissions: no projects:write, no billing:manage.
    const people = await makeRole(t, x.org.id, x.owner, 'people', [
      'org:read',
      'members:read',
      'projects:read',
      'billing:read',
      'webhooks:read',
      'members:update',
      'members:remove',
      'invitations:create',
    ]);
    await makeRole(t, x.org.id, x.owner, 'bigger', ['org:read', 'members:read', 'billing:manage']);
    await makeRole(t, x.org.id, x.owner, 'smaller', ['org:read', 'members:read']);
    const hr = await memberWith(t, x, people.key as string, 'hr');
    const target = await memberWith(t, x, 'smaller', 'target');
    const before = await roleState(t, x.org.id);
    // Upwards: admin, a bigger custom role, an invitation as admin: 403.
    expectError(
      await api(t, 'PATCH', `${org()}/members/${target.membershipId}`, hr, { role: 'admin' }),
      403,
      'AUTHORIZATION_ERROR',
      /cannot give the admin role/,
    );
    expectError(
      await api(t, 'PATCH', `${org()}/members/${target.membershipId}`, hr, { role: 'bigger' }),
      403,
      'AUTHORIZATION_ERROR',
      /billing:manage/,
    );
    expectError(
      await api(t, 'POST', `${org()}/invitations`, hr, { email: uniqueEmail('up'), role: 'admin' }),
      403,
      'AUTHORIZATION_ERROR',
      /admin/,
    );
    // member grants projects:write, which hr lacks.
    expectError(
      await api(t, 'PATCH', `${org()}/members/${target.membershipId}`, hr, { role: 'member' }),
      403,
      'AUTHORIZATION_ERROR',
      /cannot give the member role.*projects:write/,
    );
    // Someone above: an admin cannot be demoted, changed or removed by hr.
    expectError(
      await api(t, 'PATCH', `${org()}/members/${x.m.admin}`, hr, { role: 'viewer' }),
      403,
      'AUTHORIZATION_ERROR',
      /member with the admin role/,
    );
    expectError(await api(t, 'DELETE', `${org()}/members/${x.m.admin}`, hr), 403, 'AUTHORIZATION_ERROR', /admin/);
    expect(await roleState(t, x.org.id)).toEqual(before);
    // Within: viewer (a subset), and back.
    expect((await api(t, 'PATCH', `${org()}/members/${target.membershipId}`, hr, { role: 'viewer' })).statusCode).toBe(
      200,
    );
    expect((await api(t, 'PATCH', `${org()}/members/${target.membershipId}`, hr, { role: 'smaller' })).statusCode).toBe(
      200,
    );
    expect(
      (await api(t, 'POST', `${org()}/invitations`, hr, { email: uniqueEmail('ok'), role: 'viewer' })).statusCode,
    ).toBe(201);
    // Admins give any role but the owner's, as before.
    expect(
      (await api(t, 'PATCH', `${org()}/members/${target.membershipId}`, x.admin, { role: 'bigger' })).statusCode,
    ).toBe(200);
  });

  it('a custom role that makes API keys gives them only scopes within its permissions; its keys go when the role stops making keys', async () => {
    const keymaker = await makeRole(t, x.org.id, x.owner, 'keymaker', [
      'org:read',
      'api-keys:create',
      'projects:read',
      'members:read',
    ]);
    const holder = await memberWith(t, x, keymaker.key as string, 'keymaker');
    const make = (scopes: string[]) => api(t, 'POST', `${org()}/api-keys`, holder, { name: 'k', scopes });
    expectError(await make(['write:members']), 403, 'AUTHORIZATION_ERROR', /scope write:members.*members:update/);
    expectError(await make(['read:projects', 'read:billing']), 403, 'AUTHORIZATION_ERROR', /read:billing/);
    const ok = await make(['read:projects', 'read:members']);
    expect(ok.statusCode, ok.body).toBe(201);
    const keyId = json(ok).apiKey.id as string;
    // Losing members:read takes the keys whose scopes reach it…
    expect(
      (
        await api(t, 'PATCH', `${org()}/roles/keymaker`, x.owner, {
          permissions: ['org:read', 'api-keys:create', 'projects:read'],
        })
      ).statusCode,
    ).toBe(200);
    expect((await keyState(t, keyId))?.isActive).toBe(false);
    expect(
      (await eventsOf(t, x.org.id)).find((e) => e.type === 'api_key.revoked' && e.data.apiKeyId === keyId),
    ).toMatchObject({ data: { reason: 'role_changed', createdBy: holder.userId } });
    // …one within the role stays, until the role stops making keys.
    const second = json(await make(['read:projects'])).apiKey.id as string;
    expect((await api(t, 'PATCH', `${org()}/roles/keymaker`, x.owner, { name: 'Key maker' })).statusCode).toBe(200);
    expect((await keyState(t, second))?.isActive).toBe(true);
    expect(
      (await api(t, 'PATCH', `${org()}/roles/keymaker`, x.owner, { permissions: ['org:read', 'projects:read'] }))
        .statusCode,
    ).toBe(200);
    expect((await keyState(t, second))?.isActive).toBe(false);
    // A member moved to a role that cannot make keys loses theirs too.
    expect(
      (
        await api(t, 'PATCH', `${org()}/roles/keymaker`, x.owner, {
          permissions: ['org:read', 'api-keys:create', 'projects:read'],
        })
      ).statusCode,
    ).toBe(200);
    const third = json(await make(['read:projects'])).apiKey.id as string;
    expect(
      (await api(t, 'PATCH', `${org()}/members/${holder.membershipId}`, x.owner, { role: 'viewer' })).statusCode,
    ).toBe(200);
    expect((await keyState(t, third))?.isActive).toBe(false);
  });
});

describe('races (meaningful on PostgreSQL)', () => {
  it('a role deleted while it is being given is either deleted (the change refused) or kept (the delete refused), never held and gone', async () => {
    for (let round = 0; round < 6; round++) {
      const key = `racing-${round}`;
      await makeRole(t, x.org.id, x.owner, key, ['org:read']);
      const newcomer = await signedInUser(t, `race-${round}`);
      const membership = await addMember(t, x.org.id, x.owner, newcomer, 'viewer');
      const [give, invite, remove] = await Promise.all([
        api(t, 'PATCH', `${org()}/members/${membership.id}`, x.owner, { role: key }),
        api(t, 'POST', `${org()}/invitations`, x.owner, { email: uniqueEmail('race'), role: key }),
        api(t, 'DELETE', `${org()}/roles/${key}`, x.owner),
      ]);
      const [exists] = await queryRows<{ n: number }>(
        t,
        sql`select count(*)::int as n from organization_roles where organization_id = ${x.org.id} and key = ${key}`,
      );
      const [held] = await queryRows<{ n: number }>(
        t,
        sql`select (select count(*) from memberships where organization_id = ${x.org.id} and role = ${key})::int + (select count(*) from invitations where organization_id = ${x.org.id} and role = ${key} and status = 'pending')::int as n`,
      );
      if (remove.statusCode === 200) {
        expect([give.statusCode, invite.statusCode]).toEqual([400, 400]);
        expect([exists!.n, held!.n]).toEqual([0, 0]);
      } else {
        expect(remove.statusCode, remove.body).toBe(409);
        expect(exists!.n).toBe(1);
        expect(held!.n).toBe((give.statusCode === 200 ? 1 : 0) + (invite.statusCode === 201 ? 1 : 0));
        expect(held!.n).toBeGreaterThan(0);
      }
    }
  });
});
