// API keys and roles, through HTTP. A key never assigns or invites a role above member and never
// changes or removes an admin or the owner, whatever its scopes and whoever made it (403, nothing
// changes). A key dies with its creator's place in the organization: removing the creator, the
// creator leaving, or a demotion below admin revokes every key they made there, in the same
// transaction (api_key.revoked in the outbox, an audit entry), and the key answers 401 at once, on
// every instance. A transfer keeps the old owner's keys (an admin still manages keys); deleting the
// organization takes its keys with it.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  auditOf,
  createApiKey,
  createOrg,
  eventsOf,
  invite,
  keyState,
  memberRoleOf,
  setPlan,
  signedInUser,
  type MadeKey,
  type SignedInUser,
} from '../../../test/factories.js';
import { createTestApp, json, onPostgres, onRedis, queryRows, type TestApp } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';

const twoInstances = onRedis && onPostgres;

let t: TestApp;
/** A second instance on the same database and Redis prefix when both are configured, else `t`. */
let b: TestApp;
let owner: SignedInUser;
beforeAll(async () => {
  t = await createTestApp();
  b = twoInstances ? await createTestApp({ database: t.database, clock: t.clock, redisPrefix: t.deps.redisPrefix }) : t;
  owner = await signedInUser(t, 'kr-owner');
}, 120_000);
afterAll(async () => {
  if (b && b !== t) await b.close();
  await t?.close();
});

const base = (org: string) => `/api/v1/organizations/${org}`;
const REVOKE_ACTION = 'DELETE /api/v1/organizations/:orgId/api-keys/:keyId';

type Person = SignedInUser & { memberId: string };

async function newOrg() {
  const org = (await createOrg(t, owner)).id;
  await setPlan(t, org, 'enterprise');
  return org;
}

async function join(org: string, role: 'admin' | 'member' | 'viewer', label: string = role): Promise<Person> {
  const user = await signedInUser(t, `kr-${label}`);
  const m = await addMember(t, org, owner, user, role);
  return { ...user, memberId: m.id };
}

/** A member made directly in the database (cheaper; who they are is not under test). */
async function rawMember(org: string, role: 'admin' | 'member' | 'viewer') {
  const now = t.clock.now().toISOString();
  const userId = newId('usr', t.clock.now().getTime());
  const memberId = newId('mbr', t.clock.now().getTime());
  await t.deps.db.execute(sql`insert into users (id, email, email_verified_at, full_name, preferences, created_at, updated_at)
    values (${userId}, ${`kr-raw-${userId}@example.com`}, ${now}::timestamptz, 'Raw', ${JSON.stringify({ theme: 'system', language: 'en', timezone: 'UTC', notifications: { email: true, push: false } })}::jsonb, ${now}::timestamptz, ${now}::timestamptz)`);
  await t.deps.db.execute(sql`insert into memberships (organization_id, id, user_id, role, joined_at, updated_at)
    values (${org}, ${memberId}, ${userId}, ${role}, ${now}::timestamptz, ${now}::timestamptz)`);
  return memberId;
}

const patchRole = (app: TestApp, headers: Record<string, string>, org: string, memberId: string, role: string) =>
  app.request({ method: 'PATCH', url: `${base(org)}/members/${memberId}`, headers, payload: { role } });
const removeMember = (app: TestApp, headers: Record<string, string>, org: string, memberId: string) =>
  app.request({ method: 'DELETE', url: `${base(org)}/members/${memberId}`, headers });
const inviteWith = (app: TestApp, headers: Record<string, string>, org: string, email: string, role: string) =>
  app.request({ method: 'POST', url: `${base(org)}/invitations`, headers, payload: { email, role } });
const listMembers = (app: TestApp, key: MadeKey, org: string) => app.request({ method: 'GET', url: `${base(org)}/members`, headers: key.headers });

function expectRefused(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(403);
  expect(json(res)).toEqual({ success: false, error: { code: 'AUTHORIZATION_ERROR', message: expect.stringMatching(/API key/), details: expect.any(String) } });
}

function expectKeyDead(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(401);
  expect(json(res).error.code).toBe('AUTHENTICATION_ERROR');
}

const invitationsTo = async (org: string, email: string) =>
  queryRows<{ role: string; status: string; token_hash: string; expires_at: string }>(
    t,
    sql`select role, status, token_hash, expires_at from invitations where organization_id = ${org} and email = ${email.toLowerCase()}`,
  );

const revokedEvents = async (org: string) => (await eventsOf(t, org)).filter((e) => e.type === 'api_key.revoked');

