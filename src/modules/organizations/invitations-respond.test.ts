// Invitations over HTTP (docs/decisions.md, organizations): revoke, resend, accept, decline and
// expiry.
import { describe, expect, it } from 'vitest';
import {
  auditOf,
  createOrg,
  eventsOf,
  invite,
  login,
  registerUser,
  signedInUser,
  uniqueEmail,
} from '../../../test/factories.js';
import { createTestApp, json } from '../../../test/harness.js';
import {
  accept,
  admin,
  api,
  DAY,
  listStatus,
  member,
  owner,
  t,
  travel,
  useInvitationsApp,
} from '../../../test/fixtures/invitations.js';
import { expectError } from '../../../test/expect.js';

useInvitationsApp();

describe('revoke and resend', () => {
  it('revoke: status revoked, the link no longer accepts, a second revoke is refused', async () => {
    const org = await createOrg(t, owner);
    const invitee = await signedInUser(t, 'revokee');
    const { invitation, token } = await invite(t, org.id, owner, invitee.email, 'member');
    expectError(
      await api('DELETE', `/organizations/${org.id}/invitations/${invitation.id}`, invitee),
      403,
      'AUTHORIZATION_ERROR',
    );
    const res = await api('DELETE', `/organizations/${org.id}/invitations/${invitation.id}`, owner);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ ...invitation, status: 'revoked' });
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({
      actorId: owner.userId,
      action: 'DELETE /api/v1/organizations/:orgId/invitations/:invitationId',
      path: `/api/v1/organizations/${org.id}/invitations/${invitation.id}`,
      statusCode: 200,
    });
    const auditCount = (await auditOf(t, org.id)).length;
    expectError(await accept(invitee, token), 400, 'VALIDATION_ERROR');
    expectError(await api('POST', '/invitations/decline', null, { token }), 400, 'VALIDATION_ERROR');
    expect(json(await api('GET', `/organizations/${org.id}/members`, owner)).total).toBe(1);
    expectError(await api('DELETE', `/organizations/${org.id}/invitations/${invitation.id}`, owner), 409, 'CONFLICT');
    expectError(
      await api('POST', `/organizations/${org.id}/invitations/${invitation.id}/resend`, owner),
      409,
      'CONFLICT',
    );
    expectError(
      await api('DELETE', `/organizations/${org.id}/invitations/inv_00000000000000000000000000`, owner),
      404,
      'NOT_FOUND',
    );
    // The refusals left no audit entry.
    expect(await auditOf(t, org.id)).toHaveLength(auditCount);
    // The email may be invited again.
    expect(
      (await api('POST', `/organizations/${org.id}/invitations`, owner, { email: invitee.email, role: 'viewer' }))
        .statusCode,
    ).toBe(201);
  });

  it('resend: a new token and a new 7 days; the old link stops working, the new one works', async () => {
    const org = await createOrg(t, owner, { name: 'Resenders' });
    const invitee = await signedInUser(t, 'resendee');
    const first = await invite(t, org.id, owner, invitee.email, 'viewer');
    await travel(3 * DAY, invitee);
    const res = await api('POST', `/organizations/${org.id}/invitations/${first.invitation.id}/resend`, admin);
    expectError(res, 403, 'AUTHORIZATION_ERROR');
    const again = await api('POST', `/organizations/${org.id}/invitations/${first.invitation.id}/resend`, owner);
    expect(again.statusCode, again.body).toBe(200);
    const body = json(again);
    const newToken = new URL(body.inviteUrl).searchParams.get('token')!;
    expect(newToken).not.toBe(first.token);
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({
      actorId: owner.userId,
      action: 'POST /api/v1/organizations/:orgId/invitations/:invitationId/resend',
      statusCode: 200,
    });
    expect(body.invitation).toMatchObject({
      id: first.invitation.id,
      status: 'pending',
      expiresAt: new Date(t.clock.now().getTime() + 7 * DAY).toISOString(),
    });
    // A second mail carries the new link.
    await expect
      .poll(() => t.mail.mails.filter((m) => m.to.includes(invitee.email) && /Resenders/.test(m.subject)).length)
      .toBe(2);
    expect(await t.mail.tokenFrom(invitee.email, /invited to join Resenders/, '/invitations/accept')).toBe(newToken);

    expectError(await accept(invitee, first.token), 400, 'VALIDATION_ERROR');
    // Still valid 6 days later: the 7 days started again at the resend.
    await travel(6 * DAY, invitee);
    const ok = await accept(invitee, newToken);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(json(ok)).toMatchObject({ userId: invitee.userId, role: 'viewer' });
  });

  it('resend renews an expired invitation', async () => {
    const org = await createOrg(t, owner);
    const invitee = await signedInUser(t, 'late');
    const { invitation, token } = await invite(t, org.id, owner, invitee.email, 'member');
    await travel(8 * DAY, invitee);
    expectError(await accept(invitee, token), 400, 'VALIDATION_ERROR');
    const res = await api('POST', `/organizations/${org.id}/invitations/${invitation.id}/resend`, owner);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).invitation.status).toBe('pending');
    expect((await accept(invitee, new URL(json(res).inviteUrl).searchParams.get('token')!)).statusCode).toBe(200);
  });
  it('resending an expired invitation whose email was invited again since is a conflict', async () => {
    const org = await createOrg(t, owner);
    const email = uniqueEmail('reinvited');
    const old = await invite(t, org.id, owner, email, 'member');
    await travel(7 * DAY + 1000);
    await invite(t, org.id, owner, email, 'viewer');
    expectError(
      await api('POST', `/organizations/${org.id}/invitations/${old.invitation.id}/resend`, owner),
      409,
      'CONFLICT',
    );
    expect((await listStatus(org.id, 'pending')).total).toBe(1);
  });
});

