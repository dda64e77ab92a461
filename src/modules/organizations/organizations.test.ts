// Organizations over HTTP (spec §2.3, §4.3; DECISIONS §3): create, read, update, delete, transfer,
// and the caller's list.
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, auditOf, createOrg, eventsOf, rowsOf, setPlan, signedInUser, uniqueSlug, type SignedInUser } from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let owner: SignedInUser;
let admin: SignedInUser;
let member: SignedInUser;
let viewer: SignedInUser;
let outsider: SignedInUser;

beforeAll(async () => {
  t = await createTestApp();
  [owner, admin, member, viewer, outsider] = [
    await signedInUser(t, 'owner'),
    await signedInUser(t, 'admin'),
    await signedInUser(t, 'member'),
    await signedInUser(t, 'viewer'),
    await signedInUser(t, 'outsider'),
  ];
});
afterAll(async () => {
  await t?.close();
});

const UA = { 'user-agent': 'org-tests/1.0' };
type Caller = { auth: Record<string, string> } | null;
function api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, caller: Caller, payload?: unknown) {
  return t.request({ method, url: `/api/v1${url}`, headers: { ...UA, ...(caller?.auth ?? {}) }, ...(payload !== undefined ? { payload: payload as object } : {}) });
}

function expectError(res: LightMyRequestResponse, status: number, code: string, details?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const body = json(res);
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  if (details) expect(body.error.details).toMatch(details);
}

/** An organization with an owner, an admin, a member and a viewer (Pro plan: more than 3 seats). */
async function orgWithRoles(body: Record<string, unknown> = {}) {
  const org = await createOrg(t, owner, body);
  await setPlan(t, org.id, 'pro');
  const memberships = {
    admin: await addMember(t, org.id, owner, admin, 'admin'),
    member: await addMember(t, org.id, owner, member, 'member'),
    viewer: await addMember(t, org.id, owner, viewer, 'viewer'),
  };
  return { org, memberships };
}

const counts = async (orgId: string) => {
  const [row] = rowsOf(
    await t.deps.db.execute(sql`select
      (select count(*)::int from organizations where id = ${orgId}) as orgs,
      (select count(*)::int from memberships where organization_id = ${orgId}) as members,
      (select count(*)::int from invitations where organization_id = ${orgId}) as invitations,
      (select count(*)::int from projects where organization_id = ${orgId}) as projects,
      (select count(*)::int from events where organization_id = ${orgId}) as events,
      (select count(*)::int from audit_logs where organization_id = ${orgId}) as audit`),
  );
  return row!;
};

