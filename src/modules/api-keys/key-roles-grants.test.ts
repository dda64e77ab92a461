// API keys and roles, through HTTP. A key never assigns or invites a role above member and never
// changes or removes an admin or the owner, whatever its scopes and whoever made it (403, nothing
// changes).
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, eventsOf, invite, keyState, memberRoleOf, type MadeKey } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import {
  base,
  expectRefused,
  invitationsTo,
  inviteWith,
  join,
  listMembers,
  newOrg,
  owner,
  patchRole,
  type Person,
  rawMember,
  removeMember,
  t,
  useKeyRolesApp,
} from '../../../test/fixtures/key-roles.js';

useKeyRolesApp();

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
    ownerKey = await createApiKey(t, org, owner, [
      'read:projects',
      'write:projects',
      'read:members',
      'write:members',
      'read:webhooks',
      'write:webhooks',
      'read:billing',
      'read:audit-logs',
    ]);
    const members = json(await listMembers(t, ownerKey, org)).members as Array<{ id: string; role: string }>;
    ownerMemberId = members.find((m) => m.role === 'owner')!.id;
  }, 120_000);

  it('promoting a member to admin: 403, the role and the events unchanged', async () => {
    const before = await eventsOf(t, org);
    for (const key of [adminKey, ownerKey])
      expectRefused(await patchRole(t, key.headers, org, member.memberId, 'admin'));
    expect(await memberRoleOf(t, member.memberId)).toBe('member');
    expect(await eventsOf(t, org)).toEqual(before);
    // The member's own view agrees.
    const mine = json(
      await t.request({ method: 'GET', url: '/api/v1/users/me/organizations', headers: member.auth }),
    ).organizations;
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
      expectRefused(
        await t.request({
          method: 'POST',
          url: `${base(org)}/invitations/${invitation.id}/resend`,
          headers: key.headers,
        }),
      );
    }
    expect(await invitationsTo(org, email)).toEqual(before);
    // Withdrawing it lowers nobody's role: a key may.
    const revoked = await t.request({
      method: 'DELETE',
      url: `${base(org)}/invitations/${invitation.id}`,
      headers: adminKey.headers,
    });
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
