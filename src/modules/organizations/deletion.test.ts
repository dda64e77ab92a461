// DELETE /organizations/{orgId} racing what changes the organization, with its subscription at a
// local server speaking the Stripe API (test/stripe-server.ts). The deletion takes its locks in the
// order accepting an invitation takes them (the pending invitations, then the memberships: the
// deleting owner's first, as an ownership transfer takes it), decides under them (the organization
// still there, the caller still its owner), and only then ends the subscription, still holding them.
// So a race never answers 500, a refused deletion leaves the subscription running, and whatever
// arrives during the provider call waits for the deletion and then finds the organization gone.
// The races are real on PostgreSQL (TEST_DATABASE_URL); on the embedded database requests take turns
// on its one connection, and every assertion holds there too.
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { addMember, invite, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { onPostgres, queryRows } from '../../../test/harness.js';
import { fake, owner, subscribed, t, useStripeApp } from '../../../test/fixtures/stripe.js';
import { expectError, waitUntil } from '../../../test/expect.js';

useStripeApp();

const ROUNDS = 8;
const CANCEL = /^\/v1\/subscriptions\//;

const del = (orgId: string, by: { auth: Record<string, string> } = owner) =>
  t.request({ method: 'DELETE', url: `/api/v1/organizations/${orgId}`, headers: by.auth });
const accept = (user: SignedInUser, token: string) =>
  t.request({ method: 'POST', url: '/api/v1/invitations/accept', headers: user.auth, payload: { token } });
const transfer = (orgId: string, memberId: string) =>
  t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/transfer-ownership`,
    headers: owner.auth,
    payload: { memberId },
  });

const n = async (query: ReturnType<typeof sql>) => Number((await queryRows<{ n: number }>(t, query))[0]!.n);
const orgExists = async (orgId: string) =>
  (await n(sql`select count(*)::int as n from organizations where id = ${orgId}`)) === 1;
const membersOf = (orgId: string) =>
  n(sql`select count(*)::int as n from memberships where organization_id = ${orgId}`);
const cancels = (subId: string) => fake.calls('DELETE', `/v1/subscriptions/${subId}`).length;
const subStatus = (subId: string) => fake.subscriptions.get(subId)!.status as string;

/**
 * Until `request` has answered or, on PostgreSQL, some request of this database waits on a row lock
 * (the deletion's): then it is known to have arrived while the deletion held its locks. On the
 * embedded database a request queues for the one connection the deletion's transaction holds,
 * which nothing here can observe: the test goes on at once.
 */
async function answeredOrWaiting(request: Promise<LightMyRequestResponse>) {
  if (!onPostgres) return;
  let answered = false;
  void request.finally(() => (answered = true));
  await waitUntil(
    'the request answered or waits on a lock',
    async () =>
      answered ||
      (await n(
        sql`select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid where not l.granted and a.datname = current_database()`,
      )) > 0,
    30_000,
  );
}

describe('DELETE /organizations/:orgId racing', () => {
  it('invitations being accepted: never a 500; the organization goes with its subscription and every member', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const joiner = await signedInUser(t, `del-join-${round}`);
      const { org, sub } = await subscribed();
      const { token } = await invite(t, org.id, owner, joiner.email, 'member');
      const [deleted, joined] = await Promise.all([del(org.id), accept(joiner, token)]);
      // Joining cannot refuse a deletion: it either joined first (and went with the organization) or
      // found the invitation gone with it.
      expect(deleted.statusCode, deleted.body).toBe(200);
      expect([200, 400], joined.body).toContain(joined.statusCode);
      if (joined.statusCode === 400) expectError(joined, 400, 'VALIDATION_ERROR');
      expect(await orgExists(org.id)).toBe(false);
      expect(await membersOf(org.id)).toBe(0);
      expect(subStatus(sub.id)).toBe('canceled');
      expect(cancels(sub.id)).toBe(1);
    }
  });

  it('an ownership transfer: either the deletion is refused (403) and the subscription runs on, or the transfer finds the organization gone', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const heir = await signedInUser(t, `del-heir-${round}`);
      const { org, sub } = await subscribed();
      const member = await addMember(t, org.id, owner, heir, 'admin');
      const [deleted, transferred] = await Promise.all([del(org.id), transfer(org.id, member.id)]);
      expect(deleted.statusCode, deleted.body).not.toBe(500);
      expect(transferred.statusCode, transferred.body).not.toBe(500);
      if (deleted.statusCode === 200) {
        // The deletion went first: the old owner can no longer hand over what is gone.
        expect(transferred.statusCode, transferred.body).toBeGreaterThanOrEqual(400);
        expect(await orgExists(org.id)).toBe(false);
        expect(subStatus(sub.id)).toBe('canceled');
      } else {
        // The transfer went first: the caller is no longer the owner, nothing is deleted or canceled.
        expectError(deleted, 403, 'AUTHORIZATION_ERROR');
        expect(transferred.statusCode, transferred.body).toBe(200);
        expect(await orgExists(org.id)).toBe(true);
        expect(subStatus(sub.id)).toBe('active');
        expect(cancels(sub.id)).toBe(0);
        const [heirRole] = await queryRows<{ role: string }>(
          t,
          sql`select role from memberships where id = ${member.id}`,
        );
        expect(heirRole?.role).toBe('owner');
      }
    }
  });
});

describe('during the provider call', () => {
  it('an invitation accepted meanwhile waits, then finds nothing (400): the subscription ends with the organization it belonged to', async () => {
    const joiner = await signedInUser(t, 'del-slow-join');
    const { org, sub } = await subscribed();
    const { token } = await invite(t, org.id, owner, joiner.email, 'member');
    const slow = fake.hold('DELETE', CANCEL);
    const deleting = del(org.id);
    await slow.arrived;
    const joining = accept(joiner, token);
    await answeredOrWaiting(joining);
    slow.release();
    const deleted = await deleting;
    expect(deleted.statusCode, deleted.body).toBe(200);
    expectError(await joining, 400, 'VALIDATION_ERROR');
    expect(await orgExists(org.id)).toBe(false);
    expect(await membersOf(org.id)).toBe(0);
    expect(subStatus(sub.id)).toBe('canceled');
  });

  it('a second deletion waits, then answers 404 and calls nothing at the provider: the subscription is canceled once', async () => {
    const { org, sub } = await subscribed();
    const slow = fake.hold('DELETE', CANCEL);
    const first = del(org.id);
    await slow.arrived;
    const second = del(org.id);
    await answeredOrWaiting(second);
    slow.release();
    expect((await first).statusCode, (await first).body).toBe(200);
    expectError(await second, 404, 'NOT_FOUND');
    expect(cancels(sub.id)).toBe(1);
    expect(subStatus(sub.id)).toBe('canceled');
  });

  it('a transfer of ownership meanwhile waits, then finds the organization gone', async () => {
    const heir = await signedInUser(t, 'del-slow-heir');
    const { org, sub } = await subscribed();
    const member = await addMember(t, org.id, owner, heir, 'admin');
    const slow = fake.hold('DELETE', CANCEL);
    const deleting = del(org.id);
    await slow.arrived;
    const transferring = transfer(org.id, member.id);
    await answeredOrWaiting(transferring);
    slow.release();
    const deleted = await deleting;
    expect(deleted.statusCode, deleted.body).toBe(200);
    const transferred = await transferring;
    expect(transferred.statusCode, transferred.body).toBeGreaterThanOrEqual(400);
    expect(transferred.statusCode, transferred.body).toBeLessThan(500);
    expect(await orgExists(org.id)).toBe(false);
    expect(subStatus(sub.id)).toBe('canceled');
  });

  it('a provider failure (502) rolls the deletion back: the organization, its members and its subscription stay, and a retry succeeds', async () => {
    const heir = await signedInUser(t, 'del-fail-member');
    const { org, sub } = await subscribed();
    await addMember(t, org.id, owner, heir, 'member');
    fake.failNext(500, { path: CANCEL, times: 5, retryable: true });
    expectError(await del(org.id), 502, 'PAYMENT_PROVIDER_ERROR');
    fake.recover();
    expect(await orgExists(org.id)).toBe(true);
    expect(await membersOf(org.id)).toBe(2);
    expect(subStatus(sub.id)).toBe('active');
    const again = await del(org.id);
    expect(again.statusCode, again.body).toBe(200);
    expect(subStatus(sub.id)).toBe('canceled');
  });
});
