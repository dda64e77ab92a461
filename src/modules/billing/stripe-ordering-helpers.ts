// The shared set-up of the tests of Stripe events that arrive in an unhelpful order or shape
// (stripe-ended.test.ts, stripe-event-shapes.test.ts): an app on its own database talking to the
// local Stripe server (test/stripe-server.ts), one signed-in owner, and the deliveries and reads.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { createOrg, eventsOf, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { type FakeStripe, startFakeStripe, WEBHOOK_SECRET } from '../../../test/stripe-server.js';

export let t: TestApp;
export let fake: FakeStripe;
export let owner: SignedInUser;

export type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const URLS = { successUrl: 'http://app.test/billing/done', cancelUrl: 'http://app.test/billing' };
export const nowS = () => Math.floor(Date.now() / 1000);

export function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  const body = json(res);
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(typeof body.error.details).toBe('string');
  return body;
}

export const post = (payload: string, headers: Record<string, string>) => t.request({ method: 'POST', url: '/api/v1/billing/webhook', headers, payload });
export const deliver = (event: Obj) => {
  const { payload, headers } = fake.signed(event);
  return post(payload, headers);
};
export async function deliverOk(event: Obj) {
  const res = await deliver(event);
  expect(res.statusCode, res.body).toBe(200);
  expect(json(res)).toEqual({ received: true, duplicate: false });
}

export async function billingData(orgId: string) {
  const res = await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing`, headers: owner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Obj;
}
export const checkout = (orgId: string, priceId = 'price_pro') =>
  t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/billing/checkout`, headers: owner.auth, payload: { priceId, ...URLS } });
export const subRow = async (orgId: string) => (await queryRows<Obj>(t, sql`select * from subscriptions where organization_id = ${orgId}`))[0];
export const orgPlan = async (orgId: string) => (await queryRows<Obj>(t, sql`select plan from organizations where id = ${orgId}`))[0]!.plan as string;
export const billingEventIds = async () => (await queryRows<{ id: string }>(t, sql`select id from billing_events order by id`)).map((r) => r.id);
export const billingTypes = async (orgId: string) => (await eventsOf(t, orgId)).map((e) => e.type as string).filter((type) => type.startsWith('billing.'));

/** An organization on `price` through a checkout completed at the fake Stripe and its signed event. */
export async function subscribed(price = 'price_pro') {
  const org = await createOrg(t, owner);
  const res = await checkout(org.id, price);
  expect(res.statusCode, res.body).toBe(200);
  const session = fake.completeCheckout(json(res).data.sessionId);
  await deliverOk(fake.event('checkout.session.completed', session));
  const sub = fake.subscriptions.get(session.subscription)!;
  expect((await billingData(org.id)).subscription.id).toBe(sub.id);
  return { org, session, sub, customer: session.customer as string };
}

export const withPrice = (sub: Obj, price: string) => {
  sub.items.data[0].price = { ...sub.items.data[0].price, id: price };
  return sub;
};

/** Free, no subscription, ended: what an organization whose subscription ended shows. */
export async function expectEnded(orgId: string) {
  const data = await billingData(orgId);
  expect(data.plan.name).toBe('Free');
  expect(data.status).toBe('canceled');
  expect(data.subscription).toBeNull();
  expect(await orgPlan(orgId)).toBe('free');
  expect(await subRow(orgId)).toMatchObject({ plan: 'free', status: 'canceled', subscription_id: null, price_id: null });
}

/** The app of the file and its hooks: call once at the top of each test file. */
export function useStripeOrderingApp() {
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
}
