// Billing through Stripe (issue 7; spec §2.9, §4.5, §8; DECISIONS §6), against a local server that
// speaks the Stripe API the official `stripe` package calls (test/stripe-server.ts), with events
// signed by the package's own test-header helper. Covers the billing read, checkout, portal, cancel,
// the verified and idempotent webhook (upgrade, plan change, duplicates, out-of-order events, end of
// the subscription), the limits switching with the plan, and organization deletion.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addMember, createOrg, eventsOf, setPlan, signedInUser, type SignedInUser, uniqueEmail } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { type FakeStripe, startFakeStripe, WEBHOOK_SECRET } from '../../../test/stripe-server.js';

let t: TestApp;
let fake: FakeStripe;
let owner: SignedInUser;
let memberUser: SignedInUser;
let viewerUser: SignedInUser;
let outsider: SignedInUser;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

beforeAll(async () => {
  fake = await startFakeStripe();
  t = await createTestApp({
    env: { STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: fake.url, WEBHOOK_WORKER: 'off' },
  });
  [owner, memberUser, viewerUser, outsider] = await Promise.all([
    signedInUser(t, 'bill-owner'),
    signedInUser(t, 'bill-member'),
    signedInUser(t, 'bill-viewer'),
    signedInUser(t, 'bill-outsider'),
  ]);
}, 180_000);
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
beforeEach(() => fake.recover());

const APP = 'http://app.test';
const URLS = { successUrl: `${APP}/billing/done?session={CHECKOUT_SESSION_ID}`, cancelUrl: `${APP}/billing` };
const nowS = () => Math.floor(Date.now() / 1000);

function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  const body = json(res);
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  return body;
}

const billingOf = (orgId: string, headers: Record<string, string> = owner.auth) => t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing`, headers });
async function billingData(orgId: string) {
  const res = await billingOf(orgId);
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Obj;
}
const checkout = (orgId: string, payload: Obj = { priceId: 'price_pro', ...URLS }, headers: Record<string, string> = owner.auth) =>
  t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/billing/checkout`, headers, payload });
const portal = (orgId: string, returnUrl: string, headers: Record<string, string> = owner.auth) =>
  t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing/portal?return_url=${encodeURIComponent(returnUrl)}`, headers });
const cancel = (orgId: string, headers: Record<string, string> = owner.auth) => t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/billing/cancel`, headers });

function deliver(event: Obj) {
  const { payload, headers } = fake.signed(event);
  return t.request({ method: 'POST', url: '/api/v1/billing/webhook', headers, payload });
}
async function deliverOk(event: Obj, duplicate = false) {
  const res = await deliver(event);
  expect(res.statusCode, res.body).toBe(200);
  expect(json(res)).toEqual({ received: true, duplicate });
}

const subRow = async (orgId: string) => (await queryRows<Obj>(t, sql`select * from subscriptions where organization_id = ${orgId}`))[0];
const eventTypes = async (orgId: string) => (await eventsOf(t, orgId)).map((e) => e.type as string);

/** An organization on Pro (or `price`) through a checkout completed at the fake Stripe and its signed event. */
async function subscribed(price = 'price_pro', by: SignedInUser = owner) {
  const org = await createOrg(t, by);
  const res = await checkout(org.id, { priceId: price, ...URLS }, by.auth);
  expect(res.statusCode, res.body).toBe(200);
  const session = fake.completeCheckout(json(res).data.sessionId);
  await deliverOk(fake.event('checkout.session.completed', session));
  const sub = fake.subscriptions.get(session.subscription)!;
  return { org, session, sub, customer: session.customer as string };
}

const periodEndIso = (sub: Obj) => new Date(sub.items.data[0].current_period_end * 1000).toISOString();
const withPrice = (sub: Obj, price: string) => {
  sub.items.data[0].price = { ...sub.items.data[0].price, id: price };
  return sub;
};

