// API keys and roles, through HTTP. A key dies with its creator's place in the organization: removing
// the creator, the creator leaving, or a demotion below admin revokes every key they made there, in
// the same transaction (api_key.revoked in the outbox, an audit entry), and the key answers 401 at
// once, on every instance. A transfer keeps the old owner's keys (an admin still manages keys);
// deleting the organization takes its keys with it.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditOf, createApiKey, eventsOf, keyState, memberRoleOf } from '../../../test/factories.js';
import { json, queryRows } from '../../../test/harness.js';
import {
  b,
  base,
  expectKeyDead,
  expectRefused,
  invitationsTo,
  inviteWith,
  join,
  listMembers,
  newOrg,
  owner,
  patchRole,
  removeMember,
  REVOKE_ACTION,
  revokedEvents,
  t,
  useKeyRolesApp,
} from '../../../test/fixtures/key-roles.js';

useKeyRolesApp();

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
    expect(
      tail
        .slice(1)
        .map((e) => e.data)
        .sort((x, y) => String(x.apiKeyId).localeCompare(String(y.apiKeyId))),
    ).toEqual(
      [key, second]
        .map((k) => ({
          apiKeyId: k.id,
          organizationId: org,
          name: expect.any(String),
          keyPrefix: k.plain.slice(0, 17),
          scopes: expect.any(Array),
          reason: 'member_removed',
          createdBy: admin.userId,
        }))
        .sort((x, y) => x.apiKeyId.localeCompare(y.apiKeyId)),
    );
    // The audit log: each revocation, as the one who removed the member, under the revocation's action.
    const audit = (await auditOf(t, org)).filter((a) => a.action === REVOKE_ACTION);
    expect(audit.map((a) => a.path).sort()).toEqual([key, second].map((k) => `${base(org)}/api-keys/${k.id}`).sort());
    for (const a of audit)
      expect(a).toMatchObject({ actorType: 'user', actorId: owner.userId, method: 'DELETE', statusCode: 200 });
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
    expect((await revokedEvents(org)).map((e) => e.data)).toEqual([
      expect.objectContaining({ apiKeyId: key.id, reason: 'member_left', createdBy: admin.userId }),
    ]);
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

  it.each(['member', 'viewer'] as const)(
    'demoting the admin who made it to %s: revoked; an admin-to-admin change keeps it',
    async (role) => {
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
      expect((await revokedEvents(org)).map((e) => e.data)).toEqual([
        expect.objectContaining({ apiKeyId: key.id, reason: 'member_demoted', createdBy: admin.userId }),
      ]);
      expect((await auditOf(t, org)).filter((a) => a.action === REVOKE_ACTION)).toEqual([
        expect.objectContaining({ actorType: 'user', actorId: demoter.userId }),
      ]);
      // The demoted member cannot make a new one.
      const again = await t.request({
        method: 'POST',
        url: `${base(org)}/api-keys`,
        headers: admin.auth,
        payload: { name: 'again' },
      });
      expect(again.statusCode, again.body).toBe(403);
    },
  );

  it('a refused removal or demotion revokes nothing', async () => {
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

    const res = await t.request({
      method: 'POST',
      url: `${base(org)}/transfer-ownership`,
      headers: owner.auth,
      payload: { memberId: heir.memberId },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await memberRoleOf(t, ownerMemberId)).toBe('admin');
    expect((await listMembers(b, ownersKey, org)).statusCode).toBe(200);
    expect(await keyState(t, ownersKey.id)).toEqual({ isActive: true, revokedAt: null });
    expect(await revokedEvents(org)).toEqual([]);

    const demoted = await patchRole(t, heir.auth, org, ownerMemberId, 'member');
    expect(demoted.statusCode, demoted.body).toBe(200);
    expectKeyDead(await listMembers(b, ownersKey, org));
    expect((await revokedEvents(org)).map((e) => e.data)).toEqual([
      expect.objectContaining({ apiKeyId: ownersKey.id, createdBy: owner.userId, reason: 'member_demoted' }),
    ]);
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
      const change = () =>
        i % 2 === 0
          ? patchRole(t, owner.auth, org, admin.memberId, 'member')
          : removeMember(t, owner.auth, org, admin.memberId);
      const create = () =>
        t.request({
          method: 'POST',
          url: `${base(org)}/api-keys`,
          headers: admin.auth,
          payload: { name: `racing-${i}`, scopes: ['read:members'] },
        });
      // Either one sent first.
      const made =
        i % 4 < 2 ? (await Promise.all([create(), change()]))[0] : (await Promise.all([change(), create()]))[1];
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
