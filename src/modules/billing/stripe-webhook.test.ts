// Billing through Stripe: the verified and idempotent webhook (upgrade, plan change, duplicates,
// out-of-order events, end of the subscription) and the limits switching with the plan. Events are
// signed by the `stripe` package's own test-header helper.
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { createOrg, eventsOf, uniqueEmail } from '../../../test/factories.js';
import { json, queryRows } from '../../../test/harness.js';
import { WEBHOOK_SECRET } from '../../../test/stripe-server.js';
import {
  billingData,
  cancel,
  checkout,
  deliver,
  deliverOk,
  fake,
  nowS,
  owner,
  periodEndIso,
  subRow,
  subscribed,
  t,
  useStripeApp,
  withPrice,
} from '../../../test/fixtures/stripe.js';
import { expectError } from '../../../test/expect.js';

useStripeApp();

describe('POST /billing/webhook', () => {
  const post = (payload: string, headers: Record<string, string>) =>
    t.request({ method: 'POST', url: '/api/v1/billing/webhook', headers, payload });

  it('refuses a missing, wrong, stale or tampered signature with 400 VALIDATION_ERROR and applies nothing', async () => {
    const org = await createOrg(t, owner);
    expect((await checkout(org.id)).statusCode).toBe(200);
    const customer = (await subRow(org.id))!.customer_id as string;
    const sub = fake.createSubscription(customer, 'price_pro');
    const event = fake.event('customer.subscription.created', sub);
    const { payload, headers } = fake.signed(event);

    expectError(await post(payload, { 'content-type': 'application/json' }), 400, 'VALIDATION_ERROR');
    expectError(await post(payload, { ...headers, 'stripe-signature': 't=1,v1=deadbeef' }), 400, 'VALIDATION_ERROR');
    expectError(await post(payload, fake.signed(event, 'whsec_another_secret').headers), 400, 'VALIDATION_ERROR');
    expectError(await post(payload.replace('price_pro', 'price_enterprise'), headers), 400, 'VALIDATION_ERROR');
    const stale = new Stripe('sk_test_x').webhooks.generateTestHeaderString({
      payload,
      secret: WEBHOOK_SECRET,
      timestamp: nowS() - 3600,
    });
    expectError(await post(payload, { ...headers, 'stripe-signature': stale }), 400, 'VALIDATION_ERROR');

    expect(await queryRows(t, sql`select id from billing_events where id = ${event.id}`)).toEqual([]);
    expect((await billingData(org.id)).plan.name).toBe('Free');
    // The genuine request still applies afterwards (the refused ones did not mark the event as seen).
    const ok = await post(payload, headers);
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await billingData(org.id)).plan.name).toBe('Pro');
  });

  it('checkout.session.completed upgrades to Pro from the subscription fetched at Stripe and records billing.updated', async () => {
    const org = await createOrg(t, owner);
    const res = await checkout(org.id);
    const session = fake.completeCheckout(json(res).data.sessionId);
    const sub = fake.subscriptions.get(session.subscription)!;
    const gets = fake.calls('GET', `/v1/subscriptions/${sub.id}`).length;
    await deliverOk(fake.event('checkout.session.completed', session));
    expect(fake.calls('GET', `/v1/subscriptions/${sub.id}`).length).toBe(gets + 1);

    const data = await billingData(org.id);
    expect(data).toEqual({
      plan: { name: 'Pro', limits: { members: 25, apiRequests: 100000, storage: 10737418240 } },
      status: 'active',
      subscription: { id: sub.id, currentPeriodEnd: periodEndIso(sub), cancelAtPeriodEnd: false },
      usage: { period: '2026-03', apiRequests: 0 },
    });
    const events = (await eventsOf(t, org.id)).filter((e) => e.type.startsWith('billing.'));
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('billing.updated');
    expect(events[0]!.data).toEqual({
      organizationId: org.id,
      plan: 'pro',
      status: 'active',
      subscriptionId: sub.id,
      currentPeriodEnd: periodEndIso(sub),
      cancelAtPeriodEnd: false,
    });
  });

  it('answers 502 when the subscription cannot be fetched, and applies the event when Stripe sends it again', async () => {
    const org = await createOrg(t, owner);
    const session = fake.completeCheckout(json(await checkout(org.id)).data.sessionId);
    const event = fake.event('checkout.session.completed', session);
    fake.failNext(500, { path: /^\/v1\/subscriptions\// });
    expectError(await deliver(event), 502, 'PAYMENT_PROVIDER_ERROR');
    expect((await billingData(org.id)).plan.name).toBe('Free');
    await deliverOk(event);
    expect((await billingData(org.id)).plan.name).toBe('Pro');
  });

  it('customer.subscription.updated with the Enterprise price moves the plan to Enterprise', async () => {
    const { org, sub } = await subscribed();
    await deliverOk(
      fake.event('customer.subscription.updated', withPrice(sub, 'price_enterprise'), { created: nowS() + 1 }),
    );
    const data = await billingData(org.id);
    expect(data.plan).toEqual({ name: 'Enterprise', limits: { members: null, apiRequests: null, storage: null } });
    expect(data.subscription).toEqual({ id: sub.id, currentPeriodEnd: periodEndIso(sub), cancelAtPeriodEnd: false });
    const last = (await eventsOf(t, org.id)).at(-1)!;
    expect(last.type).toBe('billing.updated');
    expect(last.data).toMatchObject({ plan: 'enterprise', subscriptionId: sub.id });
  });

  it('mirrors the provider status: past_due keeps the plan, unpaid returns to Free', async () => {
    const { org, sub } = await subscribed();
    await deliverOk(
      fake.event('customer.subscription.updated', { ...sub, status: 'past_due' }, { created: nowS() + 1 }),
    );
    let data = await billingData(org.id);
    expect(data.status).toBe('past_due');
    expect(data.plan.name).toBe('Pro');
    await deliverOk(fake.event('customer.subscription.updated', { ...sub, status: 'unpaid' }, { created: nowS() + 2 }));
    data = await billingData(org.id);
    expect(data.status).toBe('unpaid');
    expect(data.plan.name).toBe('Free');
  });

  it('processes a duplicate event id once', async () => {
    const { org, sub } = await subscribed();
    const event = fake.event('customer.subscription.updated', withPrice(sub, 'price_enterprise'), {
      created: nowS() + 1,
    });
    const before = (await eventsOf(t, org.id)).length;
    await deliverOk(event);
    await deliverOk(event, true);
    const after = await eventsOf(t, org.id);
    expect(after.length).toBe(before + 1);
    expect(await queryRows(t, sql`select id from billing_events where id = ${event.id}`)).toHaveLength(1);
  });

  it('processes concurrent duplicates once', async () => {
    const { org, sub } = await subscribed();
    const event = fake.event('customer.subscription.updated', withPrice(sub, 'price_enterprise'), {
      created: nowS() + 1,
    });
    const before = (await eventsOf(t, org.id)).length;
    const results = await Promise.all(Array.from({ length: 5 }, () => deliver(event)));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    expect(results.map((r) => json(r).duplicate).sort()).toEqual([false, true, true, true, true]);
    expect((await eventsOf(t, org.id)).length).toBe(before + 1);
    expect((await billingData(org.id)).plan.name).toBe('Enterprise');
  });

  it('does not move a subscription backwards when an older event arrives after a newer one', async () => {
    const { org, sub } = await subscribed();
    const base = nowS();
    const newer = fake.event(
      'customer.subscription.updated',
      { ...withPrice(structuredClone(sub), 'price_enterprise'), cancel_at_period_end: true },
      { created: base + 20 },
    );
    const older = fake.event('customer.subscription.updated', withPrice(structuredClone(sub), 'price_pro'), {
      created: base + 10,
    });
    await deliverOk(newer);
    const eventsBefore = (await eventsOf(t, org.id)).length;
    await deliverOk(older);
    const data = await billingData(org.id);
    expect(data.plan.name).toBe('Enterprise');
    expect(data.subscription.cancelAtPeriodEnd).toBe(true);
    expect((await eventsOf(t, org.id)).length).toBe(eventsBefore);
    // A deletion is not an older state but the end: it applies whatever its timestamp
    // (stripe-ordering.test.ts covers ended subscriptions).
    await deliverOk(
      fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: base + 15 }),
    );
    expect((await billingData(org.id)).plan.name).toBe('Free');
  });

  it('customer.subscription.deleted returns the organization to Free and records billing.canceled', async () => {
    const { org, sub } = await subscribed();
    await deliverOk(
      fake.event(
        'customer.subscription.deleted',
        { ...sub, status: 'canceled', ended_at: nowS() },
        { created: nowS() + 1 },
      ),
    );
    const data = await billingData(org.id);
    expect(data.plan).toEqual({ name: 'Free', limits: { members: 3, apiRequests: 10000, storage: 1073741824 } });
    expect(data.subscription).toBeNull();
    expect(data.status).toBe('canceled');
    const last = (await eventsOf(t, org.id)).at(-1)!;
    expect(last.type).toBe('billing.canceled');
    expect(last.data).toMatchObject({ organizationId: org.id, subscriptionId: sub.id });
    // Cancel now has nothing to cancel.
    expectError(await cancel(org.id), 409, 'CONFLICT');
    // And a new checkout is possible again.
    expect((await checkout(org.id)).statusCode).toBe(200);
  });

  it('the end of a subscription the organization no longer uses does not end the one it uses', async () => {
    const { org, sub, customer } = await subscribed();
    // A second subscription of the same customer (made at Stripe, e.g. in the dashboard) replaces the first...
    const second = fake.createSubscription(customer, 'price_enterprise');
    await deliverOk(fake.event('customer.subscription.created', second, { created: nowS() + 1 }));
    expect((await billingData(org.id)).subscription.id).toBe(second.id);
    // ...and the first one ending afterwards leaves the organization on the second.
    await deliverOk(
      fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: nowS() + 2 }),
    );
    const data = await billingData(org.id);
    expect(data.plan.name).toBe('Enterprise');
    expect(data.subscription.id).toBe(second.id);
    // The second one ending does.
    await deliverOk(
      fake.event('customer.subscription.deleted', { ...second, status: 'canceled' }, { created: nowS() + 3 }),
    );
    expect((await billingData(org.id)).plan.name).toBe('Free');
  });

  it('acknowledges events it does not act on, and events of unknown customers, without changing anything', async () => {
    const { org } = await subscribed();
    const before = await eventsOf(t, org.id);
    await deliverOk(fake.event('invoice.paid', { id: 'in_1', object: 'invoice', customer: 'cus_x' }));
    const stranger = fake.createSubscription('cus_unknown', 'price_enterprise');
    await deliverOk(fake.event('customer.subscription.updated', stranger, { created: nowS() + 1 }));
    expect(await eventsOf(t, org.id)).toEqual(before);
    expect((await billingData(org.id)).plan.name).toBe('Pro');
  });

  it('switches the limits with the plan: members, API keys, webhook endpoints', async () => {
    const org = await createOrg(t, owner);
    const inviteRes = (email: string) =>
      t.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/invitations`,
        headers: owner.auth,
        payload: { email, role: 'member' },
      });
    const keyRes = (n: number) =>
      t.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/api-keys`,
        headers: owner.auth,
        payload: { name: `k${n}`, scopes: ['read:projects'] },
      });
    const hookRes = (n: number) =>
      t.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/webhooks`,
        headers: owner.auth,
        payload: { url: `https://example.com/hook/${n}`, events: ['member.added'] },
      });

    // Free: 3 seats (the owner and two invitations), 1 API key, 1 webhook endpoint.
    expect((await inviteRes(uniqueEmail('seat'))).statusCode).toBe(201);
    expect((await inviteRes(uniqueEmail('seat'))).statusCode).toBe(201);
    expectError(await inviteRes(uniqueEmail('seat')), 402, 'PLAN_LIMIT_EXCEEDED');
    expect((await keyRes(1)).statusCode).toBe(201);
    expectError(await keyRes(2), 402, 'PLAN_LIMIT_EXCEEDED');
    expect((await hookRes(1)).statusCode).toBe(201);
    expectError(await hookRes(2), 402, 'PLAN_LIMIT_EXCEEDED');

    // Upgrade through Stripe: Pro's 25 seats, 10 keys, 10 endpoints.
    const session = fake.completeCheckout(json(await checkout(org.id)).data.sessionId);
    await deliverOk(fake.event('checkout.session.completed', session));
    const sub = fake.subscriptions.get(session.subscription)!;
    const third = await inviteRes(uniqueEmail('seat'));
    expect(third.statusCode, third.body).toBe(201);
    for (let n = 2; n <= 10; n++) expect((await keyRes(n)).statusCode).toBe(201);
    expectError(await keyRes(11), 402, 'PLAN_LIMIT_EXCEEDED');
    for (let n = 2; n <= 10; n++) expect((await hookRes(n)).statusCode).toBe(201);
    expectError(await hookRes(11), 402, 'PLAN_LIMIT_EXCEEDED');

    // Enterprise: unlimited webhook endpoints.
    await deliverOk(
      fake.event('customer.subscription.updated', withPrice(sub, 'price_enterprise'), { created: nowS() + 1 }),
    );
    expect((await hookRes(11)).statusCode).toBe(201);

    // The subscription ends: back to Free, nothing new beyond Free's limits.
    await deliverOk(
      fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: nowS() + 2 }),
    );
    expectError(await inviteRes(uniqueEmail('seat')), 402, 'PLAN_LIMIT_EXCEEDED');
    expectError(await keyRes(12), 402, 'PLAN_LIMIT_EXCEEDED');
    expectError(await hookRes(12), 402, 'PLAN_LIMIT_EXCEEDED');
  }, 120_000);
});