describe('GET /organizations/:orgId/billing', () => {
  it('answers every member, viewer included, with the Free plan of a new organization; non-members get 403', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, memberUser, 'member');
    await addMember(t, org.id, owner, viewerUser, 'viewer');
    for (const who of [owner, memberUser, viewerUser]) {
      const res = await billingOf(org.id, who.auth);
      expect(res.statusCode, res.body).toBe(200);
      expect(json(res)).toEqual({
        success: true,
        data: {
          plan: { name: 'Free', limits: { members: 3, apiRequests: 10000, storage: 1073741824 } },
          status: 'active',
          subscription: null,
          usage: { period: '2026-03', apiRequests: 0 },
        },
      });
    }
    expectError(await billingOf(org.id, outsider.auth), 403, 'AUTHORIZATION_ERROR');
    expectError(await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}/billing` }), 401, 'AUTHENTICATION_ERROR');
  });

  it('shows the limits of Pro and Enterprise (null: unlimited)', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    expect((await billingData(org.id)).plan).toEqual({ name: 'Pro', limits: { members: 25, apiRequests: 100000, storage: 10737418240 } });
    await setPlan(t, org.id, 'enterprise');
    expect((await billingData(org.id)).plan).toEqual({ name: 'Enterprise', limits: { members: null, apiRequests: null, storage: null } });
  });

  it('is readable with an API key that has read:billing, not without it', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    const key = async (scopes: string[]) => {
      const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/api-keys`, headers: owner.auth, payload: { name: 'b', scopes } });
      expect(res.statusCode, res.body).toBe(201);
      return json(res).plainKey as string;
    };
    const withScope = await key(['read:billing']);
    const without = await key(['read:projects', 'read:members']);
    const ok = await billingOf(org.id, { 'x-api-key': withScope });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(json(ok).data.plan.name).toBe('Enterprise');
    expect(json(ok).data.usage.apiRequests).toBe(0);
    const bearer = await billingOf(org.id, { authorization: `Bearer ${withScope}` });
    expect(bearer.statusCode, bearer.body).toBe(200);
    expectError(await billingOf(org.id, { 'x-api-key': without }), 403, 'AUTHORIZATION_ERROR');
    // The key's own requests are the month's API usage (two successful, one refused, all with keys).
    expect((await billingData(org.id)).usage.apiRequests).toBeGreaterThanOrEqual(2);
    // A key never manages billing, whatever its scopes.
    expectError(await checkout(org.id, undefined, { 'x-api-key': withScope }), 403, 'AUTHORIZATION_ERROR');
  });
});

