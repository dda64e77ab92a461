// Projects over HTTP (docs/api.md#projects): list, create, get, patch, delete; who may; the events.
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
let member: SignedInUser;
let viewer: SignedInUser;
let outsider: SignedInUser;
let orgId: string;
let otherOrgId: string;

useApp();
beforeAll(async () => {
  [owner, member, viewer, outsider] = [
    await signedInUser(t, 'owner'),
    await signedInUser(t, 'member'),
    await signedInUser(t, 'viewer'),
    await signedInUser(t, 'outsider'),
  ];
  orgId = (await createOrg(t, owner)).id;
  await setPlan(t, orgId, 'pro');
  await addMember(t, orgId, owner, member, 'member');
  await addMember(t, orgId, owner, viewer, 'viewer');
  otherOrgId = (await createOrg(t, outsider)).id;
});

const UA = { 'user-agent': 'project-tests/1.0' };
function api(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  caller: { auth: Record<string, string> },
  payload?: unknown,
) {
  return t.request({
    method,
    url: `/api/v1${url}`,
    headers: { ...UA, ...caller.auth },
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
}

async function createProject(caller: SignedInUser, body: Record<string, unknown>, org = orgId) {
  const res = await api('POST', `/organizations/${org}/projects`, caller, body);
  expect(res.statusCode, res.body).toBe(201);
  return json(res);
}

describe('projects', () => {
  it('create answers 201 with the project, records project.created and an audit entry', async () => {
    const res = await api('POST', `/organizations/${orgId}/projects`, member, {
      name: '  Website  ',
      description: 'Marketing site',
    });
    expect(res.statusCode, res.body).toBe(201);
    const now = t.clock.now().toISOString();
    const p = json(res);
    expect(p).toEqual({
      id: expect.stringMatching(/^prj_[0-9a-z]{26}$/),
      organizationId: orgId,
      name: 'Website',
      description: 'Marketing site',
      createdBy: member.userId,
      createdAt: now,
      updatedAt: now,
    });
    expect((await eventsOf(t, orgId)).at(-1)).toMatchObject({
      type: 'project.created',
      data: { projectId: p.id, organizationId: orgId, name: 'Website' },
    });
    expect((await auditOf(t, orgId)).at(-1)).toEqual({
      organizationId: orgId,
      actorType: 'user',
      actorId: member.userId,
      action: 'POST /api/v1/organizations/:orgId/projects',
      method: 'POST',
      path: `/api/v1/organizations/${orgId}/projects`,
      statusCode: 201,
      ipAddress: '127.0.0.1',
      userAgent: 'project-tests/1.0',
    });
    const noDescription = await createProject(owner, { name: 'Bare' });
    expect(noDescription.description).toBeNull();
    const got = await api('GET', `/organizations/${orgId}/projects/${p.id}`, viewer);
    expect(got.statusCode, got.body).toBe(200);
    expect(json(got)).toEqual(p);
  });

  it('validates name (1-100) and description (≤500 or null), recording nothing when refused', async () => {
    const events = (await eventsOf(t, orgId)).length;
    const audit = (await auditOf(t, orgId)).length;
    const post = (body: unknown) => api('POST', `/organizations/${orgId}/projects`, owner, body);
    expectError(await post({}), 400, 'VALIDATION_ERROR', /name/);
    expectError(await post({ name: '' }), 400, 'VALIDATION_ERROR', /name/);
    expectError(await post({ name: '   ' }), 400, 'VALIDATION_ERROR', /name/);
    expectError(await post({ name: 'n'.repeat(101) }), 400, 'VALIDATION_ERROR', /name/);
    expectError(await post({ name: 'ok', description: 'd'.repeat(501) }), 400, 'VALIDATION_ERROR', /description/);
    expectError(await post({ name: 'ok', description: 5 }), 400, 'VALIDATION_ERROR', /description/);
    expectError(await post({ name: 'ok', organizationId: otherOrgId }), 400, 'VALIDATION_ERROR', /organizationId/);
    expect(await eventsOf(t, orgId)).toHaveLength(events);
    expect(await auditOf(t, orgId)).toHaveLength(audit);
    expect((await post({ name: 'n'.repeat(100), description: 'd'.repeat(500) })).statusCode).toBe(201);
    expect((await post({ name: 'x', description: null })).statusCode).toBe(201);
  });

  it('lists newest first with the pagination envelope', async () => {
    const org = (await createOrg(t, owner)).id;
    const made = [];
    for (const name of ['one', 'two', 'three']) {
      made.push(await createProject(owner, { name }, org));
      t.clock.advance(1000);
    }
    // Same millisecond: still in creation order (newest first).
    made.push(await createProject(owner, { name: 'four' }, org));
    made.push(await createProject(owner, { name: 'five' }, org));
    const names = (body: ReturnType<typeof json>) => body.data.map((p: { name: string }) => p.name);
    const all = json(await api('GET', `/organizations/${org}/projects`, owner));
    expect(all).toMatchObject({ total: 5, page: 1, pageSize: 20, hasMore: false });
    expect(names(all)).toEqual(['five', 'four', 'three', 'two', 'one']);
    const p1 = json(await api('GET', `/organizations/${org}/projects?pageSize=2`, owner));
    expect(p1).toMatchObject({ total: 5, page: 1, pageSize: 2, hasMore: true });
    expect(names(p1)).toEqual(['five', 'four']);
    const p3 = json(await api('GET', `/organizations/${org}/projects?page=3&pageSize=2`, owner));
    expect(p3).toMatchObject({ total: 5, page: 3, pageSize: 2, hasMore: false });
    expect(names(p3)).toEqual(['one']);
    // Past the last page: no rows, the total still counted.
    expect(json(await api('GET', `/organizations/${org}/projects?page=4&pageSize=2`, owner))).toEqual({
      data: [],
      total: 5,
      page: 4,
      pageSize: 2,
      hasMore: false,
    });
    expectError(
      await api('GET', `/organizations/${org}/projects?pageSize=101`, owner),
      400,
      'VALIDATION_ERROR',
      /pageSize/,
    );
    // Another organization's projects are not listed.
    const other = json(await api('GET', `/organizations/${orgId}/projects?pageSize=100`, owner));
    expect(other.data.map((p: { organizationId: string }) => p.organizationId)).not.toContain(org);
  });

  it('patch changes the given fields, null clears the description, and records project.updated', async () => {
    const p = await createProject(owner, { name: 'Before', description: 'Old' });
    t.clock.advance(5000);
    const res = await api('PATCH', `/organizations/${orgId}/projects/${p.id}`, member, { name: 'After' });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ ...p, name: 'After', updatedAt: t.clock.now().toISOString() });
    const cleared = await api('PATCH', `/organizations/${orgId}/projects/${p.id}`, member, { description: null });
    expect(json(cleared)).toMatchObject({ name: 'After', description: null });
    expect((await eventsOf(t, orgId)).at(-1)).toMatchObject({
      type: 'project.updated',
      data: { projectId: p.id, organizationId: orgId, name: 'After' },
    });
    expect((await auditOf(t, orgId)).at(-1)).toMatchObject({
      actorId: member.userId,
      action: 'PATCH /api/v1/organizations/:orgId/projects/:projectId',
      statusCode: 200,
    });
    expectError(
      await api('PATCH', `/organizations/${orgId}/projects/${p.id}`, member, { name: '' }),
      400,
      'VALIDATION_ERROR',
      /name/,
    );
    expectError(
      await api('PATCH', `/organizations/${orgId}/projects/${p.id}`, member, { createdBy: member.userId }),
      400,
      'VALIDATION_ERROR',
      /createdBy/,
    );
    expect(json(await api('GET', `/organizations/${orgId}/projects/${p.id}`, viewer))).toMatchObject({
      name: 'After',
      description: null,
      createdBy: owner.userId,
    });
  });

  it('delete removes it and records project.deleted; then 404', async () => {
    const p = await createProject(member, { name: 'Doomed' });
    const res = await api('DELETE', `/organizations/${orgId}/projects/${p.id}`, member);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ message: expect.any(String) });
    expect((await eventsOf(t, orgId)).at(-1)).toMatchObject({
      type: 'project.deleted',
      data: { projectId: p.id, organizationId: orgId, name: 'Doomed' },
    });
    expect((await auditOf(t, orgId)).at(-1)).toMatchObject({
      actorId: member.userId,
      action: 'DELETE /api/v1/organizations/:orgId/projects/:projectId',
      statusCode: 200,
    });
    expectError(await api('GET', `/organizations/${orgId}/projects/${p.id}`, member), 404, 'NOT_FOUND');
    expectError(await api('DELETE', `/organizations/${orgId}/projects/${p.id}`, member), 404, 'NOT_FOUND');
    expectError(
      await api('PATCH', `/organizations/${orgId}/projects/${p.id}`, member, { name: 'Zombie' }),
      404,
      'NOT_FOUND',
    );
  });

  it('a viewer reads but cannot write (403), a non-member cannot read, and nothing is recorded', async () => {
    const p = await createProject(owner, { name: 'Guarded' });
    const events = await eventsOf(t, orgId);
    const audit = await auditOf(t, orgId);
    expect((await api('GET', `/organizations/${orgId}/projects`, viewer)).statusCode).toBe(200);
    expect((await api('GET', `/organizations/${orgId}/projects/${p.id}`, viewer)).statusCode).toBe(200);
    expectError(
      await api('POST', `/organizations/${orgId}/projects`, viewer, { name: 'No' }),
      403,
      'AUTHORIZATION_ERROR',
      /projects:write/,
    );
    expectError(
      await api('PATCH', `/organizations/${orgId}/projects/${p.id}`, viewer, { name: 'No' }),
      403,
      'AUTHORIZATION_ERROR',
    );
    expectError(await api('DELETE', `/organizations/${orgId}/projects/${p.id}`, viewer), 403, 'AUTHORIZATION_ERROR');
    expectError(await api('GET', `/organizations/${orgId}/projects`, outsider), 403, 'AUTHORIZATION_ERROR');
    expectError(await api('GET', `/organizations/${orgId}/projects/${p.id}`, outsider), 403, 'AUTHORIZATION_ERROR');
    expectError(
      await api('POST', `/organizations/${orgId}/projects`, outsider, { name: 'No' }),
      403,
      'AUTHORIZATION_ERROR',
    );
    expectError(await api('GET', '/organizations/org_00000000000000000000000000/projects', owner), 404, 'NOT_FOUND');
    expect(json(await api('GET', `/organizations/${orgId}/projects/${p.id}`, owner))).toEqual(p);
    expect(await eventsOf(t, orgId)).toEqual(events);
    expect(await auditOf(t, orgId)).toEqual(audit);
  });

  it("another organization's project is not found through this organization's path", async () => {
    const foreign = await createProject(outsider, { name: 'Theirs' }, otherOrgId);
    const base = `/organizations/${orgId}/projects/${foreign.id}`;
    expectError(await api('GET', base, owner), 404, 'NOT_FOUND');
    expectError(await api('PATCH', base, owner, { name: 'Mine now' }), 404, 'NOT_FOUND');
    expectError(await api('DELETE', base, owner), 404, 'NOT_FOUND');
    // The outsider's own path is the only way in, and the project is untouched.
    expect(json(await api('GET', `/organizations/${otherOrgId}/projects/${foreign.id}`, outsider))).toEqual(foreign);
    expect((await eventsOf(t, otherOrgId)).map((e) => e.type)).toEqual(['project.created']);
  });

  it('a patch racing a delete of one project: never a 500, and the events match what happened', async () => {
    for (let round = 0; round < 3; round++) {
      const p = await createProject(owner, { name: `Raced ${round}` });
      const [patched, deleted] = await Promise.all([
        api('PATCH', `/organizations/${orgId}/projects/${p.id}`, member, { name: 'Patched' }),
        api('DELETE', `/organizations/${orgId}/projects/${p.id}`, member),
      ]);
      expect(deleted.statusCode, deleted.body).toBe(200);
      expect([200, 404], patched.body).toContain(patched.statusCode);
      const mine = (await eventsOf(t, orgId)).filter((e) => e.data.projectId === p.id).map((e) => e.type);
      expect(mine).toEqual(
        patched.statusCode === 200
          ? ['project.created', 'project.updated', 'project.deleted']
          : ['project.created', 'project.deleted'],
      );
    }
  });
});
