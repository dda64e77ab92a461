// The shared set-up of the Stripe billing tests (stripe-checkout, -webhook and -cancel.test.ts): an app on its own database
// that talks to a local server speaking the Stripe API (test/stripe-server.ts), four signed-in
// accounts, and the calls and event deliveries the tests make.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { createOrg, eventsOf, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { type FakeStripe, startFakeStripe, WEBHOOK_SECRET } from '../../../test/stripe-server.js';

export let t: TestApp;
export let fake: FakeStripe;
export let owner: SignedInUser;
export let memberUser: SignedInUser;
export let viewerUser: SignedInUser;
export let outsider: SignedInUser;

export type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const APP = 'http://app.test';
export const URLS = { successUrl: `${APP}/billing/done?session={CHECKOUT_SESSION_ID}`, cancelUrl: `${APP}/billing` };
export const nowS = () => Math.floor(Date.now() / 1000);

export function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  const body = json(res);
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  return body;
}

export const billingOf = (orgId: string, headers: Record<string, string> = owner.auth) => t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing`, headers });
export async function billingData(orgId: string) {
  const res = await billingOf(orgId);
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Obj;
}
export const checkout = (orgId: string, payload: Obj = { priceId: 'price_pro', ...URLS }, headers: Record<string, string> = owner.auth) =>
  t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/billing/checkout`, headers, payload });
export const portal = (orgId: string, returnUrl: string, headers: Record<string, string> = owner.auth) =>
  t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing/portal?return_url=${encodeURIComponent(returnUrl)}`, headers });
export const cancel = (orgId: string, headers: Record<string, string> = owner.auth) => t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/billing/cancel`, headers });

export function deliver(event: Obj) {
  const { payload, headers } = fake.signed(event);
  return t.request({ method: 'POST', url: '/api/v1/billing/webhook', headers, payload });
}
export async function deliverOk(event: Obj, duplicate = false) {
  const res = await deliver(event);
  expect(res.statusCode, res.body).toBe(200);
  expect(json(res)).toEqual({ received: true, duplicate });
}

export const subRow = async (orgId: string) => (await queryRows<Obj>(t, sql`select * from subscriptions where organization_id = ${orgId}`))[0];
export const eventTypes = async (orgId: string) => (await eventsOf(t, orgId)).map((e) => e.type as string);

/** An organization on Pro (or `price`) through a checkout completed at the fake Stripe and its signed event. */
export async function subscribed(price = 'price_pro', by: SignedInUser = owner) {
  const org = await createOrg(t, by);
  const res = await checkout(org.id, { priceId: price, ...URLS }, by.auth);
  expect(res.statusCode, res.body).toBe(200);
  const session = fake.completeCheckout(json(res).data.sessionId);
  await deliverOk(fake.event('checkout.session.completed', session));
  const sub = fake.subscriptions.get(session.subscription)!;
  return { org, session, sub, customer: session.customer as string };
}

export const periodEndIso = (sub: Obj) => new Date(sub.items.data[0].current_period_end * 1000).toISOString();
export const withPrice = (sub: Obj, price: string) => {
  sub.items.data[0].price = { ...sub.items.data[0].price, id: price };
  return sub;
};

/** The app of the file and its hooks: call once at the top of each test file. */
export function useStripeApp() {
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
}
