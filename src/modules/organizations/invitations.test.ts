// Invitations over HTTP (spec §2.5, §4.4; DECISIONS §2-3): create, list, revoke, resend, accept,
// decline, expiry, the stored hash, and the Free plan's member limit.
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, auditOf, createOrg, eventsOf, invite, login, registerUser, rowsOf, setPlan, signedInUser, uniqueEmail, type SignedInUser } from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let owner: SignedInUser;
let admin: SignedInUser;
let member: SignedInUser;
let viewer: SignedInUser;

beforeAll(async () => {
  t = await createTestApp();
  [owner, admin, member, viewer] = [await signedInUser(t, 'owner'), await signedInUser(t, 'admin'), await signedInUser(t, 'member'), await signedInUser(t, 'viewer')];
});
afterAll(async () => {
  await t?.close();
});

type Caller = { auth: Record<string, string> } | null;
function api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, caller: Caller, payload?: unknown) {
  return t.request({ method, url: `/api/v1${url}`, headers: caller?.auth ?? {}, ...(payload !== undefined ? { payload: payload as object } : {}) });
}

function expectError(res: LightMyRequestResponse, status: number, code: string, details?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  expect(json(res)).toMatchObject({ success: false, error: { code } });
  if (details) expect(json(res).error.details).toMatch(details);
}

/**
 * Moves the clock. Access tokens live 15 minutes and sessions 7 days, so the file's users and
 * `others` sign in again afterwards.
 */
async function travel(ms: number, ...others: SignedInUser[]) {
  t.clock.advance(ms);
  if (ms < 10 * 60 * 1000) return;
  for (const u of [owner, admin, member, viewer, ...others]) {
    const s = await login(t, u.email);
    u.accessToken = s.accessToken;
    u.refreshToken = s.refreshToken;
    u.auth = { authorization: `Bearer ${s.accessToken}` };
  }
}

const accept = (caller: Caller, token: string) => api('POST', '/invitations/accept', caller, { token });
const DAY = 24 * 60 * 60 * 1000;

async function listStatus(orgId: string, status?: string) {
  const res = await api('GET', `/organizations/${orgId}/invitations${status ? `?status=${status}` : ''}`, owner);
  expect(res.statusCode, res.body).toBe(200);
  return json(res);
}

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
      expect.objectContaining({ actorId: owner.userId, action: 'POST /api/v1/organizations/:orgId/invitations', statusCode: 201 }),
    );
  });

  it('stores only a hash of the token', async () => {
    const org = await createOrg(t, owner);
    const { token, invitation } = await invite(t, org.id, owner, uniqueEmail('hashed'), 'member');
    const [row] = rowsOf(await t.deps.db.execute(sql`select row_to_json(i)::text as json from invitations i where id = ${invitation.id}`));
    expect(row!.json).not.toContain(token);
    expect(row!.json).not.toContain(encodeURIComponent(token));
    const all = rowsOf(await t.deps.db.execute(sql`select row_to_json(i)::text as json from invitations i`));
    for (const r of all) expect(r.json).not.toContain(token);
  });

  it('refuses the role owner, a bad email and unknown fields with 400', async () => {
    const org = await createOrg(t, owner);
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail(), role: 'owner' }), 400, 'VALIDATION_ERROR', /role/);
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: 'not-an-email', role: 'member' }), 400, 'VALIDATION_ERROR', /email/);
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail() }), 400, 'VALIDATION_ERROR', /role/);
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail(), role: 'member', organizationId: 'x' }), 400, 'VALIDATION_ERROR');
    expect((await listStatus(org.id)).total).toBe(0);
  });

  it('answers 409 for an existing member and for a pending invitation to the same email, in any case', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, member, 'member');
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: member.email, role: 'viewer' }), 409, 'CONFLICT', /member/);
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: member.email.toUpperCase(), role: 'viewer' }), 409, 'CONFLICT');
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: owner.email, role: 'admin' }), 409, 'CONFLICT');

    const email = uniqueEmail('twice');
    await invite(t, org.id, owner, email, 'member');
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: email.toUpperCase(), role: 'admin' }), 409, 'CONFLICT', /pending/);
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: `  ${email}  `, role: 'admin' }), 409, 'CONFLICT');
    expect((await listStatus(org.id)).total).toBe(2);
    // Another organization may invite the same person.
    const other = await createOrg(t, admin);
    expect((await api('POST', `/organizations/${other.id}/invitations`, admin, { email, role: 'member' })).statusCode).toBe(201);
  });

  it('stores the email trimmed and lower-cased', async () => {
    const org = await createOrg(t, owner);
    const email = uniqueEmail('mixed');
    const res = await api('POST', `/organizations/${org.id}/invitations`, owner, { email: ` ${email.toUpperCase()} `, role: 'viewer' });
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
      expectError(await api('POST', `/organizations/${org.id}/invitations`, u, { email: uniqueEmail(), role: 'viewer' }), 403, 'AUTHORIZATION_ERROR');
      // Reading the list needs members:read only.
      expect((await api('GET', `/organizations/${org.id}/invitations`, u)).statusCode).toBe(200);
    }
    const byAdmin = await api('POST', `/organizations/${org.id}/invitations`, admin, { email: uniqueEmail(), role: 'admin' });
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
    expect((await api('DELETE', `/organizations/${org.id}/invitations/${revoked.invitation.id}`, owner)).statusCode).toBe(200);
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
    expect(all.data.map((i: { status: string }) => i.status)).toEqual(['pending', 'pending', 'expired', 'declined', 'revoked', 'accepted']);

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

    expectError(await api('GET', `/organizations/${org.id}/invitations?status=bogus`, owner), 400, 'VALIDATION_ERROR', /status/);
    expectError(await api('GET', `/organizations/${org.id}/invitations?pageSize=0`, owner), 400, 'VALIDATION_ERROR');
  });
});

