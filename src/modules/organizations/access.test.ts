// Who may do what on every organization route, table-driven (docs/api.md#roles-and-permissions): a non-member gets 403,
// each role below the route's permission 403, an unknown organization 404, and another
// organization's member, invitation or project id through this organization's path 404, never 200.
// None of these refusals changes anything. The lowest role allowed is the control.
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createOrg, invite, rowsOf, setPlan, signedInUser, uniqueEmail, type OrgRole, type SignedInUser } from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';

let t: TestApp;
const users = {} as Record<OrgRole | 'target' | 'outsider', SignedInUser>;
/** Another organization (owned by the outsider), whose ids must never work through the fixture's path. */
let foreign: Ids;

beforeAll(async () => {
  t = await createTestApp();
  for (const role of ['owner', 'admin', 'member', 'viewer', 'target', 'outsider'] as const) users[role] = await signedInUser(t, role);
  foreign = await fixture(users.outsider, users.viewer);
});
afterAll(async () => {
  await t?.close();
});

/** A custom role every fixture organization has (the role routes' `:key`). */
const FIXTURE_ROLE = 'fixture-role';
let roleCounter = 0;

interface Ids {
  org: string;
  /** A plain member (role member) other than the callers. */
  member: string;
  invitation: string;
  project: string;
}

/** An organization with every role, one more member, a pending invitation and a project. */
async function fixture(owner: SignedInUser, extra: SignedInUser): Promise<Ids> {
  const org = await createOrg(t, owner);
  await setPlan(t, org.id, 'pro');
  if (owner === users.owner) {
    for (const role of ['admin', 'member', 'viewer'] as const) await addMember(t, org.id, owner, users[role], role);
  }
  const member = await addMember(t, org.id, owner, extra, 'member');
  const { invitation } = await invite(t, org.id, owner, uniqueEmail('pending'), 'member');
  const project = await t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/projects`, headers: owner.auth, payload: { name: 'Fixture' } });
  expect(project.statusCode, project.body).toBe(201);
  const role = await t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/roles`, headers: owner.auth, payload: { key: FIXTURE_ROLE, name: 'Fixture', permissions: ['org:read'] } });
  expect(role.statusCode, role.body).toBe(201);
  return { org: org.id, member: member.id, invitation: invitation.id as string, project: json(project).id as string };
}

