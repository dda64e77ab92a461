// Organizations over HTTP (docs/decisions.md, organizations): update, delete, transfer, and the
// caller's list.
import { describe, expect, it } from 'vitest';
import { addMember, auditOf, createOrg, eventsOf, signedInUser } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import {
  admin,
  api,
  counts,
  member,
  orgWithRoles,
  outsider,
  owner,
  t,
  useOrganizationsApp,
  viewer,
} from '../../../test/fixtures/organizations.js';
import { expectError } from '../../../test/expect.js';

useOrganizationsApp();

describe('PATCH /organizations/:orgId', () => {
  it('needs org:update: owner and admin may, member and viewer get 403 and change nothing', async () => {
    const { org } = await orgWithRoles();
    t.clock.advance(1000);
    const byOwner = await api('PATCH', `/organizations/${org.id}`, owner, { name: 'Renamed' });
    expect(byOwner.statusCode, byOwner.body).toBe(200);
    expect(json(byOwner)).toEqual({ ...org, name: 'Renamed', updatedAt: t.clock.now().toISOString() });
    const byAdmin = await api('PATCH', `/organizations/${org.id}`, admin, { description: 'By the admin' });
    expect(byAdmin.statusCode, byAdmin.body).toBe(200);
    expect(json(byAdmin)).toMatchObject({ name: 'Renamed', description: 'By the admin' });

    const before = json(await api('GET', `/organizations/${org.id}`, owner));
    const auditBefore = await auditOf(t, org.id);
    t.clock.advance(1000);
    for (const u of [member, viewer]) {
      expectError(
        await api('PATCH', `/organizations/${org.id}`, u, { name: 'Hijacked' }),
        403,
        'AUTHORIZATION_ERROR',
        /org:update/,
      );
    }
    expectError(
      await api('PATCH', `/organizations/${org.id}`, outsider, { name: 'Hijacked' }),
      403,
      'AUTHORIZATION_ERROR',
    );
    expect(json(await api('GET', `/organizations/${org.id}`, owner))).toEqual(before);
    expect(await auditOf(t, org.id)).toEqual(auditBefore);
  });

  it('merges settings deeply', async () => {
    const org = await createOrg(t, owner);
    const patch = async (settings: unknown) => {
      const res = await api('PATCH', `/organizations/${org.id}`, owner, { settings });
      expect(res.statusCode, res.body).toBe(200);
      return json(res).settings;
    };
    expect(await patch({ branding: { primaryColor: '#112233' } })).toEqual({ branding: { primaryColor: '#112233' } });
    expect(await patch({ features: { webhooks: true } })).toEqual({
      branding: { primaryColor: '#112233' },
      features: { webhooks: true },
    });
    expect(await patch({ branding: { accentColor: '#445566' } })).toEqual({
      branding: { primaryColor: '#112233', accentColor: '#445566' },
      features: { webhooks: true },
    });
    expect(await patch({ features: { apiAccess: false }, billing: { email: 'billing@example.com' } })).toEqual({
      branding: { primaryColor: '#112233', accentColor: '#445566' },
      features: { webhooks: true, apiAccess: false },
      billing: { email: 'billing@example.com' },
    });
    // What was merged is what is stored.
    expect(json(await api('GET', `/organizations/${org.id}`, owner)).settings).toEqual({
      branding: { primaryColor: '#112233', accentColor: '#445566' },
      features: { webhooks: true, apiAccess: false },
      billing: { email: 'billing@example.com' },
    });
  });

  it('refuses unknown or mistyped settings with 400 and changes nothing', async () => {
    const org = await createOrg(t, owner);
    await api('PATCH', `/organizations/${org.id}`, owner, { settings: { branding: { primaryColor: '#000' } } });
    const before = json(await api('GET', `/organizations/${org.id}`, owner));
    expectError(
      await api('PATCH', `/organizations/${org.id}`, owner, { settings: { theme: 'dark' } }),
      400,
      'VALIDATION_ERROR',
      /theme/,
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}`, owner, { settings: { branding: { font: 'x' } } }),
      400,
      'VALIDATION_ERROR',
      /font/,
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}`, owner, { settings: { features: { webhooks: 'yes' } } }),
      400,
      'VALIDATION_ERROR',
      /webhooks/,
    );
    expectError(
      await api('PATCH', `/organizations/${org.id}`, owner, { slug: 'new-slug' }),
      400,
      'VALIDATION_ERROR',
      /slug/,
    );
    // A valid name beside an invalid field: the whole request is refused.
    expectError(
      await api('PATCH', `/organizations/${org.id}`, owner, { name: 'Half', logoUrl: 'nope' }),
      400,
      'VALIDATION_ERROR',
      /logoUrl/,
    );
    expectError(await api('PATCH', `/organizations/${org.id}`, owner, { name: '  ' }), 400, 'VALIDATION_ERROR', /name/);
    expectError(
      await api('PATCH', `/organizations/${org.id}`, owner, { name: 'Half', logoUrl: 'javascript:alert(1)' }),
      400,
      'VALIDATION_ERROR',
      /logoUrl/,
    );
    expect(json(await api('GET', `/organizations/${org.id}`, owner))).toEqual(before);
  });

  it('null clears description and logoUrl; absent fields are kept', async () => {
    const org = await createOrg(t, owner, { description: 'Something', logoUrl: 'https://example.com/l.png' });
    const kept = await api('PATCH', `/organizations/${org.id}`, owner, { name: 'Only the name' });
    expect(json(kept)).toMatchObject({ description: 'Something', logoUrl: 'https://example.com/l.png' });
    const cleared = await api('PATCH', `/organizations/${org.id}`, owner, { description: null, logoUrl: null });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(json(cleared)).toMatchObject({ name: 'Only the name', description: null, logoUrl: null });
    expect(json(await api('GET', `/organizations/${org.id}`, owner))).toMatchObject({
      description: null,
      logoUrl: null,
    });
  });

  it('writes one audit entry per successful update', async () => {
    const org = await createOrg(t, owner);
    await api('PATCH', `/organizations/${org.id}`, owner, { name: 'Audited' });
    const entries = await auditOf(t, org.id);
    expect(entries.at(-1)).toEqual({
      organizationId: org.id,
      actorType: 'user',
      actorId: owner.userId,
      action: 'PATCH /api/v1/organizations/:orgId',
      method: 'PATCH',
      path: `/api/v1/organizations/${org.id}`,
      statusCode: 200,
      ipAddress: '127.0.0.1',
      userAgent: 'org-tests/1.0',
    });
  });
});