describe('a key never grants, invites or touches a role above member', () => {
  let org: string;
  let admin: Person;
  let member: Person;
  let adminKey: MadeKey;
  /** Made by the owner, with every scope: who made a key does not widen what it may do to roles. */
  let ownerKey: MadeKey;
  let ownerMemberId: string;

  beforeAll(async () => {
    org = await newOrg();
    admin = await join(org, 'admin');
    member = await join(org, 'member');
    adminKey = await createApiKey(t, org, admin, ['write:members']);
    ownerKey = await createApiKey(t, org, owner, ['read:projects', 'write:projects', 'read:members', 'write:members', 'read:webhooks', 'write:webhooks', 'read:billing', 'read:audit-logs']);
    const members = json(await listMembers(t, ownerKey, org)).members as Array<{ id: string; role: string }>;
    ownerMemberId = members.find((m) => m.role === 'owner')!.id;
  }, 120_000);

  it('promoting a member to admin: 403, the role and the events unchanged', async () => {
    const before = await eventsOf(t, org);
    for (const key of [adminKey, ownerKey]) expectRefused(await patchRole(t, key.headers, org, member.memberId, 'admin'));
    expect(await memberRoleOf(t, member.memberId)).toBe('member');
    expect(await eventsOf(t, org)).toEqual(before);
    // The member's own view agrees.
    const mine = json(await t.request({ method: 'GET', url: '/api/v1/users/me/organizations', headers: member.auth })).organizations;
    expect(mine).toEqual([expect.objectContaining({ id: org, role: 'member' })]);
  });

  it('inviting as admin: 403 and no invitation, whoever the invitee (the key’s own maker included)', async () => {
    const outsider = `kr-outsider-${Date.now()}@example.com`;
    // The admin's own invitation, accepted when they joined, is all there is for their address.
    const makers = await invitationsTo(org, admin.email);
    expect(makers.map((i) => i.status)).toEqual(['accepted']);
    for (const key of [adminKey, ownerKey]) {
      expectRefused(await inviteWith(t, key.headers, org, outsider, 'admin'));
      expectRefused(await inviteWith(t, key.headers, org, admin.email, 'admin'));
    }
    expect(await invitationsTo(org, outsider)).toEqual([]);
    expect(await invitationsTo(org, admin.email)).toEqual(makers);
  });

  it('resending an admin invitation (made by a person): 403, the link and its time unchanged', async () => {
    const email = `kr-admin-invitee-${Date.now()}@example.com`;
    const { invitation } = await invite(t, org, owner, email, 'admin');
    const before = await invitationsTo(org, email);
    t.clock.advance(60_000);
    for (const key of [adminKey, ownerKey]) {
      expectRefused(await t.request({ method: 'POST', url: `${base(org)}/invitations/${invitation.id}/resend`, headers: key.headers }));
    }
    expect(await invitationsTo(org, email)).toEqual(before);
    // Withdrawing it lowers nobody's role: a key may.
    const revoked = await t.request({ method: 'DELETE', url: `${base(org)}/invitations/${invitation.id}`, headers: adminKey.headers });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect((await invitationsTo(org, email))[0]?.status).toBe('revoked');
  });

  it("changing or removing an admin or the owner: 403, roles unchanged, and the admin's keys live on", async () => {
    const before = await eventsOf(t, org);
    for (const key of [adminKey, ownerKey]) {
      for (const role of ['member', 'viewer', 'admin']) {
        expectRefused(await patchRole(t, key.headers, org, admin.memberId, role));
        expectRefused(await patchRole(t, key.headers, org, ownerMemberId, role));
      }
      expectRefused(await removeMember(t, key.headers, org, admin.memberId));
      expectRefused(await removeMember(t, key.headers, org, ownerMemberId));
    }
    expect(await memberRoleOf(t, admin.memberId)).toBe('admin');
    expect(await memberRoleOf(t, ownerMemberId)).toBe('owner');
    expect(await eventsOf(t, org)).toEqual(before);
    expect(await keyState(t, adminKey.id)).toEqual({ isActive: true, revokedAt: null });
    expect((await listMembers(t, adminKey, org)).statusCode).toBe(200);
  });

  it('below admin a key still works: member ↔ viewer, removing a viewer, inviting a member or a viewer', async () => {
    const target = await rawMember(org, 'member');
    const toViewer = await patchRole(t, adminKey.headers, org, target, 'viewer');
    expect(toViewer.statusCode, toViewer.body).toBe(200);
    expect(json(toViewer).role).toBe('viewer');
    const back = await patchRole(t, adminKey.headers, org, target, 'member');
    expect(back.statusCode, back.body).toBe(200);
    expect(await memberRoleOf(t, target)).toBe('member');
    const viewer = await rawMember(org, 'viewer');
    const removed = await removeMember(t, ownerKey.headers, org, viewer);
    expect(removed.statusCode, removed.body).toBe(200);
    expect(await memberRoleOf(t, viewer)).toBeUndefined();
    for (const role of ['member', 'viewer']) {
      const email = `kr-${role}-invitee-${Date.now()}@example.com`;
      const res = await inviteWith(t, adminKey.headers, org, email, role);
      expect(res.statusCode, res.body).toBe(201);
      expect(await invitationsTo(org, email)).toEqual([expect.objectContaining({ role, status: 'pending' })]);
    }
  });

  it("another organization's key, every scope: 403 on this organization's members and invitations, nothing changes", async () => {
    const other = await newOrg();
    const foreign = await createApiKey(t, other, owner, ['write:members']);
    const target = await rawMember(org, 'member');
    const email = `kr-foreign-${Date.now()}@example.com`;
    for (const res of [
      await patchRole(t, foreign.headers, org, target, 'viewer'),
      await patchRole(t, foreign.headers, org, target, 'admin'),
      await removeMember(t, foreign.headers, org, target),
      await inviteWith(t, foreign.headers, org, email, 'member'),
    ]) {
      expect(res.statusCode, res.body).toBe(403);
      expect(json(res).error.code).toBe('AUTHORIZATION_ERROR');
    }
    expect(await memberRoleOf(t, target)).toBe('member');
    expect(await invitationsTo(org, email)).toEqual([]);
  });

  it('a promotion racing a key’s role change: the key never changes the member once an admin', async () => {
    for (let i = 0; i < 6; i++) {
      const target = await rawMember(org, 'member');
      const [promoted, byKey] = await Promise.all([
        patchRole(t, owner.auth, org, target, 'admin'),
        patchRole(t, adminKey.headers, org, target, 'viewer'),
      ]);
      expect(promoted.statusCode, promoted.body).toBe(200);
      if (byKey.statusCode === 200) {
        // The key went first, on a member; the promotion then made them admin.
        expect(json(byKey).role).toBe('viewer');
        expect(await memberRoleOf(t, target)).toBe('admin');
      } else {
        expectRefused(byKey);
        expect(await memberRoleOf(t, target)).toBe('admin');
      }
      const changes = (await eventsOf(t, org)).filter((e) => e.type === 'member.updated' && e.data.memberId === target);
      // Never an admin turned into a viewer.
      expect(changes.filter((e) => e.data.previousRole === 'admin')).toEqual([]);
    }
  });
});