describe('revoke and resend', () => {
  it('revoke: status revoked, the link no longer accepts, a second revoke is refused', async () => {
    const org = await createOrg(t, owner);
    const invitee = await signedInUser(t, 'revokee');
    const { invitation, token } = await invite(t, org.id, owner, invitee.email, 'member');
    expectError(await api('DELETE', `/organizations/${org.id}/invitations/${invitation.id}`, invitee), 403, 'AUTHORIZATION_ERROR');
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
    expectError(await api('POST', `/organizations/${org.id}/invitations/${invitation.id}/resend`, owner), 409, 'CONFLICT');
    expectError(await api('DELETE', `/organizations/${org.id}/invitations/inv_00000000000000000000000000`, owner), 404, 'NOT_FOUND');
    // The refusals left no audit entry.
    expect(await auditOf(t, org.id)).toHaveLength(auditCount);
    // The email may be invited again.
    expect((await api('POST', `/organizations/${org.id}/invitations`, owner, { email: invitee.email, role: 'viewer' })).statusCode).toBe(201);
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
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({ actorId: owner.userId, action: 'POST /api/v1/organizations/:orgId/invitations/:invitationId/resend', statusCode: 200 });
    expect(body.invitation).toMatchObject({ id: first.invitation.id, status: 'pending', expiresAt: new Date(t.clock.now().getTime() + 7 * DAY).toISOString() });
    // A second mail carries the new link.
    await expect.poll(() => t.mail.mails.filter((m) => m.to.includes(invitee.email) && /Resenders/.test(m.subject)).length).toBe(2);
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
    expectError(await api('POST', `/organizations/${org.id}/invitations/${old.invitation.id}/resend`, owner), 409, 'CONFLICT');
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
    expect(events[0]!.data).toEqual({ memberId: m.id, organizationId: org.id, userId: invitee.userId, email: invitee.email, role: 'admin' });
    expect((await auditOf(t, org.id)).at(-1)).toMatchObject({
      actorType: 'user',
      actorId: invitee.userId,
      action: 'POST /api/v1/invitations/accept',
      path: '/api/v1/invitations/accept',
      statusCode: 200,
    });
    expect((await listStatus(org.id, 'accepted')).total).toBe(1);
    // The new member holds the role's powers.
    expect((await api('PATCH', `/organizations/${org.id}`, invitee, { description: 'Admin was here' })).statusCode).toBe(200);
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
    const lax = await createTestApp({ database: t.database, clock: t.clock, env: { AUTH_REQUIRE_EMAIL_VERIFICATION: 'false' } });
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
    expect(expired.data.map((i: { id: string; status: string }) => [i.id, i.status])).toEqual([[invitation.id, 'expired']]);
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

    expect((await api('DELETE', `/organizations/${org.id}/invitations/${a.invitation.id}`, owner)).statusCode).toBe(200);
    expect((await api('POST', `/organizations/${org.id}/invitations`, owner, { email: third, role: 'member' })).statusCode).toBe(201);
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail('seat4'), role: 'member' }), 402, 'PLAN_LIMIT_EXCEEDED');
  });

  it('an expired invitation frees its seat, and renewing it needs a seat again', async () => {
    const org = await createOrg(t, owner);
    const old = await invite(t, org.id, owner, uniqueEmail('old1'), 'member');
    await invite(t, org.id, owner, uniqueEmail('old2'), 'member');
    await travel(7 * DAY + 1000);
    await invite(t, org.id, owner, uniqueEmail('new1'), 'member');
    await invite(t, org.id, owner, uniqueEmail('new2'), 'member');
    expectError(await api('POST', `/organizations/${org.id}/invitations/${old.invitation.id}/resend`, owner), 402, 'PLAN_LIMIT_EXCEEDED');
  });

  it('members count too: with owner + 2 members, an invitation is 402', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, member, 'member');
    await addMember(t, org.id, owner, viewer, 'viewer');
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail(), role: 'viewer' }), 402, 'PLAN_LIMIT_EXCEEDED');
    // An existing member is still a conflict, not a plan matter.
    expectError(await api('POST', `/organizations/${org.id}/invitations`, owner, { email: member.email, role: 'viewer' }), 409, 'CONFLICT');
  });
});