describe('DELETE /organizations/:orgId', () => {
  it('is for the owner only and removes the organization with its data', async () => {
    const { org } = await orgWithRoles();
    await api('POST', `/organizations/${org.id}/invitations`, owner, {
      email: 'pending-delete@example.com',
      role: 'member',
    });
    const project = await api('POST', `/organizations/${org.id}/projects`, member, { name: 'Doomed' });
    expect(project.statusCode, project.body).toBe(201);

    for (const u of [admin, member, viewer, outsider]) {
      expectError(await api('DELETE', `/organizations/${org.id}`, u), 403, 'AUTHORIZATION_ERROR');
    }
    expect(await counts(org.id)).toMatchObject({ orgs: 1, members: 4, invitations: 4, projects: 1 });

    const res = await api('DELETE', `/organizations/${org.id}`, owner);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ message: expect.any(String) });

    expectError(await api('GET', `/organizations/${org.id}`, owner), 404, 'NOT_FOUND');
    expectError(await api('GET', `/organizations/${org.id}/projects/${json(project).id}`, member), 404, 'NOT_FOUND');
    expect(await counts(org.id)).toEqual({ orgs: 0, members: 0, invitations: 0, projects: 0, events: 0, audit: 0 });
    const mine = json(await api('GET', '/users/me/organizations', member));
    expect(mine.organizations.map((o: { id: string }) => o.id)).not.toContain(org.id);
    // The slug is free again.
    expect((await api('POST', '/organizations', owner, { name: 'Reborn', slug: org.slug })).statusCode).toBe(201);
  });
});