describe('POST /organizations', () => {
  it('answers 201 with the organization of spec §2.3 and makes the creator its owner', async () => {
    const slug = uniqueSlug('acme');
    const res = await api('POST', '/organizations', owner, { name: 'Acme', slug, description: 'Rockets', logoUrl: 'https://cdn.example.com/acme.png' });
    expect(res.statusCode, res.body).toBe(201);
    const now = t.clock.now().toISOString();
    const org = json(res);
    expect(org).toEqual({
      id: expect.stringMatching(/^org_[0-9a-z]{26}$/),
      name: 'Acme',
      slug,
      description: 'Rockets',
      logoUrl: 'https://cdn.example.com/acme.png',
      settings: {},
      createdBy: owner.userId,
      createdAt: now,
      updatedAt: now,
    });

    const mine = await api('GET', '/users/me/organizations', owner);
    expect(mine.statusCode, mine.body).toBe(200);
    const list = json(mine);
    const entry = list.organizations.find((o: { id: string }) => o.id === org.id);
    expect(entry).toEqual({
      id: org.id,
      name: 'Acme',
      slug,
      logoUrl: 'https://cdn.example.com/acme.png',
      role: 'owner',
      membershipId: expect.stringMatching(/^mbr_[0-9a-z]{26}$/),
      joinedAt: now,
    });
    expect(list.total).toBe(list.organizations.length);

    // The owner membership is a real row: the members list shows it.
    const members = json(await api('GET', `/organizations/${org.id}/members`, owner));
    expect(members.members).toEqual([expect.objectContaining({ id: entry.membershipId, userId: owner.userId, role: 'owner' })]);
  });

  it('description and logoUrl default to null', async () => {
    const org = await createOrg(t, owner);
    expect(org).toMatchObject({ description: null, logoUrl: null, settings: {} });
  });

  it('records an audit entry for the creation, and nothing for a refused one', async () => {
    const slug = uniqueSlug('audited');
    const res = await api('POST', '/organizations', owner, { name: 'Audited', slug });
    expect(res.statusCode, res.body).toBe(201);
    const orgId = json(res).id as string;
    expect(await auditOf(t, orgId)).toEqual([
      {
        organizationId: orgId,
        actorType: 'user',
        actorId: owner.userId,
        action: 'POST /api/v1/organizations',
        method: 'POST',
        path: '/api/v1/organizations',
        statusCode: 201,
        ipAddress: '127.0.0.1',
        userAgent: 'org-tests/1.0',
      },
    ]);
    expectError(await api('POST', '/organizations', outsider, { name: 'Again', slug }), 409, 'CONFLICT');
    expect(await auditOf(t, orgId)).toHaveLength(1);
  });

  it.each([
    ['2 characters', 'ab'],
    ['51 characters', 'a'.repeat(51)],
    ['upper case and underscore', 'Bad_Slug'],
    ['leading and trailing hyphens', '-a-'],
    ['a double hyphen', 'a--b'],
    ['a space', 'a b c'],
  ])('refuses a slug with %s (400 naming slug)', async (_label, slug) => {
    expectError(await api('POST', '/organizations', owner, { name: 'X', slug }), 400, 'VALIDATION_ERROR', /slug/);
  });

  it('accepts slugs of 3 and 50 characters', async () => {
    for (const slug of ['k3s', uniqueSlug('b').padEnd(50, 'x')]) {
      const res = await api('POST', '/organizations', owner, { name: 'Bounds', slug });
      expect(res.statusCode, `${slug}: ${res.body}`).toBe(201);
      expect(json(res).slug).toBe(slug);
    }
  });

  it('bounds name (1-100), description (≤500) and requires logoUrl to be a URI', async () => {
    const ok = (body: Record<string, unknown>) => api('POST', '/organizations', owner, { name: 'N', slug: uniqueSlug(), ...body });
    expectError(await ok({ name: '' }), 400, 'VALIDATION_ERROR', /name/);
    expectError(await ok({ name: 'n'.repeat(101) }), 400, 'VALIDATION_ERROR', /name/);
    expectError(await ok({ name: '   ' }), 400, 'VALIDATION_ERROR', /name/);
    expect((await ok({ name: 'n'.repeat(100) })).statusCode).toBe(201);
    expectError(await ok({ description: 'd'.repeat(501) }), 400, 'VALIDATION_ERROR', /description/);
    expect((await ok({ description: 'd'.repeat(500) })).statusCode).toBe(201);
    expectError(await ok({ logoUrl: 'not a url' }), 400, 'VALIDATION_ERROR', /logoUrl/);
    expectError(await ok({ logoUrl: '/relative/logo.png' }), 400, 'VALIDATION_ERROR', /logoUrl/);
    for (const logoUrl of ['javascript:alert(1)', 'data:image/png;base64,AAAA', 'http://', 'ftp://example.com/logo.png']) {
      expectError(await ok({ logoUrl }), 400, 'VALIDATION_ERROR', /logoUrl/);
    }
    expect((await ok({ logoUrl: 'http://cdn.example.com/logo.png?v=2' })).statusCode).toBe(201);
    expectError(await ok({ settings: {} }), 400, 'VALIDATION_ERROR', /settings/);
    expectError(await api('POST', '/organizations', owner, { name: 'No slug' }), 400, 'VALIDATION_ERROR', /slug/);
  });

  it('answers 409 for a slug that exists', async () => {
    const org = await createOrg(t, owner);
    expectError(await api('POST', '/organizations', outsider, { name: 'Copy', slug: org.slug }), 409, 'CONFLICT', /slug/);
    // The refused creator got no organization out of it.
    const mine = json(await api('GET', '/users/me/organizations', outsider));
    expect(mine.organizations.map((o: { slug: string }) => o.slug)).not.toContain(org.slug);
  });

  it('settles parallel creation with one slug: exactly one 201, the others 409', async () => {
    const slug = uniqueSlug('race');
    const users = [owner, admin, member, viewer, outsider];
    const results = await Promise.all(users.map((u, i) => api('POST', '/organizations', u, { name: `Racer ${i}`, slug })));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses, results.map((r) => r.body).join('\n')).toEqual([201, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(json(r).error.code).toBe('CONFLICT');
    const rows = rowsOf(await t.deps.db.execute(sql`select id from organizations where slug = ${slug}`));
    expect(rows).toHaveLength(1);
    const owners = rowsOf(await t.deps.db.execute(sql`select user_id from memberships where organization_id = ${rows[0]!.id as string}`));
    expect(owners).toHaveLength(1);
  });
});

describe('GET /organizations/:orgId', () => {
  it('answers a member 200, a non-member 403 and an unknown organization 404', async () => {
    const { org } = await orgWithRoles();
    for (const u of [owner, admin, member, viewer]) {
      const res = await api('GET', `/organizations/${org.id}`, u);
      expect(res.statusCode, res.body).toBe(200);
      expect(json(res)).toEqual(org);
    }
    expectError(await api('GET', `/organizations/${org.id}`, outsider), 403, 'AUTHORIZATION_ERROR');
    expectError(await api('GET', '/organizations/org_00000000000000000000000000', owner), 404, 'NOT_FOUND');
    expect((await api('GET', `/organizations/${org.id}`, null)).statusCode).toBe(401);
  });
});

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
      expectError(await api('PATCH', `/organizations/${org.id}`, u, { name: 'Hijacked' }), 403, 'AUTHORIZATION_ERROR', /org:update/);
    }
    expectError(await api('PATCH', `/organizations/${org.id}`, outsider, { name: 'Hijacked' }), 403, 'AUTHORIZATION_ERROR');
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
    expect(await patch({ features: { webhooks: true } })).toEqual({ branding: { primaryColor: '#112233' }, features: { webhooks: true } });
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
    expectError(await api('PATCH', `/organizations/${org.id}`, owner, { settings: { theme: 'dark' } }), 400, 'VALIDATION_ERROR', /theme/);
    expectError(await api('PATCH', `/organizations/${org.id}`, owner, { settings: { branding: { font: 'x' } } }), 400, 'VALIDATION_ERROR', /font/);
    expectError(await api('PATCH', `/organizations/${org.id}`, owner, { settings: { features: { webhooks: 'yes' } } }), 400, 'VALIDATION_ERROR', /webhooks/);
    expectError(await api('PATCH', `/organizations/${org.id}`, owner, { slug: 'new-slug' }), 400, 'VALIDATION_ERROR', /slug/);
    // A valid name beside an invalid field: the whole request is refused.
    expectError(await api('PATCH', `/organizations/${org.id}`, owner, { name: 'Half', logoUrl: 'nope' }), 400, 'VALIDATION_ERROR', /logoUrl/);
    expectError(await api('PATCH', `/organizations/${org.id}`, owner, { name: '  ' }), 400, 'VALIDATION_ERROR', /name/);
    expectError(await api('PATCH', `/organizations/${org.id}`, owner, { name: 'Half', logoUrl: 'javascript:alert(1)' }), 400, 'VALIDATION_ERROR', /logoUrl/);
    expect(json(await api('GET', `/organizations/${org.id}`, owner))).toEqual(before);
  });

  it('null clears description and logoUrl; absent fields are kept', async () => {
    const org = await createOrg(t, owner, { description: 'Something', logoUrl: 'https://example.com/l.png' });
    const kept = await api('PATCH', `/organizations/${org.id}`, owner, { name: 'Only the name' });
    expect(json(kept)).toMatchObject({ description: 'Something', logoUrl: 'https://example.com/l.png' });
    const cleared = await api('PATCH', `/organizations/${org.id}`, owner, { description: null, logoUrl: null });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(json(cleared)).toMatchObject({ name: 'Only the name', description: null, logoUrl: null });
    expect(json(await api('GET', `/organizations/${org.id}`, owner))).toMatchObject({ description: null, logoUrl: null });
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
    await api('POST', `/organizations/${org.id}/invitations`, owner, { email: 'pending-delete@example.com', role: 'member' });
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
    expectError(await api('POST', `/organizations/${org.id}/transfer-ownership`, admin, { memberId: memberships.member.id }), 403, 'AUTHORIZATION_ERROR');
    expectError(await api('POST', `/organizations/${org.id}/transfer-ownership`, member, { memberId: memberships.member.id }), 403, 'AUTHORIZATION_ERROR');
    expect(await eventsOf(t, org.id)).toHaveLength(eventsBefore);

    const res = await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: memberships.member.id });
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
        { memberId: body.previousOwner.id, organizationId: org.id, userId: owner.userId, email: owner.email, role: 'admin', previousRole: 'owner' },
        { memberId: memberships.member.id, organizationId: org.id, userId: member.userId, email: member.email, role: 'owner', previousRole: 'member' },
      ]),
    );
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({ actorId: owner.userId, action: 'POST /api/v1/organizations/:orgId/transfer-ownership', statusCode: 200 });

    // The powers moved with the role.
    expectError(await api('DELETE', `/organizations/${org.id}`, owner), 403, 'AUTHORIZATION_ERROR');
    expectError(await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: body.previousOwner.id }), 403, 'AUTHORIZATION_ERROR');
    const back = await api('POST', `/organizations/${org.id}/transfer-ownership`, member, { memberId: body.previousOwner.id });
    expect(back.statusCode, back.body).toBe(200);
  });

  it("answers 404 for another organization's member and 400 for oneself, changing nothing", async () => {
    const { org } = await orgWithRoles();
    const other = await createOrg(t, outsider);
    const otherMembers = json(await api('GET', `/organizations/${other.id}/members`, outsider));
    const foreignId = otherMembers.members[0].id as string;
    const before = json(await api('GET', `/organizations/${org.id}/members`, owner));
    const eventsBefore = await eventsOf(t, org.id);

    expectError(await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: foreignId }), 404, 'NOT_FOUND');
    expectError(await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: 'mbr_00000000000000000000000000' }), 404, 'NOT_FOUND');
    const ownMembershipId = before.members.find((m: { userId: string }) => m.userId === owner.userId).id;
    expectError(await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: ownMembershipId }), 400, 'VALIDATION_ERROR');
    expectError(await api('POST', `/organizations/${org.id}/transfer-ownership`, owner, {}), 400, 'VALIDATION_ERROR', /memberId/);

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
      { id: joined.id, name: 'Theirs', slug: joined.slug, logoUrl: 'https://example.com/x.png', role: 'viewer', membershipId: membership.id, joinedAt: t.clock.now().toISOString() },
      { id: own.id, name: 'Mine', slug: own.slug, logoUrl: null, role: 'owner', membershipId: expect.stringMatching(/^mbr_/), joinedAt: own.createdAt },
    ]);
    const paged = json(await api('GET', '/users/me/organizations?pageSize=1', user));
    expect(paged).toMatchObject({ total: 2, page: 1, pageSize: 1, hasMore: true });
    expect(paged.organizations).toHaveLength(1);
  });
});
