// The monthly apiRequests quota (docs/api.md#monthly-api-request-quota): API-key requests per organization and month,
// 429 QUOTA_EXCEEDED with Retry-After beyond the plan's number, shown in the billing response, reset
// by a new month, unlimited on Enterprise, lifted at once by an upgrade.
//
// The guard caches an organization's usage for 2 s of real time. Each test uses a fresh organization
// whose usage is written into its counters before its first API-key request, so the guard's first read
// already sees it; plan changes through the billing code path tell the guard to read again.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrg, login, setPlan, signedInUser, type SignedInUser } from '../../test/factories.js';
import { json, queryRows } from '../../test/harness.js';
import { t, useApp } from '../../test/fixtures/app.js';
import { periodOf } from './quota.js';

let owner: SignedInUser;

useApp({ env: { WEBHOOK_WORKER: 'off' } });
beforeAll(async () => {
  owner = await signedInUser(t, 'quota');
}, 120_000);

const period = () => periodOf(t.clock.now());

async function orgWithKey(plan: 'free' | 'pro' | 'enterprise' = 'free') {
  const org = await createOrg(t, owner);
  if (plan !== 'free') await setPlan(t, org.id, plan);
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${org.id}/api-keys`,
    headers: owner.auth,
    payload: { name: 'q', scopes: ['read:projects', 'read:billing'] },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { orgId: org.id, key: json(res).plainKey as string };
}

/** The month's usage set to `requests`: the organization's API-key counter rows of the month (audit/counters.ts). */
async function setUsage(orgId: string, requests: number, p = period()) {
  await t.deps.db
    .execute(sql`delete from audit_log_counters where organization_id = ${orgId} and actor_type = 'api_key' and actor_id = '' and action = ''
    and to_char(day, 'YYYY-MM') = ${p}`);
  await t.deps.db
    .execute(sql`insert into audit_log_counters (organization_id, actor_type, actor_id, action, day, shard, total)
    values (${orgId}, 'api_key', '', '', ${`${p}-01`}::date, 0, ${requests})`);
}
const usageRow = async (orgId: string, p = period()) =>
  Number(
    (
      await queryRows<{ requests: number }>(
        t,
        sql`select coalesce(sum(total), 0)::int as requests from audit_log_counters where organization_id = ${orgId} and actor_type = 'api_key'
          and actor_id = '' and action = '' and to_char(day, 'YYYY-MM') = ${p}`,
      )
    )[0]?.requests ?? 0,
  );

const keyRequest = (orgId: string, key: string) =>
  t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers: { 'x-api-key': key } });
async function billingData(orgId: string) {
  const res = await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing`, headers: owner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data;
}
/** Seconds from the app clock to the start of the next UTC month. */
const secondsToNextMonth = () => {
  const now = t.clock.now();
  return Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000);
};

