// Invitations over HTTP (docs/decisions.md, organizations): create, list, the stored hash, and the
// Free plan's member limit.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  addMember,
  auditOf,
  createOrg,
  invite,
  rowsOf,
  setPlan,
  signedInUser,
  uniqueEmail,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
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
  viewer,
} from '../../../test/fixtures/invitations.js';
import { expectError } from '../../../test/expect.js';

useInvitationsApp();

describe('POST /organizations/:orgId/invitations', () => {
  it('answers 201 {invitation, inviteUrl}, expiring 7 days after creation, and mails the link after commit', async () => {
    const org = await createOrg(t, owner, { name: 'Mailers' });
    const email = uniqueEmail('invitee');
    const res = await api('POST', `/organizations/${org.id}/invitations`, owner, { email, role: 'admin' });
    expect(res.statusCode, res.body).toBe(201);
    const body = json(res);
    const now = t.clock.now();
    expect(body).toEqual({
      invitation: {
        id: expect.stringMatching(/^inv_[0-9a-z]{26}$/),
        organizationId: org.id,
        email,
        role: 'admin',
        invitedBy: { id: owner.userId, email: owner.email, fullName: 'Test User' },
        expiresAt: new Date(now.getTime() + 7 * DAY).toISOString(),
        createdAt: now.toISOString(),
        status: 'pending',
      },
      inviteUrl: expect.stringMatching(/^http:\/\/app\.test\/invitations\/accept\?token=[A-Za-z0-9_%-]{20,}$/),
    });
    expect(Date.parse(body.invitation.expiresAt) - Date.parse(body.invitation.createdAt)).toBe(7 * DAY);

    const token = await t.mail.tokenFrom(email, /invited to join Mailers/, '/invitations/accept');
    expect(body.inviteUrl).toBe(`http://app.test/invitations/accept?token=${encodeURIComponent(token)}`);
    expect(await auditOf(t, org.id)).toContainEqual(
      expect.objectContaining({
        actorId: owner.userId,
        action: 'POST /api/v1/organizations/:orgId/invitations',
        statusCode: 201,
      }),
    );
  });

  it('stores only a hash of the token', async () => {
    const org = await createOrg(t, owner);
    const { token, invitation } = await invite(t, org.id, owner, uniqueEmail('hashed'), 'member');
    const [row] = rowsOf(
      await t.deps.db.execute(sql`select row_to_json(i)::text as json from invitations i where id = ${invitation.id}`),
    );
    expect(row!.json).not.toContain(token);
    expect(row!.json).not.toContain(encodeURIComponent(token));
    const all = rowsOf(await t.deps.db.execute(sql`select row_to_json(i)::text as json from invitations i`));
    for (const r of all) expect(r.json).not.toContain(token);
  });

  it('refuses the role owner, a bad email and unknown fields with 400', async () => {
    const org = await createOrg(t, owner);
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail(), role: 'owner' }),
      400,
      'VALIDATION_ERROR',
      /role/,
    );
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: 'not-an-email', role: 'member' }),
      400,
      'VALIDATION_ERROR',
      /email/,
    );
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail() }),
      400,
      'VALIDATION_ERROR',
      /role/,
    );
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, {
        email: uniqueEmail(),
        role: 'member',
        organizationId: 'x',
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect((await listStatus(org.id)).total).toBe(0);
  });

  it('answers 409 for an existing member and for a pending invitation to the same email, in any case', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, member, 'member');
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: member.email, role: 'viewer' }),
      409,
      'CONFLICT',
      /member/,
    );
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, {
        email: member.email.toUpperCase(),
        role: 'viewer',
      }),
      409,
      'CONFLICT',
    );
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: owner.email, role: 'admin' }),
      409,
      'CONFLICT',
    );

    const email = uniqueEmail('twice');
    await invite(t, org.id, owner, email, 'member');
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: email.toUpperCase(), role: 'admin' }),
      409,
      'CONFLICT',
      /pending/,
    );
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: `  ${email}  `, role: 'admin' }),
      409,
      'CONFLICT',
    );
    expect((await listStatus(org.id)).total).toBe(2);
    // Another organization may invite the same person.
    const other = await createOrg(t, admin);
    expect(
      (await api('POST', `/organizations/${other.id}/invitations`, admin, { email, role: 'member' })).statusCode,
    ).toBe(201);
  });

  it('stores the email trimmed and lower-cased', async () => {
    const org = await createOrg(t, owner);
    const email = uniqueEmail('mixed');
    const res = await api('POST', `/organizations/${org.id}/invitations`, owner, {
      email: ` ${email.toUpperCase()} `,
      role: 'viewer',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(json(res).invitation.email).toBe(email);
  });

  it('needs invitations:create: member and viewer get 403', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    await addMember(t, org.id, owner, member, 'member');
    await addMember(t, org.id, owner, viewer, 'viewer');
    await addMember(t, org.id, owner, admin, 'admin');
    for (const u of [member, viewer]) {
      expectError(
        await api('POST', `/organizations/${org.id}/invitations`, u, { email: uniqueEmail(), role: 'viewer' }),
        403,
        'AUTHORIZATION_ERROR',
      );
      // Reading the list needs members:read only.
      expect((await api('GET', `/organizations/${org.id}/invitations`, u)).statusCode).toBe(200);
    }
    const byAdmin = await api('POST', `/organizations/${org.id}/invitations`, admin, {
      email: uniqueEmail(),
      role: 'admin',
    });
    expect(byAdmin.statusCode, byAdmin.body).toBe(201);
    expect(json(byAdmin).invitation.invitedBy.id).toBe(admin.userId);
  });
});