describe('POST /organizations/:orgId/transfer-ownership', () => {
  it('is for the owner only; the target becomes owner, the old owner admin, with two member.updated events', async () => {
    const { org, memberships } = await orgWithRoles();
    const eventsBefore = (await eventsOf(t, org.id)).length;
    expectError(
      await api('POST', `/organizations/${org.id}/transfer-ownership`, admin, { memberId: memberships.member.id }),
      403,
      'AUTHORIZATION_ERROR',
    );
    expectError(
      await api('POST', `/organizations/${org.id}/transfer-ownership`, member, { memberId: memberships.member.id }),
      403,
      'AUTHORIZATION_ERROR',
    );
    expect(await eventsOf(t, org.id)).toHaveLength(eventsBefore);

    const res = await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, {
      memberId: memberships.member.id,
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(body.owner).toMatchObject({ id: memberships.member.id, userId: member.userId, role: 'owner' });
    expect(body.previousOwner).toMatchObject({ userId: owner.userId, role: 'admin' });

    const list = json(await api('GET', `/organizations/${org.id}/members`, member));
    const roleOf = (userId: string) => list.members.find((m: { userId: string }) => m.userId === userId)?.role;
    expect(roleOf(member.userId)).toBe('owner');
    expect(roleOf(owner.userId)).toBe('admin');
    expect(list.members.filter((m: { role: string }) => m.role === 'owner')).toHaveLength(1);

    const events = (await eventsOf(t, org.id)).slice(eventsBefore);
    expect(events.map((e) => e.type)).toEqual(['member.updated', 'member.updated']);
    expect(events.map((e) => e.data)).toEqual(
      expect.arrayContaining([
        {
          memberId: body.previousOwner.id,
          organizationId: org.id,
          userId: owner.userId,
          email: owner.email,
          role: 'admin',
          previousRole: 'owner',
        },
        {
          memberId: memberships.member.id,
          organizationId: org.id,
          userId: member.userId,
          email: member.email,
          role: 'owner',
          previousRole: 'member',
        },
      ]),
    );
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({
      actorId: owner.userId,
      action: 'POST /api/v1/organizations/:orgId/transfer-ownership',
      statusCode: 200,
    });

    // The powers moved with the role.
    expectError(await api('DELETE', `/organizations/${org.id}`, owner), 403, 'AUTHORIZATION_ERROR');
    expectError(
      await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: body.previousOwner.id }),
      403,
      'AUTHORIZATION_ERROR',
    );
    const back = await api('POST', `/organizations/${org.id}/transfer-ownership`, member, {
      memberId: body.previousOwner.id,
    });
    expect(back.statusCode, back.body).toBe(200);
  });

  it("answers 404 for another organization's member and 400 for oneself, changing nothing", async () => {
    const { org } = await orgWithRoles();
    const other = await createOrg(t, outsider);
    const otherMembers = json(await api('GET', `/organizations/${other.id}/members`, outsider));
    const foreignId = otherMembers.members[0].id as string;
    const before = json(await api('GET', `/organizations/${org.id}/members`, owner));
    const eventsBefore = await eventsOf(t, org.id);

    expectError(
      await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: foreignId }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, {
        memberId: 'mbr_00000000000000000000000000',
      }),
      404,
      'NOT_FOUND',
    );
    const ownMembershipId = before.members.find((m: { userId: string }) => m.userId === owner.userId).id;
    expectError(
      await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: ownMembershipId }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, {}),
      400,
      'VALIDATION_ERROR',
      /memberId/,
    );

    expect(json(await api('GET', `/organizations/${org.id}/members`, owner))).toEqual(before);
    expect(json(await api('GET', `/organizations/${other.id}/members`, outsider))).toEqual(otherMembers);
    expect(await eventsOf(t, org.id)).toEqual(eventsBefore);
  });
});

describe('GET /users/me/organizations', () => {
  it('lists every membership of the caller with its role, newest first, with the total', async () => {
    const user = await signedInUser(t, 'lister');
    const empty = await api('GET', '/users/me/organizations', user);
    expect(json(empty)).toMatchObject({ organizations: [], total: 0 });

    const own = await createOrg(t, user, { name: 'Mine' });
    t.clock.advance(1000);
    const joined = await createOrg(t, owner, { name: 'Theirs', logoUrl: 'https://example.com/x.png' });
    const membership = await addMember(t, joined.id, owner, user, 'viewer');

    const res = json(await api('GET', '/users/me/organizations', user));
    expect(res.total).toBe(2);
    expect(res.organizations).toEqual([
      {
        id: joined.id,
        name: 'Theirs',
        slug: joined.slug,
        logoUrl: 'https://example.com/x.png',
        role: 'viewer',
        membershipId: membership.id,
        joinedAt: t.clock.now().toISOString(),
      },
      {
        id: own.id,
        name: 'Mine',
        slug: own.slug,
        logoUrl: null,
        role: 'owner',
        membershipId: expect.stringMatching(/^mbr_/),
        joinedAt: own.createdAt,
      },
    ]);
    const paged = json(await api('GET', '/users/me/organizations?pageSize=1', user));
    expect(paged).toMatchObject({ total: 2, page: 1, pageSize: 1, hasMore: true });
    expect(paged.organizations).toHaveLength(1);
  });
});
