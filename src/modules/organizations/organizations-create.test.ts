// Organizations over HTTP (docs/decisions.md, organizations): create and read.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditOf, createOrg, rowsOf, uniqueSlug } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import {
  admin,
  api,
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

describe('POST /organizations', () => {
  it('answers 201 with the organization resource (docs/api.md#organization-resource) and makes the creator its owner', async () => {
    const slug = uniqueSlug('acme');
    const res = await api('POST', '/organizations', owner, {
      name: 'Acme',
      slug,
      description: 'Rockets',
      logoUrl: 'https://cdn.example.com/acme.png',
    });
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
    expect(members.members).toEqual([
      expect.objectContaining({ id: entry.membershipId, userId: owner.userId, role: 'owner' }),
    ]);
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
    const ok = (body: Record<string, unknown>) =>
      api('POST', '/organizations', owner, { name: 'N', slug: uniqueSlug(), ...body });
    expectError(await ok({ name: '' }), 400, 'VALIDATION_ERROR', /name/);
    expectError(await ok({ name: 'n'.repeat(101) }), 400, 'VALIDATION_ERROR', /name/);
    expectError(await ok({ name: '   ' }), 400, 'VALIDATION_ERROR', /name/);
    expect((await ok({ name: 'n'.repeat(100) })).statusCode).toBe(201);
    expectError(await ok({ description: 'd'.repeat(501) }), 400, 'VALIDATION_ERROR', /description/);
    expect((await ok({ description: 'd'.repeat(500) })).statusCode).toBe(201);
    expectError(await ok({ logoUrl: 'not a url' }), 400, 'VALIDATION_ERROR', /logoUrl/);
    expectError(await ok({ logoUrl: '/relative/logo.png' }), 400, 'VALIDATION_ERROR', /logoUrl/);
    for (const logoUrl of [
      'javascript:alert(1)',
      'data:image/png;base64,AAAA',
      'http://',
      'ftp://example.com/logo.png',
    ]) {
      expectError(await ok({ logoUrl }), 400, 'VALIDATION_ERROR', /logoUrl/);
    }
    expect((await ok({ logoUrl: 'http://cdn.example.com/logo.png?v=2' })).statusCode).toBe(201);
    expectError(await ok({ settings: {} }), 400, 'VALIDATION_ERROR', /settings/);
    expectError(await api('POST', '/organizations', owner, { name: 'No slug' }), 400, 'VALIDATION_ERROR', /slug/);
  });

  it('answers 409 for a slug that exists', async () => {
    const org = await createOrg(t, owner);
    expectError(
      await api('POST', '/organizations', outsider, { name: 'Copy', slug: org.slug }),
      409,
      'CONFLICT',
      /slug/,
    );
    // The refused creator got no organization out of it.
    const mine = json(await api('GET', '/users/me/organizations', outsider));
    expect(mine.organizations.map((o: { slug: string }) => o.slug)).not.toContain(org.slug);
  });

  it('settles parallel creation with one slug: exactly one 201, the others 409', async () => {
    const slug = uniqueSlug('race');
    const users = [owner, admin, member, viewer, outsider];
    const results = await Promise.all(
      users.map((u, i) => api('POST', '/organizations', u, { name: `Racer ${i}`, slug })),
    );
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses, results.map((r) => r.body).join('\n')).toEqual([201, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(json(r).error.code).toBe('CONFLICT');
    const rows = rowsOf(await t.deps.db.execute(sql`select id from organizations where slug = ${slug}`));
    expect(rows).toHaveLength(1);
    const owners = rowsOf(
      await t.deps.db.execute(sql`select user_id from memberships where organization_id = ${rows[0]!.id as string}`),
    );
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