/** Everything a refused request could have touched, in both organizations. */
async function state(ids: Ids[]) {
  const out = [];
  for (const { org } of ids) {
    for (const table of ['organizations', 'memberships', 'invitations', 'projects', 'organization_roles', 'events', 'audit_logs'] as const) {
      const key = table === 'organizations' ? sql`id` : sql`organization_id`;
      out.push(rowsOf(await t.deps.db.execute(sql`select row_to_json(x)::text as r from ${sql.identifier(table)} x where ${key} = ${org} order by 1`)).map((r) => r.r));
    }
  }
  return out;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
interface OrgRoute {
  method: Method;
  /** The route pattern as registered. */
  pattern: string;
  /** Lowest role allowed (docs/api.md#roles-and-permissions). */
  min: OrgRole;
  /** Answer to that role on the fixture. */
  control: number;
  payload?: (ids: Ids) => unknown;
  /** Which path parameter names a row of the organization. */
  sub?: 'memberId' | 'invitationId' | 'projectId';
}

const ROUTES: OrgRoute[] = [
  { method: 'GET', pattern: '/organizations/:orgId', min: 'viewer', control: 200 },
  { method: 'PATCH', pattern: '/organizations/:orgId', min: 'admin', control: 200, payload: () => ({ name: 'Changed', settings: { features: { webhooks: true } } }) },
  { method: 'DELETE', pattern: '/organizations/:orgId', min: 'owner', control: 200 },
  { method: 'POST', pattern: '/organizations/:orgId/transfer-ownership', min: 'owner', control: 200, payload: (ids) => ({ memberId: ids.member }) },
  { method: 'GET', pattern: '/organizations/:orgId/members', min: 'viewer', control: 200 },
  { method: 'PATCH', pattern: '/organizations/:orgId/members/:memberId', min: 'admin', control: 200, payload: () => ({ role: 'admin' }), sub: 'memberId' },
  { method: 'DELETE', pattern: '/organizations/:orgId/members/:memberId', min: 'admin', control: 200, sub: 'memberId' },
  { method: 'POST', pattern: '/organizations/:orgId/leave', min: 'viewer', control: 200 },
  { method: 'GET', pattern: '/organizations/:orgId/invitations', min: 'viewer', control: 200 },
  { method: 'POST', pattern: '/organizations/:orgId/invitations', min: 'admin', control: 201, payload: () => ({ email: uniqueEmail('access'), role: 'admin' }) },
  { method: 'DELETE', pattern: '/organizations/:orgId/invitations/:invitationId', min: 'admin', control: 200, sub: 'invitationId' },
  { method: 'POST', pattern: '/organizations/:orgId/invitations/:invitationId/resend', min: 'admin', control: 200, sub: 'invitationId' },
  { method: 'GET', pattern: '/organizations/:orgId/projects', min: 'viewer', control: 200 },
  { method: 'POST', pattern: '/organizations/:orgId/projects', min: 'member', control: 201, payload: () => ({ name: 'New' }) },
  { method: 'GET', pattern: '/organizations/:orgId/projects/:projectId', min: 'viewer', control: 200, sub: 'projectId' },
  { method: 'PATCH', pattern: '/organizations/:orgId/projects/:projectId', min: 'member', control: 200, payload: () => ({ name: 'Renamed' }), sub: 'projectId' },
  { method: 'DELETE', pattern: '/organizations/:orgId/projects/:projectId', min: 'member', control: 200, sub: 'projectId' },
  { method: 'GET', pattern: '/organizations/:orgId/roles', min: 'viewer', control: 200 },
  { method: 'POST', pattern: '/organizations/:orgId/roles', min: 'admin', control: 201, payload: () => ({ key: `access-${++roleCounter}`, name: 'New', permissions: ['org:read'] }) },
  { method: 'PATCH', pattern: '/organizations/:orgId/roles/:key', min: 'admin', control: 200, payload: () => ({ name: 'Renamed' }) },
  { method: 'DELETE', pattern: '/organizations/:orgId/roles/:key', min: 'admin', control: 200 },
  { method: 'POST', pattern: '/organizations/:orgId/permissions/check', min: 'viewer', control: 200, payload: () => ({ userId: users.target.userId, permissions: ['org:read'] }) },
];

const RANK: OrgRole[] = ['viewer', 'member', 'admin', 'owner'];
const SUB_ID = { memberId: 'member', invitationId: 'invitation', projectId: 'project' } as const;

function url(route: OrgRoute, ids: Ids, orgId = ids.org, subId?: string) {
  return `/api/v1${route.pattern
    .replace(':orgId', orgId)
    .replace(':memberId', subId ?? ids.member)
    .replace(':invitationId', subId ?? ids.invitation)
    .replace(':projectId', subId ?? ids.project)
    .replace(':key', FIXTURE_ROLE)}`;
}

function call(route: OrgRoute, caller: SignedInUser, path: string, ids: Ids) {
  const payload = route.payload?.(ids);
  return t.request({ method: route.method, url: path, headers: caller.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });
}

function expectError(res: LightMyRequestResponse, status: number, code: string, what: string) {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
  expect(json(res).error?.code, what).toBe(code);
}

it('the table covers every organization route the app serves', () => {
  const doc = t.app.swagger() as { paths: Record<string, Record<string, unknown>> };
  const ours = new Set(ROUTES.map((r) => `${r.method} /api/v1${r.pattern.replace(/:(\w+)/g, '{$1}')}`));
  const orgPaths = Object.entries(doc.paths)
    .filter(([p]) => /^\/api\/v1\/organizations\/\{orgId\}/.test(p))
    .flatMap(([p, item]) => (['get', 'post', 'patch', 'delete'] as const).filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${p}`))
    // Routes of other issues (API keys, audit log, webhooks, billing) have tables of their own.
    .filter((op) => !/\/(api-keys|audit-logs|webhooks|events|billing)(\/|$)/.test(op));
  expect(orgPaths.filter((op) => !ours.has(op))).toEqual([]);
});

for (const route of ROUTES) {
  describe(`${route.method} ${route.pattern} (${route.min} and above)`, () => {
    let ids: Ids;
    let before: Awaited<ReturnType<typeof state>>;
    beforeAll(async () => {
      ids = await fixture(users.owner, users.target);
      before = await state([ids, foreign]);
    });

    it('a non-member gets 403', async () => {
      expectError(await call(route, users.outsider, url(route, ids), ids), 403, 'AUTHORIZATION_ERROR', 'outsider');
    });

    const below = RANK.slice(0, RANK.indexOf(route.min));
    if (below.length) {
      it(`${below.join(', ')}: 403`, async () => {
        for (const role of below) expectError(await call(route, users[role], url(route, ids), ids), 403, 'AUTHORIZATION_ERROR', role);
      });
    }

    it('an unknown organization is 404, for anyone', async () => {
      for (const who of [users.owner, users.outsider]) {
        expectError(await call(route, who, url(route, ids, 'org_00000000000000000000000000'), ids), 404, 'NOT_FOUND', 'unknown org');
      }
      // Another organization's id is not this one: its owner is a non-member here.
      expectError(await call(route, users.owner, url(route, ids, foreign.org), ids), 403, 'AUTHORIZATION_ERROR', "another organization's path");
    });

    if (route.sub) {
      const sub = route.sub;
      it(`another organization's ${sub} through this organization's path is 404`, async () => {
        const foreignId = foreign[SUB_ID[sub]];
        for (const role of RANK.slice(RANK.indexOf(route.min))) {
          expectError(await call(route, users[role], url(route, ids, ids.org, foreignId), ids), 404, 'NOT_FOUND', `${role} with a foreign ${sub}`);
        }
      });
    }
    if (route.pattern.endsWith('/transfer-ownership')) {
      it("another organization's member as the new owner is 404", async () => {
        const res = await call(route, users.owner, url(route, ids), { ...ids, member: foreign.member });
        expectError(res, 404, 'NOT_FOUND', 'foreign memberId');
      });
    }

    it('the refusals changed nothing, here or in the other organization', async () => {
      expect(await state([ids, foreign])).toEqual(before);
    });

    it(`control: ${route.min} gets ${route.control}`, async () => {
      const res = await call(route, users[route.min], url(route, ids), ids);
      expect(res.statusCode, res.body).toBe(route.control);
    });
  });
}
