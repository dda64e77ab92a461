// The invitee's side of invitations (docs/api.md#invitation-preview), through HTTP: the preview by
// token, the list of one's pending invitations, and accepting or declining one of them by id; with
// the refusals: no token or a dead one, another person's invitation, an unverified address.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOrg,
  invite,
  login,
  registerUser,
  rowsOf,
  setPlan,
  signedInUser,
  type SignedInUser,
  uniqueEmail,
  verifyEmailOf,
} from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { expectError } from '../../../test/expect.js';
import { makeRole } from '../../../test/fixtures/roles.js';

let t: TestApp;
let owner: SignedInUser;
let org: { id: string; name: string };

beforeAll(async () => {
  t = await createTestApp();
  owner = await signedInUser(t, 'inviter');
  await t.request({
    method: 'PATCH',
    url: '/api/v1/users/me',
    headers: owner.auth,
    payload: { fullName: 'Ada Inviter' },
  });
  org = await createOrg(t, owner, { name: 'Invitee Works' });
  await setPlan(t, org.id, 'enterprise');
  await makeRole(t, org.id, owner, 'field-crew', ['org:read'], 'Field crew');
});
afterAll(() => t.close());

const preview = (token: string) =>
  t.request({ method: 'POST', url: '/api/v1/invitations/preview', payload: { token } });
const mine = (who: { auth: Record<string, string> }) =>
  t.request({ method: 'GET', url: '/api/v1/users/me/invitations', headers: who.auth });
const act = (who: { auth: Record<string, string> }, id: string, what: 'accept' | 'decline') =>
  t.request({ method: 'POST', url: `/api/v1/users/me/invitations/${id}/${what}`, headers: who.auth });
const invitationState = async () =>
  rowsOf(
    await t.deps.db.execute(sql`select id, status from invitations where organization_id = ${org.id} order by id`),
  );
const membersOf = async () =>
  rowsOf(await t.deps.db.execute(sql`select user_id, role from memberships where organization_id = ${org.id}`));

