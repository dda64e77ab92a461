// Stripe events of an unexpected shape, through the webhook route with events signed the way Stripe
// signs them: a correctly signed event of an unexpected shape is refused with 400 VALIDATION_ERROR
// and changes nothing. And the Stripe webhook is closed when another billing provider is in use.
import { describe, expect, it } from 'vitest';
import { eventsOf } from '../../../test/factories.js';
import { createTestApp, json } from '../../../test/harness.js';
import { WEBHOOK_SECRET } from '../../../test/stripe-server.js';
import {
  billingData,
  billingEventIds,
  deliver,
  deliverOk,
  fake,
  nowS,
  type Obj,
  orgPlan,
  post,
  subRow,
  subscribed,
  t,
  useStripeOrderingApp,
} from '../../../test/fixtures/stripe-ordering.js';
import { expectError } from '../../../test/expect.js';

useStripeOrderingApp();

describe('signed events of an unexpected shape', () => {
  it('answer 400 VALIDATION_ERROR and change nothing (plan, subscription row, events, processed ids)', async () => {
    const { org, sub, customer } = await subscribed('price_pro');
    // Each would move the organization to Enterprise (or end it) if it were applied.
    const upgrade = () =>
      fake.event(
        'customer.subscription.updated',
        { ...structuredClone(sub), items: { ...structuredClone(sub.items) } },
        { created: nowS() + 5 },
      );
    const shaped = (fn: (e: Obj, o: Obj) => void, event: Obj = upgrade()) => {
      if (event.data?.object?.items?.data?.[0]?.price) event.data.object.items.data[0].price.id = 'price_enterprise';
      fn(event, event.data?.object);
      return event;
    };
    const otherSession = {
      id: 'cs_test_other',
      object: 'checkout.session',
      mode: 'subscription',
      customer,
      subscription: sub.id,
      status: 'complete',
    };
    const cases: [string, Obj | string][] = [
      ['no data', shaped((e) => delete e.data)],
      ['data a string', shaped((e) => (e.data = 'object'))],
      ['no data.object', shaped((e) => (e.data = {}))],
      ['data.object null', shaped((e) => (e.data.object = null))],
      ['data.object an array', shaped((e) => (e.data.object = [sub]))],
      ['data.object a string', shaped((e) => (e.data.object = sub.id))],
      ['subscription without id', shaped((_e, o) => delete o.id)],
      ['subscription id a number', shaped((_e, o) => (o.id = 42))],
      ['subscription id empty', shaped((_e, o) => (o.id = ''))],
      ['subscription without items', shaped((_e, o) => delete o.items)],
      ['items without data', shaped((_e, o) => (o.items = { object: 'list' }))],
      ['items.data not a list', shaped((_e, o) => (o.items.data = { 0: o.items.data[0] }))],
      ['item not an object', shaped((_e, o) => (o.items.data = ['si_1']))],
      ['item price id a number', shaped((_e, o) => (o.items.data[0].price.id = 7))],
      ['item period end a string', shaped((_e, o) => (o.items.data[0].current_period_end = 'soon'))],
      ['subscription without status', shaped((_e, o) => delete o.status)],
      ['status a number', shaped((_e, o) => (o.status = 1))],
      ['status an object', shaped((_e, o) => (o.status = { value: 'active' }))],
      ['subscription without customer', shaped((_e, o) => delete o.customer)],
      ['customer a number', shaped((_e, o) => (o.customer = 5))],
      ['customer an object without id', shaped((_e, o) => (o.customer = { object: 'customer' }))],
      ['cancel_at_period_end a string', shaped((_e, o) => (o.cancel_at_period_end = 'yes'))],
      ['cancel_at a string', shaped((_e, o) => (o.cancel_at = 'tomorrow'))],
      ['current_period_end a string', shaped((_e, o) => (o.current_period_end = '2030-01-01'))],
      ['metadata a string', shaped((_e, o) => (o.metadata = 'org'))],
      [
        'a deletion without subscription id',
        shaped(
          (_e, o) => delete o.id,
          fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: nowS() + 5 }),
        ),
      ],
      [
        'a deletion without data.object',
        shaped(
          (e) => (e.data = {}),
          fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: nowS() + 5 }),
        ),
      ],
      [
        'a checkout session whose subscription is a number',
        fake.event('checkout.session.completed', { ...otherSession, subscription: 42 }),
      ],
      [
        'a checkout session whose subscription is an object',
        fake.event('checkout.session.completed', { ...otherSession, subscription: { status: 'active' } }),
      ],
      [
        'a checkout session without data.object',
        shaped((e) => (e.data = {}), fake.event('checkout.session.completed', otherSession)),
      ],
      ['event without id', shaped((e) => delete e.id)],
      ['event id a number', shaped((e) => (e.id = 12345))],
      ['event id empty', shaped((e) => (e.id = ''))],
      ['event without type', shaped((e) => delete e.type)],
      ['event type a number', shaped((e) => (e.type = 3))],
      ['event without created', shaped((e) => delete e.created)],
      ['event created a string', shaped((e) => (e.created = 'now'))],
      ['body null', 'null'],
      ['body a list', JSON.stringify([upgrade()])],
      ['body a string', JSON.stringify('customer.subscription.updated')],
      ['body a number', '42'],
    ];

    const before = {
      row: await subRow(org.id),
      plan: await orgPlan(org.id),
      events: await eventsOf(t, org.id),
      processed: await billingEventIds(),
      billing: await billingData(org.id),
    };
    expect(before.billing.plan.name).toBe('Pro');
    const gets = fake.requests.length;
    for (const [label, body] of cases) {
      const payload = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
      const { headers } = fake.signedRaw(payload);
      const res = await post(payload, headers);
      expect(res.statusCode, `${label}: ${res.body}`).toBe(400);
      // The details name the field, as for a request body.
      expect(expectError(res, 400, 'VALIDATION_ERROR').details, label).toMatch(
        /^(\(root\)|[a-z_]+(\.[a-z_0-9]+)*): (is required|must )/,
      );
    }
    expect(fake.requests.length, 'nothing is asked of Stripe for a malformed event').toBe(gets);
    expect(await subRow(org.id)).toEqual(before.row);
    expect(await orgPlan(org.id)).toBe(before.plan);
    expect(await eventsOf(t, org.id)).toEqual(before.events);
    expect(await billingEventIds()).toEqual(before.processed);
    expect(await billingData(org.id)).toEqual(before.billing);

    // The well-formed event still applies afterwards.
    await deliverOk(shaped(() => {}));
    expect((await billingData(org.id)).plan.name).toBe('Enterprise');
  });

  it('events of types it does not act on are still acknowledged with 200 and recorded once, whatever their object', async () => {
    const { org } = await subscribed('price_pro');
    const before = { row: await subRow(org.id), events: await eventsOf(t, org.id) };
    const unhandled = [
      fake.event('invoice.paid', { id: 'in_1', object: 'invoice', customer: 'cus_x' }),
      fake.event('invoice.payment_failed', { object: 'invoice', amount_due: 'lots' }),
      fake.event('charge.refunded', {}),
      fake.event('product.deleted', { id: 42, items: 'none' }),
    ];
    for (const event of unhandled) await deliverOk(event);
    // A checkout without a subscription (a one-off payment) changes nothing either.
    await deliverOk(
      fake.event('checkout.session.completed', {
        id: 'cs_test_pay',
        object: 'checkout.session',
        mode: 'payment',
        subscription: null,
      }),
    );
    for (const event of unhandled) {
      const again = await deliver(event);
      expect(again.statusCode, again.body).toBe(200);
      expect(json(again)).toEqual({ received: true, duplicate: true });
    }
    expect(await subRow(org.id)).toEqual(before.row);
    expect(await eventsOf(t, org.id)).toEqual(before.events);
    expect((await billingData(org.id)).plan.name).toBe('Pro');
  });
});

describe('the provider in use', () => {
  it('with BILLING_PROVIDER=test, a Stripe key left in the environment does not open the Stripe webhook (404)', async () => {
    const testProvider = await createTestApp({
      env: {
        STRIPE_SECRET_KEY: 'sk_test_x',
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_API_BASE: fake.url,
        BILLING_PROVIDER: 'test',
        WEBHOOK_WORKER: 'off',
      },
    });
    try {
      const { payload, headers } = fake.signed({
        id: 'evt_leftover',
        type: 'customer.subscription.updated',
        created: nowS(),
        data: { object: {} },
      });
      const res = await testProvider.request({ method: 'POST', url: '/api/v1/billing/webhook', headers, payload });
      expectError(res, 404, 'NOT_FOUND');
    } finally {
      await testProvider.close();
    }
  });
});