describe("a key dies with its creator's place in the organization", () => {
  it("removing the admin who made it: the key is revoked in the removal's transaction, and cannot re-invite its maker", async () => {
    const org = await newOrg();
    const admin = await join(org, 'admin', 'removed-admin');
    const other = await join(org, 'admin', 'staying-admin');
    const key = await createApiKey(t, org, admin, ['write:members']);
    const second = await createApiKey(t, org, admin, ['read:members'], 'second');
    const kept = await createApiKey(t, org, other, ['write:members'], 'kept');
    // Used on both instances, so each has the key cached as active.
    expect((await listMembers(t, key, org)).statusCode).toBe(200);
    expect((await listMembers(b, key, org)).statusCode).toBe(200);

    const removed = await removeMember(t, owner.auth, org, admin.memberId);
    expect(removed.statusCode, removed.body).toBe(200);

    // The attack: the removed admin's key re-invites its maker, as admin or at all.
    for (const app of [t, b]) {
      expectKeyDead(await inviteWith(app, key.headers, org, admin.email, 'admin'));
      expectKeyDead(await inviteWith(app, key.headers, org, admin.email, 'member'));
      expectKeyDead(await listMembers(app, key, org));
      expectKeyDead(await listMembers(app, second, org));
    }
    // Only the invitation they once accepted.
    expect((await invitationsTo(org, admin.email)).map((i) => i.status)).toEqual(['accepted']);
    const now = t.clock.now().toISOString();
    expect(await keyState(t, key.id)).toEqual({ isActive: false, revokedAt: now });
    expect(await keyState(t, second.id)).toEqual({ isActive: false, revokedAt: now });
    // Another admin's key is not touched.
    expect(await keyState(t, kept.id)).toEqual({ isActive: true, revokedAt: null });
    expect((await listMembers(b, kept, org)).statusCode).toBe(200);

    // The outbox: the removal, then one api_key.revoked per key, saying why.
    const events = await eventsOf(t, org);
    const tail = events.slice(events.findIndex((e) => e.type === 'member.removed'));
    expect(tail.map((e) => e.type)).toEqual(['member.removed', 'api_key.revoked', 'api_key.revoked']);
    expect(tail.slice(1).map((e) => e.data).sort((x, y) => String(x.apiKeyId).localeCompare(String(y.apiKeyId)))).toEqual(
      [key, second]
        .map((k) => ({ apiKeyId: k.id, organizationId: org, name: expect.any(String), keyPrefix: k.plain.slice(0, 17), scopes: expect.any(Array), reason: 'member_removed', createdBy: admin.userId }))
        .sort((x, y) => x.apiKeyId.localeCompare(y.apiKeyId)),
    );
    // The audit log: each revocation, as the one who removed the member, under the revocation's action.
    const audit = (await auditOf(t, org)).filter((a) => a.action === REVOKE_ACTION);
    expect(audit.map((a) => a.path).sort()).toEqual([key, second].map((k) => `${base(org)}/api-keys/${k.id}`).sort());
    for (const a of audit) expect(a).toMatchObject({ actorType: 'user', actorId: owner.userId, method: 'DELETE', statusCode: 200 });
  });

  it('an admin leaving: their keys are revoked, the event and audit entry name them', async () => {
    const org = await newOrg();
    const admin = await join(org, 'admin', 'leaving-admin');
    const key = await createApiKey(t, org, admin, ['write:members']);
    expect((await listMembers(b, key, org)).statusCode).toBe(200);
    const left = await t.request({ method: 'POST', url: `${base(org)}/leave`, headers: admin.auth });
    expect(left.statusCode, left.body).toBe(200);
    expectKeyDead(await listMembers(b, key, org));
    expectKeyDead(await inviteWith(t, key.headers, org, admin.email, 'admin'));
    expect(await keyState(t, key.id)).toMatchObject({ isActive: false });
    expect((await revokedEvents(org)).map((e) => e.data)).toEqual([expect.objectContaining({ apiKeyId: key.id, reason: 'member_left', createdBy: admin.userId })]);
    expect((await auditOf(t, org)).filter((a) => a.action === REVOKE_ACTION)).toEqual([
      expect.objectContaining({ actorType: 'user', actorId: admin.userId, path: `${base(org)}/api-keys/${key.id}` }),
    ]);
  });

  it('an admin removing themself through the member path: the same', async () => {
    const org = await newOrg();
    const admin = await join(org, 'admin', 'self-removed');
    const key = await createApiKey(t, org, admin, ['read:members']);
    const res = await removeMember(t, admin.auth, org, admin.memberId);
    expect(res.statusCode, res.body).toBe(200);
    expectKeyDead(await listMembers(t, key, org));
    expect((await revokedEvents(org)).map((e) => e.data.reason)).toEqual(['member_removed']);
  });

  it.each(['member', 'viewer'] as const)('demoting the admin who made it to %s: revoked; an admin-to-admin change keeps it', async (role) => {
    const org = await newOrg();
    const admin = await join(org, 'admin', `demoted-${role}`);
    const demoter = await join(org, 'admin', 'demoter');
    const key = await createApiKey(t, org, admin, ['write:members']);
    expect((await listMembers(b, key, org)).statusCode).toBe(200);

    // Same role: no change, no revocation.
    const same = await patchRole(t, owner.auth, org, admin.memberId, 'admin');
    expect(same.statusCode, same.body).toBe(200);
    expect((await listMembers(b, key, org)).statusCode).toBe(200);
    expect(await revokedEvents(org)).toEqual([]);

    // Another admin demotes them.
    const res = await patchRole(t, demoter.auth, org, admin.memberId, role);
    expect(res.statusCode, res.body).toBe(200);
    expect(await memberRoleOf(t, admin.memberId)).toBe(role);
    expectKeyDead(await listMembers(b, key, org));
    expectKeyDead(await patchRole(t, key.headers, org, admin.memberId, 'member'));
    expect(await keyState(t, key.id)).toMatchObject({ isActive: false });
    expect((await revokedEvents(org)).map((e) => e.data)).toEqual([expect.objectContaining({ apiKeyId: key.id, reason: 'member_demoted', createdBy: admin.userId })]);
    expect((await auditOf(t, org)).filter((a) => a.action === REVOKE_ACTION)).toEqual([expect.objectContaining({ actorType: 'user', actorId: demoter.userId })]);
    // The demoted member cannot make a new one.
    const again = await t.request({ method: 'POST', url: `${base(org)}/api-keys`, headers: admin.auth, payload: { name: 'again' } });
    expect(again.statusCode, again.body).toBe(403);
  });

  it("a refused removal or demotion revokes nothing", async () => {
    const org = await newOrg();
    const admin = await join(org, 'admin', 'kept-admin');
    const viewer = await join(org, 'viewer', 'refused-viewer');
    const key = await createApiKey(t, org, admin, ['write:members']);
    // A viewer may not remove or demote the admin (403), nor may the admin's own key.
    expect((await removeMember(t, viewer.auth, org, admin.memberId)).statusCode).toBe(403);
    expect((await patchRole(t, viewer.auth, org, admin.memberId, 'viewer')).statusCode).toBe(403);
    expectRefused(await removeMember(t, key.headers, org, admin.memberId));
    expectRefused(await patchRole(t, key.headers, org, admin.memberId, 'viewer'));
    expect(await keyState(t, key.id)).toEqual({ isActive: true, revokedAt: null });
    expect(await revokedEvents(org)).toEqual([]);
    expect((await listMembers(t, key, org)).statusCode).toBe(200);
  });

  it("a transfer keeps the old owner's keys (an admin manages keys); demoting the old owner later revokes them", async () => {
    const org = await newOrg();
    const heir = await join(org, 'admin', 'heir');
    const ownersKey = await createApiKey(t, org, owner, ['read:members']);
    const members = json(await listMembers(t, ownersKey, org)).members as Array<{ id: string; role: string }>;
    const ownerMemberId = members.find((m) => m.role === 'owner')!.id;

    const res = await t.request({ method: 'POST', url: `${base(org)}/transfer-ownership`, headers: owner.auth, payload: { memberId: heir.memberId } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await memberRoleOf(t, ownerMemberId)).toBe('admin');
    expect((await listMembers(b, ownersKey, org)).statusCode).toBe(200);
    expect(await keyState(t, ownersKey.id)).toEqual({ isActive: true, revokedAt: null });
    expect(await revokedEvents(org)).toEqual([]);

    const demoted = await patchRole(t, heir.auth, org, ownerMemberId, 'member');
    expect(demoted.statusCode, demoted.body).toBe(200);
    expectKeyDead(await listMembers(b, ownersKey, org));
    expect((await revokedEvents(org)).map((e) => e.data)).toEqual([expect.objectContaining({ apiKeyId: ownersKey.id, createdBy: owner.userId, reason: 'member_demoted' })]);
  });

  it('deleting the organization: its keys answer 401 at once, on every instance', async () => {
    const org = await newOrg();
    const key = await createApiKey(t, org, owner, ['read:members']);
    expect((await listMembers(b, key, org)).statusCode).toBe(200);
    const res = await t.request({ method: 'DELETE', url: base(org), headers: owner.auth });
    expect(res.statusCode, res.body).toBe(200);
    // Refused everywhere, as a key never issued: an instance that had it cached finds its row gone.
    for (const app of [t, b]) {
      const res = await listMembers(app, key, org);
      expect(res.statusCode, res.body).toBe(401);
      expect(json(res).success).toBe(false);
    }
    expectKeyDead(await listMembers(t, key, org));
    expect(await keyState(t, key.id)).toBeUndefined();
  });

  it('a key created while its maker is being demoted or removed never outlives the change', async () => {
    const org = await newOrg();
    for (let i = 0; i < 6; i++) {
      const admin = await join(org, 'admin', `racing-${i}`);
      const change = () => (i % 2 === 0 ? patchRole(t, owner.auth, org, admin.memberId, 'member') : removeMember(t, owner.auth, org, admin.memberId));
      const create = () => t.request({ method: 'POST', url: `${base(org)}/api-keys`, headers: admin.auth, payload: { name: `racing-${i}`, scopes: ['read:members'] } });
      // Either one sent first.
      const made = i % 4 < 2 ? (await Promise.all([create(), change()]))[0] : (await Promise.all([change(), create()]))[1];
      expect([201, 403], made.body).toContain(made.statusCode);
      if (made.statusCode === 201) {
        const plain = json(made).plainKey as string;
        expectKeyDead(await listMembers(t, { id: json(made).apiKey.id, plain, headers: { 'x-api-key': plain } }, org));
      }
      // Whatever the order: no live key of someone who is no longer an admin here.
      const live = await queryRows<{ id: string }>(
        t,
        sql`select k.id from api_keys k where k.organization_id = ${org} and k.is_active and not exists (
          select 1 from memberships m where m.organization_id = k.organization_id and m.user_id = k.created_by and m.role in ('owner', 'admin'))`,
      );
      expect(live).toEqual([]);
    }
  });
});
