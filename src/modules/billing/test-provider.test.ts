// The built-in test payment provider (no STRIPE_SECRET_KEY; docs/api.md#test-payment-provider): checkout returns a
// page of the service where a person completes or cancels the payment, as a browser would (plain HTML
// forms: urlencoded, empty body); completing applies the same change a Stripe event would.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrg, eventsOf, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { expectError } from '../../../test/expect.js';

let owner: SignedInUser;

useApp({ env: { WEBHOOK_WORKER: 'off' } });
beforeAll(async () => {
  owner = await signedInUser(t, 'testpay');
}, 120_000);

const APP = 'http://app.test';
const URLS = { successUrl: `${APP}/billing/thanks`, cancelUrl: `${APP}/billing?canceled=1` };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const billing = async (orgId: string) => {
  const res = await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing`, headers: owner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data;
};
async function startCheckout(orgId: string, priceId = 'price_pro') {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/billing/checkout`,
    headers: owner.auth,
    payload: { priceId, ...URLS },
  });
  expect(res.statusCode, res.body).toBe(200);
  const { sessionId, url } = json(res).data as { sessionId: string; url: string };
  return { sessionId, url, path: new URL(url).pathname };
}
/** What a browser sends for `<form method="post">` without fields. */
const submit = (path: string) => t.request({ method: 'POST', url: path, headers: FORM, payload: '' });

describe('the test provider', () => {
  it('checkout returns a page of the service with the complete and cancel forms', async () => {
    const org = await createOrg(t, owner);
    const { sessionId, url, path } = await startCheckout(org.id);
    expect(url).toBe(`${t.deps.config.publicApiUrl}/api/v1/billing/test-checkout/${sessionId}`);
    const page = await t.request({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain(`action="${path}/complete"`);
    expect(page.body).toContain(`action="${path}/cancel"`);
    expect(page.body).toContain(org.id);
    // No sign-in needed (the person is on a payment page); an unknown session is 404.
    expectError(
      await t.request({ method: 'GET', url: '/api/v1/billing/test-checkout/cs_test_nope' }),
      404,
      'NOT_FOUND',
    );
    expectError(await submit('/api/v1/billing/test-checkout/cs_test_nope/complete'), 404, 'NOT_FOUND');
  });

  it('completing, as a browser form posts it, upgrades the organization and redirects 303 to successUrl', async () => {
    const org = await createOrg(t, owner);
    const { path } = await startCheckout(org.id);
    const done = await submit(`${path}/complete`);
    expect(done.statusCode, done.body).toBe(303);
    expect(done.headers.location).toBe(URLS.successUrl);

    const data = await billing(org.id);
    expect(data.plan).toEqual({ name: 'Pro', limits: { members: 25, apiRequests: 100000, storage: 10737418240 } });
    expect(data.status).toBe('active');
    expect(data.subscription).toEqual({
      id: expect.stringMatching(/^sub_/),
      currentPeriodEnd: expect.any(String),
      cancelAtPeriodEnd: false,
    });
    expect(Date.parse(data.subscription.currentPeriodEnd)).toBeGreaterThan(t.clock.now().getTime());
    const [org_] = await queryRows<{ plan: string }>(t, sql`select plan from organizations where id = ${org.id}`);
    expect(org_!.plan).toBe('pro');
    // The same event a Stripe upgrade records.
    const events = (await eventsOf(t, org.id)).filter((e) => e.type.startsWith('billing.'));
    expect(events.map((e) => e.type)).toEqual(['billing.updated']);
    expect(events[0]!.data).toEqual({
      organizationId: org.id,
      plan: 'pro',
      status: 'active',
      subscriptionId: data.subscription.id,
      currentPeriodEnd: data.subscription.currentPeriodEnd,
      cancelAtPeriodEnd: false,
    });

    // Completing twice: 409, nothing applied again.
    expectError(await submit(`${path}/complete`), 409, 'CONFLICT');
    expectError(await t.request({ method: 'POST', url: `${path}/complete` }), 409, 'CONFLICT');
    expect((await eventsOf(t, org.id)).filter((e) => e.type.startsWith('billing.'))).toHaveLength(1);
    const page = await t.request({ method: 'GET', url: path });
    expect(page.body).not.toContain('/complete"');
  });

  it('completes with no body and no content type too, and for the Enterprise price', async () => {
    const org = await createOrg(t, owner);
    const { path } = await startCheckout(org.id, 'price_enterprise');
    const done = await t.request({ method: 'POST', url: `${path}/complete` });
    expect(done.statusCode, done.body).toBe(303);
    expect((await billing(org.id)).plan.name).toBe('Enterprise');
  });

  it('cancel redirects to cancelUrl and changes nothing; the canceled checkout cannot be completed', async () => {
    const org = await createOrg(t, owner);
    const { path } = await startCheckout(org.id);
    const before = await billing(org.id);
    const canceled = await submit(`${path}/cancel`);
    expect(canceled.statusCode, canceled.body).toBe(303);
    expect(canceled.headers.location).toBe(URLS.cancelUrl);
    expect(await billing(org.id)).toEqual(before);
    expect(before.plan.name).toBe('Free');
    expect((await eventsOf(t, org.id)).filter((e) => e.type.startsWith('billing.'))).toEqual([]);
    expectError(await submit(`${path}/complete`), 409, 'CONFLICT');
    expect((await billing(org.id)).plan.name).toBe('Free');
  });

  it('parallel completions of one checkout apply it once', async () => {
    const org = await createOrg(t, owner);
    const { path } = await startCheckout(org.id);
    const results = await Promise.all(Array.from({ length: 4 }, () => submit(`${path}/complete`)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([303, 409, 409, 409]);
    expect((await eventsOf(t, org.id)).filter((e) => e.type === 'billing.updated')).toHaveLength(1);
  });

  it('drives cancel at period end, the portal and a refused second checkout through the same code path', async () => {
    const org = await createOrg(t, owner);
    const { path } = await startCheckout(org.id);
    expect((await submit(`${path}/complete`)).statusCode).toBe(303);
    const { subscription } = await billing(org.id);

    // A second checkout while subscribed: 409 (it would be a second subscription).
    const second = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/billing/checkout`,
      headers: owner.auth,
      payload: { priceId: 'price_enterprise', ...URLS },
    });
    expectError(second, 409, 'CONFLICT');

    const portal = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${org.id}/billing/portal?return_url=${encodeURIComponent(`${APP}/settings`)}`,
      headers: owner.auth,
    });
    expect(portal.statusCode, portal.body).toBe(200);
    expect(json(portal)).toEqual({ success: true, data: { url: `${APP}/settings` } });

    const cancel = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/billing/cancel`,
      headers: owner.auth,
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect(json(cancel)).toEqual({ success: true, data: { success: true, cancelAt: subscription.currentPeriodEnd } });
    const after = await billing(org.id);
    expect(after.plan.name).toBe('Pro');
    expect(after.subscription).toEqual({ ...subscription, cancelAtPeriodEnd: true });
    expect((await eventsOf(t, org.id)).at(-1)!.type).toBe('billing.canceled');

    // Deleting the organization ends the subscription with the provider and succeeds.
    const del = await t.request({ method: 'DELETE', url: `/api/v1/organizations/${org.id}`, headers: owner.auth });
    expect(del.statusCode, del.body).toBe(200);
  });

  it('has no Stripe webhook without Stripe (404)', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/billing/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      payload: '{}',
    });
    expectError(res, 404, 'NOT_FOUND');
  });
});
