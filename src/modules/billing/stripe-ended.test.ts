// Stripe events that arrive in an unhelpful order, through the webhook route with events signed the
// way Stripe signs them (test/stripe-server.ts). A subscription that ended stays ended: nothing sent
// for its id afterwards, whatever its timestamp or order of arrival, gives the paid plan back; only a
// new subscription does.
import { describe, expect, it } from 'vitest';
import { eventsOf } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import {
  billingData,
  billingTypes,
  checkout,
  deliver,
  deliverOk,
  expectEnded,
  fake,
  nowS,
  subscribed,
  t,
  useStripeOrderingApp,
  withPrice,
} from '../../../test/fixtures/stripe-ordering.js';

useStripeOrderingApp();

describe('a subscription that ended is terminal', () => {
  it('an update (active) stamped the same second as the deletion, or later, does not bring the paid plan back', async () => {
    const { org, sub, session } = await subscribed('price_enterprise');
    const at = nowS() + 1;
    await deliverOk(
      fake.event('customer.subscription.deleted', { ...sub, status: 'canceled', ended_at: at }, { created: at }),
    );
    await expectEnded(org.id);
    const events = await billingTypes(org.id);
    expect(events).toEqual(['billing.updated', 'billing.canceled']);

    // The same second, then later and later: each acknowledged (Stripe stops sending), none applied.
    for (const created of [at, at + 1, at + 3600]) {
      await deliverOk(fake.event('customer.subscription.updated', { ...sub, status: 'active' }, { created }));
      await deliverOk(fake.event('customer.subscription.created', { ...sub, status: 'trialing' }, { created }));
      await deliverOk(fake.event('customer.subscription.resumed', { ...sub, status: 'active' }, { created }));
      await expectEnded(org.id);
    }
    // A replayed checkout for it too, even while Stripe (wrongly) still calls it active.
    expect(fake.subscriptions.get(sub.id)!.status).toBe('active');
    await deliverOk(fake.event('checkout.session.completed', session, { created: at + 7200 }));
    await expectEnded(org.id);
    expect(await billingTypes(org.id)).toEqual(events);
  });

  it('the deletion ends the subscription even when a later-stamped update arrived before it', async () => {
    const { org, sub } = await subscribed('price_pro');
    const at = nowS() + 1;
    await deliverOk(fake.event('customer.subscription.updated', { ...sub, status: 'active' }, { created: at + 10 }));
    expect((await billingData(org.id)).plan.name).toBe('Pro');
    await deliverOk(fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: at }));
    await expectEnded(org.id);
    await deliverOk(fake.event('customer.subscription.updated', { ...sub, status: 'active' }, { created: at + 20 }));
    await expectEnded(org.id);
    expect((await billingTypes(org.id)).at(-1)).toBe('billing.canceled');
  });

  it('a deletion and a same-second update (active) delivered at once leave the organization on Free, whichever runs first', async () => {
    for (let round = 0; round < 3; round++) {
      const { org, sub } = await subscribed('price_pro');
      const at = nowS() + 1;
      const results = await Promise.all([
        deliver(fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: at })),
        deliver(fake.event('customer.subscription.updated', { ...sub, status: 'active' }, { created: at })),
        deliver(
          fake.event(
            'customer.subscription.updated',
            { ...withPrice(structuredClone(sub), 'price_enterprise'), status: 'active' },
            { created: at },
          ),
        ),
      ]);
      for (const r of results) expect(r.statusCode, r.body).toBe(200);
      await expectEnded(org.id);
    }
  });

  it('an update with an ended status (canceled, incomplete_expired) is an end too', async () => {
    for (const status of ['canceled', 'incomplete_expired']) {
      const { org, sub } = await subscribed('price_pro');
      const at = nowS() + 1;
      await deliverOk(fake.event('customer.subscription.updated', { ...sub, status }, { created: at }));
      const data = await billingData(org.id);
      expect(data.plan.name).toBe('Free');
      expect(data.subscription).toBeNull();
      await deliverOk(fake.event('customer.subscription.updated', { ...sub, status: 'active' }, { created: at }));
      await deliverOk(fake.event('customer.subscription.updated', { ...sub, status: 'active' }, { created: at + 60 }));
      expect((await billingData(org.id)).plan.name).toBe('Free');
      expect((await billingTypes(org.id)).at(-1)).toBe('billing.canceled');
    }
  });

  it('a replaced subscription that ended never takes the organization back from the one it uses', async () => {
    const { org, sub, customer } = await subscribed('price_pro');
    const at = nowS() + 1;
    const second = fake.createSubscription(customer, 'price_enterprise');
    await deliverOk(fake.event('customer.subscription.created', second, { created: at }));
    await deliverOk(fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: at + 1 }));
    const events = await billingTypes(org.id);
    await deliverOk(fake.event('customer.subscription.updated', { ...sub, status: 'active' }, { created: at + 2 }));
    const data = await billingData(org.id);
    expect(data.plan.name).toBe('Enterprise');
    expect(data.subscription.id).toBe(second.id);
    expect(await billingTypes(org.id)).toEqual(events);
  });

  it('a new subscription (another id) brings the paid plan back, even stamped the second the old one ended', async () => {
    const { org, sub, customer } = await subscribed('price_enterprise');
    const at = nowS() + 1;
    await deliverOk(fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: at }));
    await expectEnded(org.id);

    const next = fake.createSubscription(customer, 'price_pro');
    await deliverOk(fake.event('customer.subscription.created', next, { created: at }));
    let data = await billingData(org.id);
    expect(data.plan.name).toBe('Pro');
    expect(data.status).toBe('active');
    expect(data.subscription.id).toBe(next.id);
    expect((await eventsOf(t, org.id)).at(-1)).toMatchObject({
      type: 'billing.updated',
      data: { plan: 'pro', subscriptionId: next.id },
    });

    // The old one still changes nothing; the new one's own end returns to Free.
    await deliverOk(fake.event('customer.subscription.updated', { ...sub, status: 'active' }, { created: at + 5 }));
    expect((await billingData(org.id)).subscription.id).toBe(next.id);
    await deliverOk(fake.event('customer.subscription.deleted', { ...next, status: 'canceled' }, { created: at + 6 }));
    await expectEnded(org.id);

    // And a third through a checkout, the usual way.
    const res = await checkout(org.id, 'price_pro');
    expect(res.statusCode, res.body).toBe(200);
    const session = fake.completeCheckout(json(res).data.sessionId);
    await deliverOk(fake.event('checkout.session.completed', session, { created: at + 7 }));
    data = await billingData(org.id);
    expect(data.plan.name).toBe('Pro');
    expect(data.subscription.id).toBe(session.subscription);
  });
});
