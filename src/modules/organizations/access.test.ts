// Who may do what on every organization route (docs/api.md#roles-and-permissions), generated from the
// route table (test/route-table.ts): every route and alias whose guard is {org, permission}, with the
// roles that hold the permission read from ROLE_PERMISSIONS. A non-member gets 403, each role without
// the permission 403, an unknown organization 404, and another organization's member, invitation,
// project, key, endpoint or delivery id through this organization's route 404, never 200. None of
// these refusals changes anything. The lowest role allowed is the control.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiKey,
  createOrg,
  createWebhook,
  invite,
  organizationRows,
  setPlan,
  signedInUser,
  uniqueEmail,
  type OrgRole,
  type SignedInUser,
} from '../../../test/factories.js';
import { createTestApp, json } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';
import {
  BODY_IDS,
  HOOK_URL,
  type Ids,
  inputOf,
  missingInput,
  type Operation,
  operations,
  orgKind,
  pathOf,
  RANK,
  rolesWith,
  strayEntries,
  subKinds,
  UNKNOWN,
  unnamedParams,
} from '../../../test/route-table.js';
import { expectError } from '../../../test/expect.js';

// The app is made while the file is collected: the rows are read from its route table.
const t = await createTestApp();
afterAll(async () => {
  await t.close();
});
const ORG_ROUTES = operations(t).filter((op) => op.org && op.served);

/**
 * The control's status where it is not the route's first success: the fixture's organization has
 * its plan set in the database, not bought, so there is no subscription to cancel (409, from the
 * handler: the guard let the caller through).
 */
const CONTROL_STATUS: Record<string, number> = { cancelSubscription: 409 };

const users = {} as Record<OrgRole | 'target' | 'outsider', SignedInUser>;
/** Another organization (owned by the outsider), whose ids must never work through the fixture's routes. */
let foreign: Ids;
beforeAll(async () => {
  for (const role of ['owner', 'admin', 'member', 'viewer', 'target', 'outsider'] as const)
    users[role] = await signedInUser(t, role);
  foreign = await fixture(users.outsider, users.viewer);
});

/**
 * `user` joins `org` with `role`. The rows are made directly: how people join is tested elsewhere
 * (invitations-*.test.ts), and a fixture made for each row must be cheap.
 */
async function join(org: string, user: SignedInUser, role: Exclude<OrgRole, 'owner'>): Promise<string> {
  const id = newId('mbr', t.clock.now().getTime());
  const now = t.clock.now().toISOString();
  await t.deps.db.execute(sql`insert into memberships (organization_id, id, user_id, role, joined_at, updated_at)
    values (${org}, ${id}, ${user.userId}, ${role}, ${now}::timestamptz, ${now}::timestamptz)`);
  return id;
}

/**
 * An organization on the Pro plan with every role, one more member (role member), a pending
 * invitation, a project, an API key and a webhook endpoint with a pending delivery (of a test event).
 */
