// Billing through Stripe, against a local server that speaks the Stripe API the
// official `stripe` package calls: the billing read, checkout and the customer portal.
import { describe, expect, it } from 'vitest';
import { addMember, createOrg, setPlan } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import {
  APP,
  billingData,
  billingOf,
  checkout,
  eventTypes,
  fake,
  memberUser,
  type Obj,
  outsider,
  owner,
  portal,
  subRow,
  subscribed,
  t,
  URLS,
  useStripeApp,
  viewerUser,
} from '../../../test/fixtures/stripe.js';
import { expectError } from '../../../test/expect.js';

useStripeApp();

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
    expectError(
      await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}/billing` }),
      401,
      'AUTHENTICATION_ERROR',
    );
  });

  it('shows the limits of Pro and Enterprise (null: unlimited)', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    expect((await billingData(org.id)).plan).toEqual({
      name: 'Pro',
      limits: { members: 25, apiRequests: 100000, storage: 10737418240 },
    });
    await setPlan(t, org.id, 'enterprise');
    expect((await billingData(org.id)).plan).toEqual({
      name: 'Enterprise',
      limits: { members: null, apiRequests: null, storage: null },
    });
  });

  it('is readable with an API key that has read:billing, not without it', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    const key = async (scopes: string[]) => {
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/api-keys`,
        headers: owner.auth,
        payload: { name: 'b', scopes },
      });
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
    expect(unknown.details).toMatch(/priceId/);
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
        expect(body.details, `${field} = ${url}`).toMatch(field);
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

    const [createdCustomer] = fake
      .calls('POST', '/v1/customers')
      .filter((r) => (r.params.metadata as Obj)?.organizationId === org.id);
    expect(createdCustomer!.params).toMatchObject({ name: 'Checkout Co', metadata: { organizationId: org.id } });
    expect(createdCustomer!.headers.authorization).toBe('Bearer sk_test_x');
    const sessionCall = fake
      .calls('POST', '/v1/checkout/sessions')
      .find((r) => (r.params.metadata as Obj)?.organizationId === org.id)!;
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
    const customers = fake
      .calls('POST', '/v1/customers')
      .filter((r) => (r.params.metadata as Obj)?.organizationId === org.id);
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
      expect(body.details).toMatch(/return_url/);
    }
    expectError(
      await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}/billing/portal`, headers: owner.auth }),
      400,
      'VALIDATION_ERROR',
    );
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
