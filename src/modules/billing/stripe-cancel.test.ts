// Billing through Stripe: cancelling a subscription, and deleting an organization that has one.
import { describe, expect, it } from 'vitest';
import { addMember, createOrg, eventsOf } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import {
  billingData,
  cancel,
  checkout,
  deliverOk,
  fake,
  memberUser,
  nowS,
  outsider,
  owner,
  periodEndIso,
  subRow,
  subscribed,
  t,
  useStripeApp,
} from '../../../test/fixtures/stripe.js';
import { expectError } from '../../../test/expect.js';

useStripeApp();

describe('POST /organizations/:orgId/billing/cancel', () => {
  it('needs billing:manage, and a paid subscription (409 otherwise)', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, memberUser, 'member');
    expectError(await cancel(org.id, memberUser.auth), 403, 'AUTHORIZATION_ERROR');
    expectError(await cancel(org.id, outsider.auth), 403, 'AUTHORIZATION_ERROR');
    expectError(await cancel(org.id), 409, 'CONFLICT');
    // A customer without a subscription (checkout started, never paid) has nothing to cancel either.
    expect((await checkout(org.id)).statusCode).toBe(200);
    const before = fake.requests.length;
    expectError(await cancel(org.id), 409, 'CONFLICT');
    expect(fake.requests.length).toBe(before);
  });

  it('cancels at the period end at Stripe and records billing.canceled; the deletion at period end returns to Free', async () => {
    const { org, sub } = await subscribed();
    const res = await cancel(org.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ success: true, data: { success: true, cancelAt: periodEndIso(sub) } });
    const update = fake.calls('POST', `/v1/subscriptions/${sub.id}`).at(-1)!;
    expect(update.params).toEqual({ cancel_at_period_end: 'true' });
    expect(fake.subscriptions.get(sub.id)!.cancel_at_period_end).toBe(true);

    const data = await billingData(org.id);
    expect(data.plan.name).toBe('Pro');
    expect(data.subscription).toEqual({ id: sub.id, currentPeriodEnd: periodEndIso(sub), cancelAtPeriodEnd: true });
    const last = (await eventsOf(t, org.id)).at(-1)!;
    expect(last.type).toBe('billing.canceled');
    expect(last.data).toMatchObject({ organizationId: org.id, subscriptionId: sub.id, cancelAt: periodEndIso(sub) });

    // Stripe's own update event for the cancellation agrees with what is stored.
    await deliverOk(
      fake.event('customer.subscription.updated', fake.subscriptions.get(sub.id)!, { created: nowS() + 1 }),
    );
    expect((await billingData(org.id)).subscription.cancelAtPeriodEnd).toBe(true);
    // End of period.
    await deliverOk(
      fake.event(
        'customer.subscription.deleted',
        { ...fake.subscriptions.get(sub.id)!, status: 'canceled' },
        { created: nowS() + 2 },
      ),
    );
    const ended = await billingData(org.id);
    expect(ended.plan.name).toBe('Free');
    expect(ended.subscription).toBeNull();
  });

  it('answers 502 when Stripe fails, with nothing changed locally', async () => {
    const { org, sub } = await subscribed();
    const row = await subRow(org.id);
    const events = await eventsOf(t, org.id);
    fake.failNext(500, { path: /^\/v1\/subscriptions\//, times: 5, retryable: true });
    expectError(await cancel(org.id), 502, 'PAYMENT_PROVIDER_ERROR');
    fake.recover();
    expect(await subRow(org.id)).toEqual(row);
    expect(await eventsOf(t, org.id)).toEqual(events);
    expect((await billingData(org.id)).subscription.cancelAtPeriodEnd).toBe(false);
    expect(fake.subscriptions.get(sub.id)!.cancel_at_period_end).toBe(false);
  });
});

describe('DELETE /organizations/:orgId', () => {
  const del = (orgId: string) =>
    t.request({ method: 'DELETE', url: `/api/v1/organizations/${orgId}`, headers: owner.auth });

  it('cancels the subscription at Stripe', async () => {
    const { org, sub } = await subscribed();
    const res = await del(org.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(fake.calls('DELETE', `/v1/subscriptions/${sub.id}`)).toHaveLength(1);
    expect(fake.subscriptions.get(sub.id)!.status).toBe('canceled');
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}`, headers: owner.auth })).statusCode,
    ).toBe(404);
    // Stripe's deletion event for it arrives afterwards and is acknowledged.
    await deliverOk(
      fake.event('customer.subscription.deleted', fake.subscriptions.get(sub.id)!, { created: nowS() + 1 }),
    );
  });

  it('answers 502 when Stripe fails, and the organization still exists', async () => {
    const { org, sub } = await subscribed();
    fake.failNext(500, { path: /^\/v1\/subscriptions\//, times: 5, retryable: true });
    expectError(await del(org.id), 502, 'PAYMENT_PROVIDER_ERROR');
    fake.recover();
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}`, headers: owner.auth })).statusCode,
    ).toBe(200);
    expect((await billingData(org.id)).subscription.id).toBe(sub.id);
    expect(fake.subscriptions.get(sub.id)!.status).toBe('active');
  });

  it('is not blocked by a subscription that already ended at Stripe before its event arrived', async () => {
    // Canceled at Stripe (a second cancel is refused there) and deleted there (404 resource_missing).
    const ended = await subscribed();
    fake.subscriptions.get(ended.sub.id)!.status = 'canceled';
    const res = await del(ended.org.id);
    expect(res.statusCode, res.body).toBe(200);
    const gone = await subscribed();
    fake.subscriptions.delete(gone.sub.id);
    const res2 = await del(gone.org.id);
    expect(res2.statusCode, res2.body).toBe(200);
    // An active subscription whose cancel is refused for another reason still blocks (502).
    const { org } = await subscribed();
    fake.failNext(400, { path: /^\/v1\/subscriptions\//, message: 'Something else is wrong' });
    expectError(await del(org.id), 502, 'PAYMENT_PROVIDER_ERROR');
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}`, headers: owner.auth })).statusCode,
    ).toBe(200);
  });

  it('calls nothing at Stripe for an organization without a subscription', async () => {
    const org = await createOrg(t, owner);
    expect((await checkout(org.id)).statusCode).toBe(200);
    const before = fake.requests.length;
    expect((await del(org.id)).statusCode).toBe(200);
    expect(fake.requests.length).toBe(before);
  });
});