describe('POST /invitations/accept', () => {
  it('creates the membership with the invited role and records member.added and an audit entry', async () => {
    const org = await createOrg(t, owner);
    const invitee = await signedInUser(t, 'joiner');
    const { token } = await invite(t, org.id, owner, invitee.email, 'admin');
    t.clock.advance(60_000);
    const res = await accept(invitee, token);
    expect(res.statusCode, res.body).toBe(200);
    const m = json(res);
    expect(m).toEqual({
      id: expect.stringMatching(/^mbr_[0-9a-z]{26}$/),
      userId: invitee.userId,
      organizationId: org.id,
      role: 'admin',
      user: { id: invitee.userId, email: invitee.email, fullName: 'Test User', avatarUrl: null },
      joinedAt: t.clock.now().toISOString(),
    });
    const events = await eventsOf(t, org.id);
    expect(events.map((e) => e.type)).toEqual(['member.added']);
    expect(events[0]!.data).toEqual({
      memberId: m.id,
      organizationId: org.id,
      userId: invitee.userId,
      email: invitee.email,
      role: 'admin',
    });
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({
      actorType: 'user',
      actorId: invitee.userId,
      action: 'POST /api/v1/invitations/accept',
      path: '/api/v1/invitations/accept',
      statusCode: 200,
    });
    expect((await listStatus(org.id, 'accepted')).total).toBe(1);
    // The new member holds the role's powers.
    expect(
      (await api('PATCH', `/organizations/${org.id}`, invitee, { description: 'Admin was here' })).statusCode,
    ).toBe(200);
    // A used token does not work again, for anyone.
    expectError(await accept(invitee, token), 400, 'VALIDATION_ERROR');
    expectError(await api('POST', '/invitations/decline', null, { token }), 400, 'VALIDATION_ERROR');
  });

  it('answers 403 AUTHORIZATION_ERROR to an account with another email, leaving the invitation usable', async () => {
    const org = await createOrg(t, owner);
    const invitee = await signedInUser(t, 'rightful');
    const { token } = await invite(t, org.id, owner, invitee.email, 'member');
    const eventsBefore = await eventsOf(t, org.id);
    const auditBefore = await auditOf(t, org.id);
    expectError(await accept(member, token), 403, 'AUTHORIZATION_ERROR');
    expect(await eventsOf(t, org.id)).toEqual(eventsBefore);
    expect(await auditOf(t, org.id)).toEqual(auditBefore);
    expect((await listStatus(org.id, 'pending')).total).toBe(1);
    expect((await accept(invitee, token)).statusCode).toBe(200);
  });

  it('answers 403 EMAIL_NOT_VERIFIED to the right email on an unverified account', async () => {
    // A second instance on the same database lets unverified accounts sign in.
    const lax = await createTestApp({
      database: t.database,
      clock: t.clock,
      env: { AUTH_REQUIRE_EMAIL_VERIFICATION: 'false' },
    });
    try {
      const { email } = await registerUser(lax, uniqueEmail('unverified'));
      const session = await login(lax, email);
      const auth = { auth: { authorization: `Bearer ${session.accessToken}` } };
      const org = await createOrg(t, owner);
      const { token } = await invite(t, org.id, owner, email, 'member');
      expectError(await accept(auth, token), 403, 'EMAIL_NOT_VERIFIED');
      expect(json(await api('GET', `/organizations/${org.id}/members`, owner)).total).toBe(1);
      expect(await eventsOf(t, org.id)).toEqual([]);
      expect((await listStatus(org.id, 'pending')).total).toBe(1);
    } finally {
      await lax.close();
    }
  });

  it('answers 400 for an expired invitation, which is then listed as expired', async () => {
    const org = await createOrg(t, owner);
    const invitee = await signedInUser(t, 'tardy');
    const { invitation, token } = await invite(t, org.id, owner, invitee.email, 'member');
    await travel(7 * DAY - 1000, invitee);
    expect(json(await api('GET', `/organizations/${org.id}/invitations?status=pending`, owner)).total).toBe(1);
    t.clock.advance(2000); // 7 days + 1 s
    expectError(await accept(invitee, token), 400, 'VALIDATION_ERROR');
    expectError(await api('POST', '/invitations/decline', null, { token }), 400, 'VALIDATION_ERROR');
    const expired = await listStatus(org.id, 'expired');
    expect(expired.data.map((i: { id: string; status: string }) => [i.id, i.status])).toEqual([
      [invitation.id, 'expired'],
    ]);
    expect((await listStatus(org.id, 'pending')).total).toBe(0);
    expect(json(await api('GET', `/organizations/${org.id}/members`, owner)).total).toBe(1);
  });

  it('answers 400 for an unknown token and 401 without a session', async () => {
    expectError(await accept(member, 'x'.repeat(43)), 400, 'VALIDATION_ERROR');
    expect((await accept(null, 'x'.repeat(43))).statusCode).toBe(401);
  });

  it('decline: status declined, the token then neither accepts nor declines', async () => {
    const org = await createOrg(t, owner);
    const invitee = await signedInUser(t, 'decliner');
    const { invitation, token } = await invite(t, org.id, owner, invitee.email, 'member');
    const res = await api('POST', '/invitations/decline', null, { token });
    expect(res.statusCode, res.body).toBe(200);
    expect((await listStatus(org.id, 'declined')).data.map((i: { id: string }) => i.id)).toEqual([invitation.id]);
    expectError(await accept(invitee, token), 400, 'VALIDATION_ERROR');
    expectError(await api('POST', '/invitations/decline', null, { token }), 400, 'VALIDATION_ERROR');
    expect(await eventsOf(t, org.id)).toEqual([]);
  });
});
