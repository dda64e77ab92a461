// Plans and their limits in one place (docs/api.md#plans-and-limits): the values, the 402 of a
// reached limit, and the member, API-key and webhook-endpoint limits reading their numbers from PLANS.
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrg, setPlan, signedInUser, type SignedInUser, uniqueEmail } from '../../test/factories.js';
import { json } from '../../test/harness.js';
import { t, useApp } from '../../test/fixtures/app.js';
import { AppError } from '../lib/errors.js';
import { assertWithinLimit, PLANS } from './plans.js';

let owner: SignedInUser;

useApp({ env: { WEBHOOK_WORKER: 'off' } });
beforeAll(async () => {
  owner = await signedInUser(t, 'plans');
}, 120_000);

const invite = (orgId: string) =>
  t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/invitations`,
    headers: owner.auth,
    payload: { email: uniqueEmail('seat'), role: 'member' },
  });
const newKey = (orgId: string, n: number) =>
  t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/api-keys`,
    headers: owner.auth,
    payload: { name: `k${n}`, scopes: [] },
  });
const newHook = (orgId: string, n: number) =>
  t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/webhooks`,
    headers: owner.auth,
    payload: { url: `https://example.com/h/${n}` },
  });
function expectLimit(res: Awaited<ReturnType<typeof invite>>) {
  expect(res.statusCode, res.body).toBe(402);
  expect(json(res).error.code).toBe('PLAN_LIMIT_EXCEEDED');
}

describe('PLANS', () => {
  it('holds the limits of docs/api.md#plans-and-limits', () => {
    expect(PLANS).toEqual({
      free: {
        name: 'Free',
        limits: { members: 3, apiRequests: 10_000, storage: 1_073_741_824, apiKeys: 1, webhookEndpoints: 1 },
      },
      pro: {
        name: 'Pro',
        limits: { members: 25, apiRequests: 100_000, storage: 10_737_418_240, apiKeys: 10, webhookEndpoints: 10 },
      },
      enterprise: {
        name: 'Enterprise',
        limits: { members: null, apiRequests: null, storage: null, apiKeys: 50, webhookEndpoints: null },
      },
    });
  });

  it('assertWithinLimit: 402 PLAN_LIMIT_EXCEEDED at the limit, never for null', () => {
    expect(() => assertWithinLimit(3, 2, 'members')).not.toThrow();
    expect(() => assertWithinLimit(null, 1_000_000, 'members')).not.toThrow();
    try {
      assertWithinLimit(3, 3, 'members');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).statusCode).toBe(402);
      expect((err as AppError).code).toBe('PLAN_LIMIT_EXCEEDED');
    }
  });
});

describe('limits over HTTP', () => {
  it('Pro: 25 seats (members plus pending invitations)', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    for (let i = 2; i <= 25; i++) {
      const res = await invite(org.id);
      expect(res.statusCode, `seat ${i}: ${res.body}`).toBe(201);
    }
    expectLimit(await invite(org.id));
  }, 120_000);

  it('Enterprise: unlimited seats and webhook endpoints, 50 API keys', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    for (let i = 2; i <= 30; i++) expect((await invite(org.id)).statusCode).toBe(201);
    for (let n = 1; n <= 12; n++) expect((await newHook(org.id, n)).statusCode).toBe(201);
    for (let n = 1; n <= 50; n++) {
      const res = await newKey(org.id, n);
      expect(res.statusCode, `key ${n}: ${res.body}`).toBe(201);
    }
    expectLimit(await newKey(org.id, 51));
  }, 180_000);

  it('the member, API-key and webhook limits read their numbers from PLANS', async () => {
    const org = await createOrg(t, owner);
    const free = PLANS.free.limits;
    const saved = { ...free };
    try {
      Object.assign(free, { members: 2, apiKeys: 2, webhookEndpoints: 2 });
      expect((await invite(org.id)).statusCode).toBe(201);
      expectLimit(await invite(org.id));
      expect((await newKey(org.id, 1)).statusCode).toBe(201);
      expect((await newKey(org.id, 2)).statusCode).toBe(201);
      expectLimit(await newKey(org.id, 3));
      expect((await newHook(org.id, 1)).statusCode).toBe(201);
      expect((await newHook(org.id, 2)).statusCode).toBe(201);
      expectLimit(await newHook(org.id, 3));
      const billing = await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id}/billing`,
        headers: owner.auth,
      });
      expect(json(billing).data.plan.limits.members).toBe(2);
    } finally {
      Object.assign(free, saved);
    }
  });
});
