// Stripe events that arrive in an unhelpful order or shape, through the webhook route with events
// signed the way Stripe signs them (test/stripe-server.ts). A subscription that ended stays ended:
// nothing sent for its id afterwards, whatever its timestamp or order of arrival, gives the paid plan
// back; only a new subscription does. A correctly signed event of an unexpected shape is refused
// with 400 VALIDATION_ERROR and changes nothing.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOrg, eventsOf, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { type FakeStripe, startFakeStripe, WEBHOOK_SECRET } from '../../../test/stripe-server.js';

let t: TestApp;
let fake: FakeStripe;
let owner: SignedInUser;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

beforeAll(async () => {
  fake = await startFakeStripe();
  t = await createTestApp({
    env: { STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: fake.url, WEBHOOK_WORKER: 'off' },
  });
  owner = await signedInUser(t, 'order-owner');
}, 180_000);
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
beforeEach(() => fake.recover());

const URLS = { successUrl: 'http://app.test/billing/done', cancelUrl: 'http://app.test/billing' };
const nowS = () => Math.floor(Date.now() / 1000);

function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  const body = json(res);
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(typeof body.error.details).toBe('string');
  return body;
}

const post = (payload: string, headers: Record<string, string>) => t.request({ method: 'POST', url: '/api/v1/billing/webhook', headers, payload });
const deliver = (event: Obj) => {
  const { payload, headers } = fake.signed(event);
  return post(payload, headers);
};
async function deliverOk(event: Obj) {
  const res = await deliver(event);
  expect(res.statusCode, res.body).toBe(200);
  expect(json(res)).toEqual({ received: true, duplicate: false });
}

async function billingData(orgId: string) {
  const res = await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing`, headers: owner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Obj;
}
const checkout = (orgId: string, priceId = 'price_pro') =>
  t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/billing/checkout`, headers: owner.auth, payload: { priceId, ...URLS } });
const subRow = async (orgId: string) => (await queryRows<Obj>(t, sql`select * from subscriptions where organization_id = ${orgId}`))[0];
const orgPlan = async (orgId: string) => (await queryRows<Obj>(t, sql`select plan from organizations where id = ${orgId}`))[0]!.plan as string;
const billingEventIds = async () => (await queryRows<{ id: string }>(t, sql`select id from billing_events order by id`)).map((r) => r.id);
const billingTypes = async (orgId: string) => (await eventsOf(t, orgId)).map((e) => e.type as string).filter((type) => type.startsWith('billing.'));

/** An organization on `price` through a checkout completed at the fake Stripe and its signed event. */
async function subscribed(price = 'price_pro') {
  const org = await createOrg(t, owner);
  const res = await checkout(org.id, price);
  expect(res.statusCode, res.body).toBe(200);
  const session = fake.completeCheckout(json(res).data.sessionId);
  await deliverOk(fake.event('checkout.session.completed', session));
  const sub = fake.subscriptions.get(session.subscription)!;
  expect((await billingData(org.id)).subscription.id).toBe(sub.id);
  return { org, session, sub, customer: session.customer as string };
}

const withPrice = (sub: Obj, price: string) => {
  sub.items.data[0].price = { ...sub.items.data[0].price, id: price };
  return sub;
};

/** Free, no subscription, ended: what an organization whose subscription ended shows. */
async function expectEnded(orgId: string) {
  const data = await billingData(orgId);
  expect(data.plan.name).toBe('Free');
  expect(data.status).toBe('canceled');
  expect(data.subscription).toBeNull();
  expect(await orgPlan(orgId)).toBe('free');
  expect(await subRow(orgId)).toMatchObject({ plan: 'free', status: 'canceled', subscription_id: null, price_id: null });
}

describe('a subscription that ended is terminal', () => {
  it('an update (active) stamped the same second as the deletion, or later, does not bring the paid plan back', async () => {
    const { org, sub, session } = await subscribed('price_enterprise');
    const at = nowS() + 1;
    await deliverOk(fake.event('customer.subscription.deleted', { ...sub, status: 'canceled', ended_at: at }, { created: at }));
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
        deliver(fake.event('customer.subscription.updated', { ...withPrice(structuredClone(sub), 'price_enterprise'), status: 'active' }, { created: at })),
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
    expect((await eventsOf(t, org.id)).at(-1)).toMatchObject({ type: 'billing.updated', data: { plan: 'pro', subscriptionId: next.id } });

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

describe('signed events of an unexpected shape', () => {
  it('answer 400 VALIDATION_ERROR and change nothing (plan, subscription row, events, processed ids)', async () => {
    const { org, sub, customer } = await subscribed('price_pro');
    // Each would move the organization to Enterprise (or end it) if it were applied.
    const upgrade = () => fake.event('customer.subscription.updated', { ...structuredClone(sub), items: { ...structuredClone(sub.items) } }, { created: nowS() + 5 });
    const shaped = (fn: (e: Obj, o: Obj) => void, event: Obj = upgrade()) => {
      if (event.data?.object?.items?.data?.[0]?.price) event.data.object.items.data[0].price.id = 'price_enterprise';
      fn(event, event.data?.object);
      return event;
    };
    const otherSession = { id: 'cs_test_other', object: 'checkout.session', mode: 'subscription', customer, subscription: sub.id, status: 'complete' };
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
      ['a deletion without subscription id', shaped((_e, o) => delete o.id, fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: nowS() + 5 }))],
      ['a deletion without data.object', shaped((e) => (e.data = {}), fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: nowS() + 5 }))],
      ['a checkout session whose subscription is a number', fake.event('checkout.session.completed', { ...otherSession, subscription: 42 })],
      ['a checkout session whose subscription is an object', fake.event('checkout.session.completed', { ...otherSession, subscription: { status: 'active' } })],
      ['a checkout session without data.object', shaped((e) => (e.data = {}), fake.event('checkout.session.completed', otherSession))],
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

    const before = { row: await subRow(org.id), plan: await orgPlan(org.id), events: await eventsOf(t, org.id), processed: await billingEventIds(), billing: await billingData(org.id) };
    expect(before.billing.plan.name).toBe('Pro');
    const gets = fake.requests.length;
    for (const [label, body] of cases) {
      const payload = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
      const { headers } = fake.signedRaw(payload);
      const res = await post(payload, headers);
      expect(res.statusCode, `${label}: ${res.body}`).toBe(400);
      // The details name the field, as for a request body.
      expect(expectError(res, 400, 'VALIDATION_ERROR').error.details, label).toMatch(/^(\(root\)|[a-z_]+(\.[a-z_0-9]+)*): (is required|must )/);
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
    await deliverOk(fake.event('checkout.session.completed', { id: 'cs_test_pay', object: 'checkout.session', mode: 'payment', subscription: null }));
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
      env: { STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: fake.url, BILLING_PROVIDER: 'test', WEBHOOK_WORKER: 'off' },
    });
    try {
      const { payload, headers } = fake.signed({ id: 'evt_leftover', type: 'customer.subscription.updated', created: nowS(), data: { object: {} } });
      const res = await testProvider.request({ method: 'POST', url: '/api/v1/billing/webhook', headers, payload });
      expectError(res, 404, 'NOT_FOUND');
    } finally {
      await testProvider.close();
    }
  });
});