describe('the monthly apiRequests quota', () => {
  it('counts API-key requests into the month and shows them in the billing response', async () => {
    const { orgId, key } = await orgWithKey();
    expect((await billingData(orgId)).usage).toEqual({ period: '2026-03', apiRequests: 0 });
    for (let i = 0; i < 3; i++) expect((await keyRequest(orgId, key)).statusCode).toBe(200);
    expect((await billingData(orgId)).usage).toEqual({ period: '2026-03', apiRequests: 3 });
    // Read with the key itself (read:billing): that request is counted too.
    const own = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/billing`,
      headers: { 'x-api-key': key },
    });
    expect(own.statusCode, own.body).toBe(200);
    expect(json(own).data.usage.apiRequests).toBeGreaterThanOrEqual(3);
    expect(await usageRow(orgId)).toBe(4);
    // Requests of signed-in users are not API-key requests.
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers: owner.auth }))
        .statusCode,
    ).toBe(200);
    expect(await usageRow(orgId)).toBe(4);
  });

  it('lets the limit-th request of the month through and refuses the next with 429 QUOTA_EXCEEDED and Retry-After', async () => {
    const { orgId, key } = await orgWithKey();
    await setUsage(orgId, 9999);
    const last = await keyRequest(orgId, key);
    expect(last.statusCode, last.body).toBe(200);
    expect(await usageRow(orgId)).toBe(10000);
    expect((await billingData(orgId)).usage.apiRequests).toBe(10000);

    const over = await keyRequest(orgId, key);
    expect(over.statusCode, over.body).toBe(429);
    const body = json(over);
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('QUOTA_EXCEEDED');
    expect(body.error.details).toMatch(/10000/);
    expect(Number(over.headers['retry-after'])).toBe(secondsToNextMonth());
    // Still refused on the next requests, whatever the route.
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing`, headers: { 'x-api-key': key } }))
        .statusCode,
    ).toBe(429);
    // Signed-in users are not held by the API quota.
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers: owner.auth }))
        .statusCode,
    ).toBe(200);
  });

  it('holds Pro to 100000 and lets Enterprise (null) through whatever the usage', async () => {
    const pro = await orgWithKey('pro');
    await setUsage(pro.orgId, 99_999);
    expect((await keyRequest(pro.orgId, pro.key)).statusCode).toBe(200);
    expect((await keyRequest(pro.orgId, pro.key)).statusCode).toBe(429);

    const ent = await orgWithKey('enterprise');
    await setUsage(ent.orgId, 50_000_000);
    for (let i = 0; i < 3; i++) {
      const res = await keyRequest(ent.orgId, ent.key);
      expect(res.statusCode, res.body).toBe(200);
    }
    expect((await billingData(ent.orgId)).plan.limits.apiRequests).toBeNull();
    expect(await usageRow(ent.orgId)).toBe(50_000_003);
  });

  it('an upgrade lifts the quota at once (test provider checkout)', async () => {
    const { orgId, key } = await orgWithKey();
    await setUsage(orgId, 10_000);
    expect((await keyRequest(orgId, key)).statusCode).toBe(429);
    const checkout = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/billing/checkout`,
      headers: owner.auth,
      payload: { priceId: 'price_pro', successUrl: 'http://app.test/ok', cancelUrl: 'http://app.test/no' },
    });
    expect(checkout.statusCode, checkout.body).toBe(200);
    const done = await t.request({ method: 'POST', url: `${new URL(json(checkout).data.url).pathname}/complete` });
    expect(done.statusCode, done.body).toBe(303);
    const res = await keyRequest(orgId, key);
    expect(res.statusCode, res.body).toBe(200);
  });

  // Last: it moves the clock a month on.
  it('starts again in a new month', async () => {
    const { orgId, key } = await orgWithKey();
    await setUsage(orgId, 10_000);
    expect((await keyRequest(orgId, key)).statusCode).toBe(429);
    const march = period();

    t.clock.set(Date.parse('2026-04-01T00:00:05.000Z'));
    expect(period()).toBe('2026-04');
    const res = await keyRequest(orgId, key);
    expect(res.statusCode, res.body).toBe(200);
    expect(await usageRow(orgId)).toBe(1);
    expect(await usageRow(orgId, march)).toBeGreaterThanOrEqual(10_000);
    // The billing response shows the new month (signed in again: a month of fake time ended the session).
    const again = await login(t, owner.email, owner.password);
    const billing = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/billing`,
      headers: { authorization: `Bearer ${again.accessToken}` },
    });
    expect(billing.statusCode, billing.body).toBe(200);
    expect(json(billing).data.usage).toEqual({ period: '2026-04', apiRequests: 1 });

    // The last second of a month answers Retry-After: 1.
    t.clock.set(Date.parse('2026-04-30T23:59:59.500Z'));
    const other = await orgWithKeyAfterLogin((await login(t, owner.email, owner.password)).accessToken);
    await setUsage(other.orgId, 10_000);
    const over = await keyRequest(other.orgId, other.key);
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBe('1');
  });
});

async function orgWithKeyAfterLogin(accessToken: string) {
  const auth = { authorization: `Bearer ${accessToken}` };
  const org = await t.request({
    method: 'POST',
    url: '/api/v1/organizations',
    headers: auth,
    payload: { name: 'Late', slug: `late-${Date.now().toString(36)}` },
  });
  expect(org.statusCode, org.body).toBe(201);
  const orgId = json(org).id as string;
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/api-keys`,
    headers: auth,
    payload: { name: 'q', scopes: ['read:projects'] },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { orgId, key: json(res).plainKey as string };
}