describe('GET /organizations/:orgId/invitations', () => {
  it('filters by status and pages with the envelope {data, total, page, pageSize, hasMore}', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    const acceptedBy = await signedInUser(t, 'acceptor');
    const accepted = await invite(t, org.id, owner, acceptedBy.email, 'member');
    expect((await accept(acceptedBy, accepted.token)).statusCode).toBe(200);
    t.clock.advance(1000);
    const revoked = await invite(t, org.id, owner, uniqueEmail('revoked'), 'member');
    expect(
      (await api('DELETE', `/organizations/${org.id}/invitations/${revoked.invitation.id}`, owner)).statusCode,
    ).toBe(200);
    t.clock.advance(1000);
    const declined = await invite(t, org.id, owner, uniqueEmail('declined'), 'member');
    expect((await api('POST', '/invitations/decline', null, { token: declined.token })).statusCode).toBe(200);
    t.clock.advance(1000);
    const expired = await invite(t, org.id, owner, uniqueEmail('expired'), 'viewer');
    await travel(7 * DAY + 1000);
    const pending1 = await invite(t, org.id, owner, uniqueEmail('pending1'), 'viewer');
    t.clock.advance(1000);
    const pending2 = await invite(t, org.id, owner, uniqueEmail('pending2'), 'admin');

    const ids = (body: ReturnType<typeof json>) => body.data.map((i: { id: string }) => i.id);
    const all = await listStatus(org.id);
    expect(all).toMatchObject({ total: 6, page: 1, pageSize: 20, hasMore: false });
    // Newest first.
    expect(ids(all)).toEqual([pending2, pending1, expired, declined, revoked, accepted].map((x) => x.invitation.id));
    expect(all.data.map((i: { status: string }) => i.status)).toEqual([
      'pending',
      'pending',
      'expired',
      'declined',
      'revoked',
      'accepted',
    ]);

    expect(ids(await listStatus(org.id, 'pending'))).toEqual([pending2.invitation.id, pending1.invitation.id]);
    expect(ids(await listStatus(org.id, 'expired'))).toEqual([expired.invitation.id]);
    expect(ids(await listStatus(org.id, 'accepted'))).toEqual([accepted.invitation.id]);
    expect(ids(await listStatus(org.id, 'revoked'))).toEqual([revoked.invitation.id]);
    expect(ids(await listStatus(org.id, 'declined'))).toEqual([declined.invitation.id]);
    expect((await listStatus(org.id, 'expired')).data[0].status).toBe('expired');

    const page = json(await api('GET', `/organizations/${org.id}/invitations?page=2&pageSize=4`, owner));
    expect(page).toMatchObject({ total: 6, page: 2, pageSize: 4, hasMore: false });
    expect(ids(page)).toEqual([revoked.invitation.id, accepted.invitation.id]);
    const first = json(await api('GET', `/organizations/${org.id}/invitations?pageSize=4`, owner));
    expect(first).toMatchObject({ total: 6, page: 1, pageSize: 4, hasMore: true });

    expectError(
      await api('GET', `/organizations/${org.id}/invitations?status=bogus`, owner),
      400,
      'VALIDATION_ERROR',
      /status/,
    );
    expectError(await api('GET', `/organizations/${org.id}/invitations?pageSize=0`, owner), 400, 'VALIDATION_ERROR');
  });
});

describe('plan limit (Free: 3 members, counting pending invitations)', () => {
  it('owner + 2 invitations fill the plan; the 3rd is 402; revoking one frees a seat', async () => {
    const org = await createOrg(t, owner);
    const a = await invite(t, org.id, owner, uniqueEmail('seat1'), 'member');
    await invite(t, org.id, owner, uniqueEmail('seat2'), 'member');
    const third = uniqueEmail('seat3');
    const refused = await api('POST', `/organizations/${org.id}/invitations`, owner, { email: third, role: 'member' });
    expectError(refused, 402, 'PLAN_LIMIT_EXCEEDED');
    expect((await listStatus(org.id)).total).toBe(2);
    expect((await auditOf(t, org.id)).filter((e) => e.statusCode === 402)).toEqual([]);

    expect((await api('DELETE', `/organizations/${org.id}/invitations/${a.invitation.id}`, owner)).statusCode).toBe(
      200,
    );
    expect(
      (await api('POST', `/organizations/${org.id}/invitations`, owner, { email: third, role: 'member' })).statusCode,
    ).toBe(201);
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail('seat4'), role: 'member' }),
      402,
      'PLAN_LIMIT_EXCEEDED',
    );
  });

  it('an expired invitation frees its seat, and renewing it needs a seat again', async () => {
    const org = await createOrg(t, owner);
    const old = await invite(t, org.id, owner, uniqueEmail('old1'), 'member');
    await invite(t, org.id, owner, uniqueEmail('old2'), 'member');
    await travel(7 * DAY + 1000);
    await invite(t, org.id, owner, uniqueEmail('new1'), 'member');
    await invite(t, org.id, owner, uniqueEmail('new2'), 'member');
    expectError(
      await api('POST', `/organizations/${org.id}/invitations/${old.invitation.id}/resend`, owner),
      402,
      'PLAN_LIMIT_EXCEEDED',
    );
  });

  it('members count too: with owner + 2 members, an invitation is 402', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, member, 'member');
    await addMember(t, org.id, owner, viewer, 'viewer');
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail(), role: 'viewer' }),
      402,
      'PLAN_LIMIT_EXCEEDED',
    );
    // An existing member is still a conflict, not a plan matter.
    expectError(
      await api('POST', `/organizations/${org.id}/invitations`, owner, { email: member.email, role: 'viewer' }),
      409,
      'CONFLICT',
    );
  });
});