describe('POST /organizations/:orgId/billing/checkout', () => {
  it('needs billing:manage: members and viewers get 403, non-members 403, and nothing reaches Stripe', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, memberUser, 'member');
    await addMember(t, org.id, owner, viewerUser, 'viewer');
    const before = fake.requests.length;
    expectError(await checkout(org.id, undefined, memberUser.auth), 403, 'AUTHORIZATION_ERROR');
    expectError(await checkout(org.id, undefined, viewerUser.auth), 403, 'AUTHORIZATION_ERROR');
    expectError(await checkout(org.id, undefined, outsider.auth), 403, 'AUTHORIZATION_ERROR');
    expect(fake.requests.length).toBe(before);
    expect(await subRow(org.id)).toBeUndefined();
  });

  it('refuses an unknown priceId and URLs off APP_ORIGIN with 400, calling nothing at Stripe', async () => {
    const org = await createOrg(t, owner);
    const before = fake.requests.length;
    const unknown = expectError(await checkout(org.id, { priceId: 'price_gold', ...URLS }), 400, 'VALIDATION_ERROR');
    expect(unknown.error.details).toMatch(/priceId/);
    const bad = [
      'http://app.test.evil.com/billing', // prefix trick
      'http://app.test@evil.com/billing', // userinfo trick
      'https://app.test/billing', // another scheme
      'http://app.test:8080/billing', // another port
      'http://evil.com/?next=http://app.test/',
      'not a url',
      '/billing/done', // relative
      'javascript:alert(1)',
    ];
    for (const url of bad) {
      for (const field of ['successUrl', 'cancelUrl'] as const) {
        const res = await checkout(org.id, { priceId: 'price_pro', ...URLS, [field]: url });
        const body = expectError(res, 400, 'VALIDATION_ERROR');
        expect(body.error.details, `${field} = ${url}`).toMatch(field);
      }
    }
    expectError(await checkout(org.id, { priceId: 'price_pro', successUrl: URLS.successUrl }), 400, 'VALIDATION_ERROR');
    expectError(await checkout(org.id, { priceId: 'price_pro', ...URLS, extra: 1 }), 400, 'VALIDATION_ERROR');
    expect(fake.requests.length).toBe(before);
    expect(await subRow(org.id)).toBeUndefined();
  });

  it('creates one Stripe customer per organization and a subscription Checkout Session for the price', async () => {
    const org = await createOrg(t, owner, { name: 'Checkout Co' });
    const res = await checkout(org.id);
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    const session = [...fake.sessions.values()].find((s) => s.id === body.data.sessionId)!;
    expect(body).toEqual({ success: true, data: { sessionId: session.id, url: session.url } });
    expect(session.url).toMatch(/^https:\/\/checkout\.stripe\.test\//);

    const [createdCustomer] = fake.calls('POST', '/v1/customers').filter((r) => (r.params.metadata as Obj)?.organizationId === org.id);
    expect(createdCustomer!.params).toMatchObject({ name: 'Checkout Co', metadata: { organizationId: org.id } });
    expect(createdCustomer!.headers.authorization).toBe('Bearer sk_test_x');
    const sessionCall = fake.calls('POST', '/v1/checkout/sessions').find((r) => (r.params.metadata as Obj)?.organizationId === org.id)!;
    expect(sessionCall.params).toMatchObject({
      mode: 'subscription',
      customer: session.customer,
      line_items: [{ price: 'price_pro', quantity: '1' }],
      success_url: URLS.successUrl,
      cancel_url: URLS.cancelUrl,
      client_reference_id: org.id,
    });
    expect(await subRow(org.id)).toMatchObject({ customer_id: session.customer, subscription_id: null, plan: 'free' });

    // A second checkout (another plan) reuses the customer.
    const customersBefore = fake.calls('POST', '/v1/customers').length;
    const again = await checkout(org.id, { priceId: 'price_enterprise', ...URLS });
    expect(again.statusCode, again.body).toBe(200);
    expect(fake.calls('POST', '/v1/customers').length).toBe(customersBefore);
    expect(fake.sessions.get(json(again).data.sessionId)!.customer).toBe(session.customer);
    // Nothing changed on the plan until the payment completes.
    expect((await billingData(org.id)).plan.name).toBe('Free');
  });

  it('creates one customer even when checkouts of one organization run in parallel', async () => {
    const org = await createOrg(t, owner);
    const results = await Promise.all(Array.from({ length: 4 }, () => checkout(org.id)));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    const customers = fake.calls('POST', '/v1/customers').filter((r) => (r.params.metadata as Obj)?.organizationId === org.id);
    expect(customers).toHaveLength(1);
    const used = new Set(results.map((r) => fake.sessions.get(json(r).data.sessionId)!.customer));
    expect([...used]).toEqual([(await subRow(org.id))!.customer_id]);
  });

  it('answers 502 PAYMENT_PROVIDER_ERROR when Stripe fails, with nothing changed locally', async () => {
    const org = await createOrg(t, owner);
    // The customer cannot be created: no local row.
    fake.failNext(500, { path: /^\/v1\/customers$/ });
    expectError(await checkout(org.id), 502, 'PAYMENT_PROVIDER_ERROR');
    expect(await subRow(org.id)).toBeUndefined();
    // A card error (402) is a provider failure too.
    fake.failNext(402, { path: /^\/v1\/customers$/ });
    expectError(await checkout(org.id), 502, 'PAYMENT_PROVIDER_ERROR');
    expect(await subRow(org.id)).toBeUndefined();

    // With a customer: the session cannot be created; the row stays as it was.
    expect((await checkout(org.id)).statusCode).toBe(200);
    const row = await subRow(org.id);
    const events = await eventTypes(org.id);
    fake.failNext(500, { path: /^\/v1\/checkout\/sessions$/, times: 5, retryable: true });
    const failed = await checkout(org.id);
    const body = expectError(failed, 502, 'PAYMENT_PROVIDER_ERROR');
    expect(JSON.stringify(body)).not.toMatch(/sk_test_x/);
    expect(await subRow(org.id)).toEqual(row);
    expect(await eventTypes(org.id)).toEqual(events);
    expect((await billingData(org.id)).plan.name).toBe('Free');
  });

  it('refuses a second subscription while one is paid (409): plan changes go through the portal', async () => {
    const { org } = await subscribed();
    const sessionsBefore = fake.calls('POST', '/v1/checkout/sessions').length;
    expectError(await checkout(org.id, { priceId: 'price_enterprise', ...URLS }), 409, 'CONFLICT');
    expect(fake.calls('POST', '/v1/checkout/sessions').length).toBe(sessionsBefore);
  });
});