describe('the preview of an invitation', () => {
  it('names the organization, the inviter and the role by its name, without an account, and changes nothing', async () => {
    const { token, invitation } = await invite(t, org.id, owner, uniqueEmail('pv'), 'field-crew' as 'member');
    const before = await invitationState();
    const res = await preview(token);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({
      organization: { id: org.id, name: 'Invitee Works', logoUrl: null },
      inviter: { fullName: 'Ada Inviter' },
      email: invitation.email,
      role: 'field-crew',
      roleName: 'Field crew',
      expiresAt: invitation.expiresAt,
    });
    expect(await invitationState()).toEqual(before);
    // A built-in role reads as its name too.
    const member = await invite(t, org.id, owner, uniqueEmail('pv'), 'member');
    expect(json(await preview(member.token))).toMatchObject({ role: 'member', roleName: 'Member' });
  });

  it('an unknown, revoked, declined, accepted or expired invitation: 404, nothing changed', async () => {
    expectError(await preview('no-such-token'), 404, 'NOT_FOUND', 'Invitation not found');
    const revoked = await invite(t, org.id, owner, uniqueEmail('rv'), 'member');
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v1/organizations/${org.id}/invitations/${revoked.invitation.id as string}`,
      headers: owner.auth,
    });
    expect(del.statusCode, del.body).toBeLessThan(300);
    expectError(await preview(revoked.token), 404, 'NOT_FOUND');
    const declined = await invite(t, org.id, owner, uniqueEmail('dc'), 'member');
    await t.request({ method: 'POST', url: '/api/v1/invitations/decline', payload: { token: declined.token } });
    expectError(await preview(declined.token), 404, 'NOT_FOUND');
    const joiner = await signedInUser(t, 'joiner');
    const accepted = await invite(t, org.id, owner, joiner.email, 'viewer');
    const joined = await t.request({
      method: 'POST',
      url: '/api/v1/invitations/accept',
      headers: joiner.auth,
      payload: { token: accepted.token },
    });
    expect(joined.statusCode, joined.body).toBe(200);
    expectError(await preview(accepted.token), 404, 'NOT_FOUND');
    const late = await invite(t, org.id, owner, uniqueEmail('late'), 'member');
    t.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    try {
      expectError(await preview(late.token), 404, 'NOT_FOUND');
    } finally {
      t.clock.advance(-(7 * 24 * 3600 * 1000 + 1000));
    }
    // A body without a token, or a token too long: 400.
    expectError(
      await t.request({ method: 'POST', url: '/api/v1/invitations/preview', payload: {} }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await preview('x'.repeat(513)), 400, 'VALIDATION_ERROR');
  });
});

describe('my pending invitations', () => {
  it('lists those to my verified address only; accepted by id they make me a member, once', async () => {
    const me = await signedInUser(t, 'invitee');
    const other = await signedInUser(t, 'bystander');
    const { invitation } = await invite(t, org.id, owner, me.email, 'field-crew' as 'member');
    const listed = json(await mine(me)).invitations;
    expect(listed).toEqual([
      expect.objectContaining({
        id: invitation.id,
        organization: expect.objectContaining({ id: org.id }),
        roleName: 'Field crew',
      }),
    ]);
    expect(json(await mine(other)).invitations).toEqual([]);

    // Another person cannot take it by its id: 404, and nothing changes.
    const before = { invitations: await invitationState(), members: await membersOf() };
    expectError(await act(other, invitation.id as string, 'accept'), 404, 'NOT_FOUND', 'Invitation not found');
    expectError(await act(other, invitation.id as string, 'decline'), 404, 'NOT_FOUND');
    expect({ invitations: await invitationState(), members: await membersOf() }).toEqual(before);

    const accepted = await act(me, invitation.id as string, 'accept');
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(json(accepted)).toMatchObject({ userId: me.userId, role: 'field-crew' });
    expect(json(await mine(me)).invitations).toEqual([]);
    expectError(await act(me, invitation.id as string, 'accept'), 404, 'NOT_FOUND');
  });

  it('an unverified address sees none and can act on none, until it is verified', async () => {
    // Where unverified accounts may sign in at all.
    const loose = await createTestApp({ env: { AUTH_REQUIRE_EMAIL_VERIFICATION: 'false' } });
    try {
      const boss = await signedInUser(loose, 'loose-owner');
      const looseOrg = await createOrg(loose, boss);
      const email = uniqueEmail('unverified');
      const { password } = await registerUser(loose, email);
      const { invitation } = await invite(loose, looseOrg.id, boss, email, 'member');
      const tokens = await login(loose, email, password);
      const who = { auth: { authorization: `Bearer ${tokens.accessToken}` } };
      const list = () => loose.request({ method: 'GET', url: '/api/v1/users/me/invitations', headers: who.auth });
      expect(json(await list()).invitations).toEqual([]);
      const taken = await loose.request({
        method: 'POST',
        url: `/api/v1/users/me/invitations/${invitation.id as string}/accept`,
        headers: who.auth,
      });
      expectError(taken, 404, 'NOT_FOUND');
      await verifyEmailOf(loose, email);
      expect(json(await list()).invitations.map((i: { id: string }) => i.id)).toEqual([invitation.id]);
    } finally {
      await loose.close();
    }
  });

  it('declined by id, it is gone from the list and its link no longer works', async () => {
    const me = await signedInUser(t, 'decliner');
    const { invitation, token } = await invite(t, org.id, owner, me.email, 'viewer');
    const res = await act(me, invitation.id as string, 'decline');
    expect(res.statusCode, res.body).toBe(200);
    expect(json(await mine(me)).invitations).toEqual([]);
    expectError(await preview(token), 404, 'NOT_FOUND');
    expect((await invitationState()).find((i) => i.id === invitation.id)?.status).toBe('declined');
    expect((await membersOf()).some((m) => m.user_id === me.userId)).toBe(false);
  });

  it('without a bearer token: 401', async () => {
    expectError(await t.request({ method: 'GET', url: '/api/v1/users/me/invitations' }), 401, 'AUTHENTICATION_ERROR');
  });
});