let fixtures = 0;
async function fixture(owner: SignedInUser, extra: SignedInUser): Promise<Ids> {
  const org = await createOrg(t, owner);
  await setPlan(t, org.id, 'pro');
  if (owner === users.owner) {
    for (const role of ['admin', 'member', 'viewer'] as const) await join(org.id, users[role], role);
  }
  const member = await join(org.id, extra, 'member');
  const { invitation } = await invite(t, org.id, owner, uniqueEmail('pending'), 'member');
  const project = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${org.id}/projects`,
    headers: owner.auth,
    payload: { name: 'Fixture' },
  });
  expect(project.statusCode, project.body).toBe(201);
  const key = await createApiKey(t, org.id, owner, []);
  const hook = await createWebhook(t, org.id, owner, { url: HOOK_URL });
  const test = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/test`,
    headers: owner.auth,
  });
  expect(test.statusCode, test.body).toBe(200);
  // A custom role of its own key, so another organization's key names nothing here.
  const roleKey = `fixture-${++fixtures}`;
  const role = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${org.id}/roles`,
    headers: owner.auth,
    payload: { key: roleKey, name: 'Fixture', permissions: ['org:read'] },
  });
  expect(role.statusCode, role.body).toBe(201);
  return {
    org: org.id,
    member,
    invitation: invitation.id as string,
    project: json(project).id as string,
    key: key.id,
    hook: hook.id,
    delivery: json(test).data.deliveryId as string,
    role: roleKey,
  };
}

let forReads: Promise<Ids> | undefined;
/** A row's fixture: its own, but the reads share one (a read's control changes nothing another row relies on). */
const fixtureFor = (op: Operation) =>
  op.method === 'GET' ? (forReads ??= fixture(users.owner, users.target)) : fixture(users.owner, users.target);

/** Everything a refused request could have touched, in both organizations. */
const state = (ids: Ids[]) =>
  organizationRows(
    t,
    ids.map((i) => i.org),
  );

function call(op: Operation, caller: SignedInUser, ids: Ids) {
  return t.request({ method: op.method, url: pathOf(op, ids), headers: caller.auth, ...inputOf(op, ids) });
}

describe('the table itself', () => {
  it('has a row for every organization route the app serves, each with what it needs', () => {
    const doc = t.app.swagger() as unknown as {
      paths: Record<string, Record<string, { operationId: string } | undefined>>;
    };
    // Every documented operation under an organization's path is an organization route of the table
    // (a route there declared with another guard would have no row).
    const documented = Object.entries(doc.paths)
      .filter(([p]) => /^\/api\/v1\/organizations\/\{orgId\}/.test(p))
      .flatMap(([, item]) =>
        (['get', 'post', 'put', 'patch', 'delete'] as const)
          .map((m) => item[m]?.operationId)
          .filter((id) => id !== undefined),
      );
    const ours = new Set(ORG_ROUTES.map((op) => op.operationId));
    expect(documented.length).toBeGreaterThan(10);
    expect(documented.filter((id) => !ours.has(id))).toEqual([]);
    expect(
      ORG_ROUTES.flatMap((op) => [
        ...missingInput(op),
        ...unnamedParams(op).map((p) => `${op.operationId}: :${p} names no kind of id (PARAM_IDS)`),
      ]),
    ).toEqual([]);
    expect(
      ORG_ROUTES.filter((op) => rolesWith(op.org!.permission).length === 0).map((op) => op.operationId),
      'permissions no role holds',
    ).toEqual([]);
    expect(strayEntries(CONTROL_STATUS, ORG_ROUTES)).toEqual([]);
  });
});

for (const op of ORG_ROUTES) {
  const allowed = rolesWith(op.org!.permission);
  const refused = RANK.filter((r) => !allowed.includes(r));
  const lowest = allowed[0]!;
  const kind = orgKind(op);
  const subs = [...subKinds(op), ...(BODY_IDS[op.operationId] ?? [])];
  const control = CONTROL_STATUS[op.operationId] ?? op.success;

  describe(`${op.operationId}: ${op.method} ${op.url} (${allowed.join(', ')})`, () => {
    let ids: Ids;
    let before: Awaited<ReturnType<typeof state>>;
    beforeAll(async () => {
      ids = await fixtureFor(op);
      before = await state([ids, foreign]);
    });

    it('a non-member gets 403', async () => {
      expectError(await call(op, users.outsider, ids), 403, 'AUTHORIZATION_ERROR', { what: 'outsider' });
    });

    if (refused.length) {
      it(`${refused.join(', ')}: 403`, async () => {
        for (const role of refused)
          expectError(await call(op, users[role], ids), 403, 'AUTHORIZATION_ERROR', { what: role });
      });
    }

    it('an unknown organization is 404, for anyone', async () => {
      for (const who of [users.owner, users.outsider]) {
        expectError(await call(op, who, { ...ids, [kind]: UNKNOWN[kind] }), 404, 'NOT_FOUND', {
          what: `unknown ${kind}`,
        });
      }
      // Another organization is not this one: its owner is a non-member here.
      expectError(await call(op, users.owner, { ...ids, [kind]: foreign[kind] }), 403, 'AUTHORIZATION_ERROR', {
        what: `another organization's ${kind}`,
      });
    });

    for (const sub of subs) {
      it(`another organization's ${sub} through this organization's route is 404`, async () => {
        for (const role of allowed) {
          expectError(await call(op, users[role], { ...ids, [sub]: foreign[sub] }), 404, 'NOT_FOUND', {
            what: `${role} with a foreign ${sub}`,
          });
        }
      });
    }

    it('the refusals changed nothing, here or in the other organization', async () => {
      expect(await state([ids, foreign])).toEqual(before);
    });

    it(`control: ${lowest} gets ${control}`, async () => {
      const res = await call(op, users[lowest], ids);
      expect(res.statusCode, res.body).toBe(control);
    });
  });
}