describe('GET /organizations/:orgId/billing/portal', () => {
  it('checks return_url and billing:manage, then returns the Stripe portal url', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, memberUser, 'member');
    const before = fake.requests.length;
    expectError(await portal(org.id, `${APP}/settings`, memberUser.auth), 403, 'AUTHORIZATION_ERROR');
    for (const bad of ['http://app.test.evil.com/settings', 'https://app.test/settings', 'nope', 'http://evil.com']) {
      const body = expectError(await portal(org.id, bad), 400, 'VALIDATION_ERROR');
      expect(body.error.details).toMatch(/return_url/);
    }
    expectError(await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}/billing/portal`, headers: owner.auth }), 400, 'VALIDATION_ERROR');
    expect(fake.requests.length).toBe(before);

    const res = await portal(org.id, `${APP}/settings/billing`);
    expect(res.statusCode, res.body).toBe(200);
    const created = fake.calls('POST', '/v1/billing_portal/sessions').at(-1)!;
    const customer = (await subRow(org.id))!.customer_id;
    expect(created.params).toEqual({ customer, return_url: `${APP}/settings/billing` });
    const session = [...fake.portals.values()].find((p) => p.customer === customer)!;
    expect(json(res)).toEqual({ success: true, data: { url: session.url } });
  });

  it('answers 502 when Stripe fails', async () => {
    const { org } = await subscribed();
    const row = await subRow(org.id);
    fake.failNext(500, { path: /^\/v1\/billing_portal\/sessions$/ });
    expectError(await portal(org.id, `${APP}/settings`), 502, 'PAYMENT_PROVIDER_ERROR');
    expect(await subRow(org.id)).toEqual(row);
  });
});

describe('POST /billing/webhook', () => {
  const post = (payload: string, headers: Record<string, string>) => t.request({ method: 'POST', url: '/api/v1/billing/webhook', headers, payload });

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
    const stale = new Stripe('sk_test_x').webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: nowS() - 3600 });
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
    await deliverOk(fake.event('customer.subscription.updated', withPrice(sub, 'price_enterprise'), { created: nowS() + 1 }));
    const data = await billingData(org.id);
    expect(data.plan).toEqual({ name: 'Enterprise', limits: { members: null, apiRequests: null, storage: null } });
    expect(data.subscription).toEqual({ id: sub.id, currentPeriodEnd: periodEndIso(sub), cancelAtPeriodEnd: false });
    const last = (await eventsOf(t, org.id)).at(-1)!;
    expect(last.type).toBe('billing.updated');
    expect(last.data).toMatchObject({ plan: 'enterprise', subscriptionId: sub.id });
  });

  it('mirrors the provider status: past_due keeps the plan, unpaid returns to Free', async () => {
    const { org, sub } = await subscribed();
    await deliverOk(fake.event('customer.subscription.updated', { ...sub, status: 'past_due' }, { created: nowS() + 1 }));
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
    const event = fake.event('customer.subscription.updated', withPrice(sub, 'price_enterprise'), { created: nowS() + 1 });
    const before = (await eventsOf(t, org.id)).length;
    await deliverOk(event);
    await deliverOk(event, true);
    const after = await eventsOf(t, org.id);
    expect(after.length).toBe(before + 1);
    expect(await queryRows(t, sql`select id from billing_events where id = ${event.id}`)).toHaveLength(1);
  });

  it('processes concurrent duplicates once', async () => {
    const { org, sub } = await subscribed();
    const event = fake.event('customer.subscription.updated', withPrice(sub, 'price_enterprise'), { created: nowS() + 1 });
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
    const newer = fake.event('customer.subscription.updated', { ...withPrice(structuredClone(sub), 'price_enterprise'), cancel_at_period_end: true }, { created: base + 20 });
    const older = fake.event('customer.subscription.updated', withPrice(structuredClone(sub), 'price_pro'), { created: base + 10 });
    await deliverOk(newer);
    const eventsBefore = (await eventsOf(t, org.id)).length;
    await deliverOk(older);
    const data = await billingData(org.id);
    expect(data.plan.name).toBe('Enterprise');
    expect(data.subscription.cancelAtPeriodEnd).toBe(true);
    expect((await eventsOf(t, org.id)).length).toBe(eventsBefore);
    // A deletion is not an older state but the end: it applies whatever its timestamp
    // (stripe-ordering.test.ts covers ended subscriptions).
    await deliverOk(fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: base + 15 }));
    expect((await billingData(org.id)).plan.name).toBe('Free');
  });

  it('customer.subscription.deleted returns the organization to Free and records billing.canceled', async () => {
    const { org, sub } = await subscribed();
    await deliverOk(fake.event('customer.subscription.deleted', { ...sub, status: 'canceled', ended_at: nowS() }, { created: nowS() + 1 }));
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
    await deliverOk(fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: nowS() + 2 }));
    const data = await billingData(org.id);
    expect(data.plan.name).toBe('Enterprise');
    expect(data.subscription.id).toBe(second.id);
    // The second one ending does.
    await deliverOk(fake.event('customer.subscription.deleted', { ...second, status: 'canceled' }, { created: nowS() + 3 }));
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
    const inviteRes = (email: string) => t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/invitations`, headers: owner.auth, payload: { email, role: 'member' } });
    const keyRes = (n: number) => t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/api-keys`, headers: owner.auth, payload: { name: `k${n}`, scopes: ['read:projects'] } });
    const hookRes = (n: number) =>
      t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/webhooks`, headers: owner.auth, payload: { url: `https://example.com/hook/${n}`, events: ['member.added'] } });

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
    await deliverOk(fake.event('customer.subscription.updated', withPrice(sub, 'price_enterprise'), { created: nowS() + 1 }));
    expect((await hookRes(11)).statusCode).toBe(201);

    // The subscription ends: back to Free, nothing new beyond Free's limits.
    await deliverOk(fake.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: nowS() + 2 }));
    expectError(await inviteRes(uniqueEmail('seat')), 402, 'PLAN_LIMIT_EXCEEDED');
    expectError(await keyRes(12), 402, 'PLAN_LIMIT_EXCEEDED');
    expectError(await hookRes(12), 402, 'PLAN_LIMIT_EXCEEDED');
  }, 120_000);
});

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
    await deliverOk(fake.event('customer.subscription.updated', fake.subscriptions.get(sub.id)!, { created: nowS() + 1 }));
    expect((await billingData(org.id)).subscription.cancelAtPeriodEnd).toBe(true);
    // End of period.
    await deliverOk(fake.event('customer.subscription.deleted', { ...fake.subscriptions.get(sub.id)!, status: 'canceled' }, { created: nowS() + 2 }));
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
  const del = (orgId: string) => t.request({ method: 'DELETE', url: `/api/v1/organizations/${orgId}`, headers: owner.auth });

  it('cancels the subscription at Stripe', async () => {
    const { org, sub } = await subscribed();
    const res = await del(org.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(fake.calls('DELETE', `/v1/subscriptions/${sub.id}`)).toHaveLength(1);
    expect(fake.subscriptions.get(sub.id)!.status).toBe('canceled');
    expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}`, headers: owner.auth })).statusCode).toBe(404);
    // Stripe's deletion event for it arrives afterwards and is acknowledged.
    await deliverOk(fake.event('customer.subscription.deleted', fake.subscriptions.get(sub.id)!, { created: nowS() + 1 }));
  });

  it('answers 502 when Stripe fails, and the organization still exists', async () => {
    const { org, sub } = await subscribed();
    fake.failNext(500, { path: /^\/v1\/subscriptions\//, times: 5, retryable: true });
    expectError(await del(org.id), 502, 'PAYMENT_PROVIDER_ERROR');
    fake.recover();
    expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}`, headers: owner.auth })).statusCode).toBe(200);
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
    expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}`, headers: owner.auth })).statusCode).toBe(200);
  });

  it('calls nothing at Stripe for an organization without a subscription', async () => {
    const org = await createOrg(t, owner);
    expect((await checkout(org.id)).statusCode).toBe(200);
    const before = fake.requests.length;
    expect((await del(org.id)).statusCode).toBe(200);
    expect(fake.requests.length).toBe(before);
  });
});
