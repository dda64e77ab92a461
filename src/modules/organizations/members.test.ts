// Members over HTTP (docs/api.md#members): list, role change, removal, leaving.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  auditOf,
  createOrg,
  eventsOf,
  setPlan,
  signedInUser,
  type SignedInUser,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { expectError } from '../../../test/expect.js';

let owner: SignedInUser;
let admin: SignedInUser;
let member: SignedInUser;
let viewer: SignedInUser;
let extra: SignedInUser;
let outsider: SignedInUser;

useApp();
beforeAll(async () => {
  [owner, admin, member, viewer, extra, outsider] = [
    await signedInUser(t, 'owner'),
    await signedInUser(t, 'admin'),
    await signedInUser(t, 'member'),
    await signedInUser(t, 'viewer'),
    await signedInUser(t, 'extra'),
    await signedInUser(t, 'outsider'),
  ];
});

type Caller = { auth: Record<string, string> };
function api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, caller: Caller, payload?: unknown) {
  return t.request({
    method,
    url: `/api/v1${url}`,
    headers: caller.auth,
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
}

/** owner, admin, member, viewer and a second member (`extra`), on the Pro plan. */
async function team() {
  const org = await createOrg(t, owner);
  await setPlan(t, org.id, 'pro');
  t.clock.advance(1000);
  const m = {
    admin: await addMember(t, org.id, owner, admin, 'admin'),
    member: await addMember(t, org.id, owner, member, 'member'),
    viewer: await addMember(t, org.id, owner, viewer, 'viewer'),
    extra: await addMember(t, org.id, owner, extra, 'member'),
  };
  const list = json(await api('GET', `/organizations/${org.id}/members`, owner));
  const ownerMembership = list.members.find((x: { userId: string }) => x.userId === owner.userId);
  return { org, m: { ...m, owner: ownerMembership as { id: string } } };
}

/** State that a refused request must leave untouched. */
async function snapshot(orgId: string) {
  return {
    members: json(await api('GET', `/organizations/${orgId}/members`, owner)),
    events: await eventsOf(t, orgId),
    audit: await auditOf(t, orgId),
  };
}

describe('GET /organizations/:orgId/members', () => {
  it('lists members with the embedded user and the pagination fields', async () => {
    const { org, m } = await team();
    const res = await api('GET', `/organizations/${org.id}/members`, viewer);
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(body).toMatchObject({ total: 5, page: 1, pageSize: 20, hasMore: false });
    expect(body.members).toHaveLength(5);
    expect(body.members.map((x: { role: string }) => x.role)).toEqual(['owner', 'admin', 'member', 'viewer', 'member']);
    expect(body.members[2]).toEqual({
      id: m.member.id,
      userId: member.userId,
      organizationId: org.id,
      role: 'member',
      user: { id: member.userId, email: member.email, fullName: 'Test User', avatarUrl: null },
      joinedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    for (const x of body.members) expect(Object.keys(x.user).sort()).toEqual(['avatarUrl', 'email', 'fullName', 'id']);

    const page2 = json(await api('GET', `/organizations/${org.id}/members?page=2&pageSize=2`, owner));
    expect(page2).toMatchObject({ total: 5, page: 2, pageSize: 2, hasMore: true });
    expect(page2.members.map((x: { id: string }) => x.id)).toEqual([m.member.id, m.viewer.id]);
    const page3 = json(await api('GET', `/organizations/${org.id}/members?page=3&pageSize=2`, owner));
    expect(page3).toMatchObject({ total: 5, hasMore: false });
    expect(page3.members).toHaveLength(1);
    expectError(await api('GET', `/organizations/${org.id}/members?pageSize=101`, owner), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', `/organizations/${org.id}/members?page=0`, owner), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', `/organizations/${org.id}/members`, outsider), 403, 'AUTHORIZATION_ERROR');
  });
});

describe('PATCH /organizations/:orgId/members/:memberId', () => {
  it('lets an admin change a member, answers the member with its user and records member.updated with previousRole', async () => {
    const { org, m } = await team();
    t.clock.advance(1000);
    const res = await api('PATCH', `/organizations/${org.id}/members/${m.member.id}`, admin, { role: 'viewer' });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({
      id: m.member.id,
      userId: member.userId,
      organizationId: org.id,
      role: 'viewer',
      user: { id: member.userId, email: member.email, fullName: 'Test User', avatarUrl: null },
      joinedAt: m.member.joinedAt,
    });
    const events = await eventsOf(t, org.id);
    expect(events.at(-1)).toMatchObject({
      type: 'member.updated',
      data: {
        memberId: m.member.id,
        organizationId: org.id,
        userId: member.userId,
        email: member.email,
        role: 'viewer',
        previousRole: 'member',
      },
    });
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({
      actorType: 'user',
      actorId: admin.userId,
      action: 'PATCH /api/v1/organizations/:orgId/members/:memberId',
      path: `/api/v1/organizations/${org.id}/members/${m.member.id}`,
      statusCode: 200,
    });
    // The new role is in force at once: a viewer cannot write projects.
    expectError(
      await api('POST', `/organizations/${org.id}/projects`, member, { name: 'Nope' }),
      403,
      'AUTHORIZATION_ERROR',
    );

    // The owner promotes to admin; the new admin may then manage members.
    const promoted = await api('PATCH', `/organizations/${org.id}/members/${m.member.id}`, owner, { role: 'admin' });
    expect(json(promoted).role).toBe('admin');
    const byNewAdmin = await api('PATCH', `/organizations/${org.id}/members/${m.viewer.id}`, member, {
      role: 'member',
    });
    expect(byNewAdmin.statusCode, byNewAdmin.body).toBe(200);
  });

  it("refuses the owner's role, one's own role, the role owner and unknown roles with 400, changing nothing", async () => {
    const { org, m } = await team();
    const before = await snapshot(org.id);
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${m.owner.id}`, admin, { role: 'member' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${m.admin.id}`, admin, { role: 'viewer' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${m.owner.id}`, owner, { role: 'admin' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${m.member.id}`, owner, { role: 'owner' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${m.member.id}`, owner, { role: 'superuser' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${m.member.id}`, owner, {}),
      400,
      'VALIDATION_ERROR',
    );
    expect(await snapshot(org.id)).toEqual(before);
  });

  it('answers 403 to a member or viewer caller, and 404 for an unknown or foreign member', async () => {
    const { org, m } = await team();
    const other = await createOrg(t, outsider);
    const foreign = json(await api('GET', `/organizations/${other.id}/members`, outsider)).members[0].id as string;
    const before = await snapshot(org.id);
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${m.extra.id}`, member, { role: 'viewer' }),
      403,
      'AUTHORIZATION_ERROR',
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${m.extra.id}`, viewer, { role: 'admin' }),
      403,
      'AUTHORIZATION_ERROR',
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${m.extra.id}`, outsider, { role: 'admin' }),
      403,
      'AUTHORIZATION_ERROR',
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/mbr_00000000000000000000000000`, owner, { role: 'admin' }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}/members/${foreign}`, owner, { role: 'admin' }),
      404,
      'NOT_FOUND',
    );
    expect(await snapshot(org.id)).toEqual(before);
    expect(json(await api('GET', `/organizations/${other.id}/members`, outsider)).members[0].role).toBe('owner');
  });
});

describe('DELETE /organizations/:orgId/members/:memberId', () => {
  it('refuses the owner (400) and non-admins (403)', async () => {
    const { org, m } = await team();
    const before = await snapshot(org.id);
    expectError(await api('DELETE', `/organizations/${org.id}/members/${m.owner.id}`, admin), 400, 'VALIDATION_ERROR');
    expectError(await api('DELETE', `/organizations/${org.id}/members/${m.owner.id}`, owner), 400, 'VALIDATION_ERROR');
    expectError(
      await api('DELETE', `/organizations/${org.id}/members/${m.extra.id}`, member),
      403,
      'AUTHORIZATION_ERROR',
    );
    expectError(
      await api('DELETE', `/organizations/${org.id}/members/${m.extra.id}`, viewer),
      403,
      'AUTHORIZATION_ERROR',
    );
    expectError(
      await api('DELETE', `/organizations/${org.id}/members/mbr_00000000000000000000000000`, owner),
      404,
      'NOT_FOUND',
    );
    expect(await snapshot(org.id)).toEqual(before);
  });

  it('lets an admin remove a member: member.removed, an audit entry, and the member is out at once', async () => {
    const { org, m } = await team();
    // The member works in the organization until removed.
    expect((await api('GET', `/organizations/${org.id}`, extra)).statusCode).toBe(200);
    const res = await api('DELETE', `/organizations/${org.id}/members/${m.extra.id}`, admin);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ message: expect.any(String) });

    expect((await eventsOf(t, org.id)).at(-1)).toMatchObject({
      type: 'member.removed',
      data: { memberId: m.extra.id, organizationId: org.id, userId: extra.userId, email: extra.email, role: 'member' },
    });
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({
      actorId: admin.userId,
      action: 'DELETE /api/v1/organizations/:orgId/members/:memberId',
      statusCode: 200,
    });

    expectError(await api('GET', `/organizations/${org.id}`, extra), 403, 'AUTHORIZATION_ERROR');
    expectError(await api('GET', `/organizations/${org.id}/members`, extra), 403, 'AUTHORIZATION_ERROR');
    const mine = json(await api('GET', '/users/me/organizations', extra));
    expect(mine.organizations.map((o: { id: string }) => o.id)).not.toContain(org.id);
    const list = json(await api('GET', `/organizations/${org.id}/members`, owner));
    expect(list.total).toBe(4);
    // Removing again: the member is gone.
    expectError(await api('DELETE', `/organizations/${org.id}/members/${m.extra.id}`, admin), 404, 'NOT_FOUND');
  });
});

describe('POST /organizations/:orgId/leave', () => {
  it('refuses the owner with 400', async () => {
    const { org } = await team();
    const before = await snapshot(org.id);
    expectError(await api('POST', `/organizations/${org.id}/leave`, owner), 400, 'VALIDATION_ERROR');
    expect(await snapshot(org.id)).toEqual(before);
    expectError(await api('POST', `/organizations/${org.id}/leave`, outsider), 403, 'AUTHORIZATION_ERROR');
  });

  it('lets a member leave: member.removed recorded, and then 403', async () => {
    const { org, m } = await team();
    const res = await api('POST', `/organizations/${org.id}/leave`, viewer);
    expect(res.statusCode, res.body).toBe(200);
    expect((await eventsOf(t, org.id)).at(-1)).toMatchObject({
      type: 'member.removed',
      data: {
        memberId: m.viewer.id,
        organizationId: org.id,
        userId: viewer.userId,
        email: viewer.email,
        role: 'viewer',
      },
    });
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({
      actorId: viewer.userId,
      action: 'POST /api/v1/organizations/:orgId/leave',
      statusCode: 200,
    });
    expectError(await api('GET', `/organizations/${org.id}`, viewer), 403, 'AUTHORIZATION_ERROR');
    expectError(await api('POST', `/organizations/${org.id}/leave`, viewer), 403, 'AUTHORIZATION_ERROR');
    expect(json(await api('GET', `/organizations/${org.id}/members`, owner)).total).toBe(4);
  });

  it('frees a seat on the Free plan', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, member, 'member');
    await addMember(t, org.id, owner, viewer, 'viewer');
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: 'fourth@example.com', role: 'member' }),
      402,
      'PLAN_LIMIT_EXCEEDED',
    );
    expect((await api('POST', `/organizations/${org.id}/leave`, member)).statusCode).toBe(200);
    expect(
      (
        await api('POST', `/organizations/${org.id}/invitations`, owner, {
          email: 'fourth@example.com',
          role: 'member',
        })
      ).statusCode,
    ).toBe(201);
  });
});
