import { describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';

useApp();

describe('billing with the built-in test provider', () => {
  it('upgrades to Pro through the test checkout page, then cancels at period end', async () => {
    const owner = await signedInUser(t, 'payer');
    const org = json(
      await t.request({
        method: 'POST',
        url: '/api/v1/organizations',
        headers: owner.auth,
        payload: { name: 'Pay', slug: `pay-${Date.now()}` },
      }),
    );
    const before = json(
      await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}/billing`, headers: owner.auth }),
    );
    expect(before).toEqual({
      success: true,
      data: {
        plan: { name: 'Free', limits: { members: 3, apiRequests: 10000, storage: 1073741824 } },
        status: 'active',
        subscription: null,
        usage: { period: expect.any(String), apiRequests: 0 },
      },
    });

    const checkout = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/billing/checkout`,
      headers: owner.auth,
      payload: {
        priceId: 'price_pro',
        successUrl: 'http://app.test/billing/done',
        cancelUrl: 'http://app.test/billing',
      },
    });
    expect(checkout.statusCode, checkout.body).toBe(200);
    const { url, sessionId } = json(checkout).data;
    expect(sessionId).toBeTruthy();
    const path = new URL(url).pathname;
    const page = await t.request({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const done = await t.request({ method: 'POST', url: `${path}/complete` });
    expect(done.statusCode, done.body).toBe(303);
    expect(done.headers.location).toBe('http://app.test/billing/done');

    const after = json(
      await t.request({ method: 'GET', url: `/api/v1/organizations/${org.id}/billing`, headers: owner.auth }),
    );
    expect(after.data.plan.name).toBe('Pro');
    expect(after.data.subscription).toMatchObject({ cancelAtPeriodEnd: false });

    const cancel = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/billing/cancel`,
      headers: owner.auth,
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect(json(cancel).data).toEqual({ success: true, cancelAt: after.data.subscription.currentPeriodEnd });
    const wrongOrigin = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/billing/checkout`,
      headers: owner.auth,
      payload: { priceId: 'price_pro', successUrl: 'http://app.test.evil.com/x', cancelUrl: 'http://app.test/billing' },
    });
    expect(wrongOrigin.statusCode).toBe(400);
  });
});
