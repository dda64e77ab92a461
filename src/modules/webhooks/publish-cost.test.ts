// Published events cost what they store (docs/api.md#publishing-your-own-events, docs/security.md):
// the attack was a Free account publishing 1 MiB events with an access token, each stored once as
// the event and once more per endpoint, none of them counted against the monthly quota.
// - Storage: an event's body is stored once, in its event row; a delivery holds a reference to it,
//   so the bytes an event costs do not grow with the endpoints it goes to (measured in SQL).
// - Quota: every POST …/events counts against the organization's monthly apiRequests quota, with an
//   access token as with an API key (once, not twice, for a key); past it, 429 QUOTA_EXCEEDED and
//   nothing is recorded. Callers refused before publishing (no permission, another organization)
//   take nothing from it.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  createApiKey,
  createOrg,
  createWebhook,
  rowsOf,
  setPlan,
  signedInUser,
  type SignedInUser,
  stripeVerify,
} from '../../../test/factories.js';
import { createTestApp, json } from '../../../test/harness.js';
import { owner, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';
import { periodOf } from '../../platform/quota.js';
import { footprint, publish } from '../../../test/fixtures/publish.js';

let member: SignedInUser;
let outsider: SignedInUser;
const fx = useDeliveryApp('cost-owner', { worker: 'none' });

beforeAll(async () => {
  [member, outsider] = await Promise.all([signedInUser(t, 'cost-member'), signedInUser(t, 'cost-outsider')]);
});

/** Bytes the organization's events and deliveries take, as rows (text form), and the rows holding `marker`. */
async function stored(orgId: string, marker: string) {
  const [row] = rowsOf(
    await t.deps.db.execute(sql`select
      (select coalesce(sum(octet_length(e::text)), 0)::bigint from events e where e.organization_id = ${orgId}) as event_bytes,
      (select coalesce(sum(octet_length(d::text)), 0)::bigint from webhook_deliveries d where d.organization_id = ${orgId}) as delivery_bytes,
      (select count(*)::int from webhook_deliveries d where d.organization_id = ${orgId}) as deliveries,
      (select count(*)::int from events e where e.organization_id = ${orgId} and strpos(e::text, ${marker}) > 0)
        + (select count(*)::int from webhook_deliveries d where d.organization_id = ${orgId} and strpos(d::text, ${marker}) > 0) as holding`),
  );
  return {
    eventBytes: Number(row!.event_bytes),
    deliveryBytes: Number(row!.delivery_bytes),
    deliveries: Number(row!.deliveries),
    holding: Number(row!.holding),
  };
}

/** The organization's month of usage (its API-key counter rows) set to `requests` (platform/audit/counters.ts). */
async function setUsage(orgId: string, requests: number) {
  const p = periodOf(t.clock.now());
  await t.deps.db
    .execute(sql`insert into audit_log_counters (organization_id, actor_type, actor_id, action, day, shard, total)
    values (${orgId}, 'api_key', '', '', ${`${p}-01`}::date, 0, ${requests})`);
}

async function usage(orgId: string): Promise<number> {
  const res = await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing`, headers: owner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data.usage.apiRequests as number;
}

const event = (marker = '', size = 0) => ({
  type: 'order.shipped',
  data: { orderId: 'ord_1', marker, blob: randomBytes(size).toString('hex') },
});

describe('what a published event stores', () => {
  it('its body once, whatever the number of endpoints it goes to', async () => {
    const one = await createOrg(t, owner);
    const five = await createOrg(t, owner);
    await setPlan(t, one.id, 'enterprise');
    await setPlan(t, five.id, 'enterprise');
    await createWebhook(t, one.id, owner, { url: 'http://127.0.0.1:9/hook' });
    for (let i = 0; i < 5; i++) await createWebhook(t, five.id, owner, { url: `http://127.0.0.1:9/hook/${i}` });

    // 200 KB of data each (random, so compression does not hide a copy).
    const marks = { one: `mark-${randomBytes(8).toString('hex')}`, five: `mark-${randomBytes(8).toString('hex')}` };
    const a = await publish(t, one.id, owner.auth, event(marks.one, 100_000));
    const b = await publish(t, five.id, owner.auth, event(marks.five, 100_000));
    expect(a.statusCode, a.body).toBe(201);
    expect(b.statusCode, b.body).toBe(201);
    expect(json(b).data.deliveries).toBe(5);

    const s1 = await stored(one.id, marks.one);
    const s5 = await stored(five.id, marks.five);
    // One row holds the data: the event's. The deliveries hold their state and a reference.
    expect(s1.holding).toBe(1);
    expect(s5.holding).toBe(1);
    expect(s5.deliveries).toBe(5);
    expect(s5.eventBytes).toBeGreaterThan(200_000);
    expect(s5.deliveryBytes / s5.deliveries).toBeLessThan(1_000);
    // Four more endpoints cost four delivery rows, not four more copies of 200 KB.
    expect(s5.eventBytes + s5.deliveryBytes - (s1.eventBytes + s1.deliveryBytes)).toBeLessThan(4 * 1_000 + 1_000);
  });

  it('is still delivered to every endpoint as {id, type, timestamp, data}, signed, the same bytes on a retry', async () => {
    let calls = 0;
    const rx = await fx.receiver((req, res) => res.writeHead(req.url === '/hook/0' && ++calls === 1 ? 500 : 204).end());
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    const hooks = [
      await createWebhook(t, org.id, owner, { url: `${rx.url}/0` }),
      await createWebhook(t, org.id, owner, { url: `${rx.url}/1` }),
    ];
    const body = event('', 2_000);
    const res = await publish(t, org.id, owner.auth, body);
    expect(res.statusCode, res.body).toBe(201);
    const id = json(res).data.id as string;
    const worker = fx.worker();
    await worker.start();
    await worker.drain(60_000);
    t.clock.advance(60_000);
    worker.wake();
    await worker.drain(60_000);
    await worker.stop();

    expect(rx.received).toHaveLength(3);
    const to0 = rx.received.filter((r) => r.url === '/hook/0');
    const to1 = rx.received.filter((r) => r.url === '/hook/1');
    expect(to0).toHaveLength(2);
    expect(to0[1]!.body).toBe(to0[0]!.body);
    expect(to1[0]!.body).toBe(to0[0]!.body);
    const expected = { id, type: 'order.shipped', timestamp: expect.any(String), data: body.data };
    for (const r of to0) expect(stripeVerify(t, r, hooks[0]!.secret)).toEqual(expected);
    expect(stripeVerify(t, to1[0]!, hooks[1]!.secret)).toEqual(expected);

    // The deliveries list shows the body each delivery sends.
    const list = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${org.id}/webhooks/${hooks[0]!.id}/deliveries`,
      headers: owner.auth,
    });
    expect(list.statusCode, list.body).toBe(200);
    expect(json(list).data).toEqual([
      expect.objectContaining({
        eventType: 'order.shipped',
        status: 'delivered',
        attempts: 2,
        payload: JSON.parse(to0[0]!.body),
      }),
    ]);
  });
});

describe('the monthly quota of publishing', () => {
  it('counts a publish with an access token; past the quota: 429 QUOTA_EXCEEDED with Retry-After, nothing recorded', async () => {
    const org = await createOrg(t, owner);
    await setUsage(org.id, 9_998);
    expect(await usage(org.id)).toBe(9_998);
    for (let i = 0; i < 2; i++) {
      const res = await publish(t, org.id, owner.auth, event());
      expect(res.statusCode, res.body).toBe(201);
    }
    expect(await usage(org.id)).toBe(10_000);

    const before = await footprint(t, org.id);
    const over = await publish(t, org.id, owner.auth, event());
    expect(over.statusCode, over.body).toBe(429);
    expect(json(over).error.code).toBe('QUOTA_EXCEEDED');
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    // With an Idempotency-Key too: a repeat is a request like any other.
    const keyed = await publish(t, org.id, { ...owner.auth, 'idempotency-key': 'k-1' }, event());
    expect(keyed.statusCode, keyed.body).toBe(429);
    expect(await footprint(t, org.id)).toEqual(before);
    expect(await usage(org.id)).toBe(10_000);
  });

  it('is one quota: publishes with an access token use up what API keys may do, on every instance', async () => {
    const org = await createOrg(t, owner);
    const key = await createApiKey(t, org.id, owner, ['read:projects']);
    await setUsage(org.id, 9_998);
    for (let i = 0; i < 2; i++) expect((await publish(t, org.id, owner.auth, event())).statusCode).toBe(201);
    // A second instance reads the month from the database: the two publishes are there.
    const second = await createTestApp({ database: t.database, clock: t.clock });
    try {
      const res = await second.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id}/projects`,
        headers: key.headers,
      });
      expect(res.statusCode, res.body).toBe(429);
      expect(json(res).error.code).toBe('QUOTA_EXCEEDED');
      const published = await publish(second, org.id, owner.auth, event());
      expect(published.statusCode, published.body).toBe(429);
    } finally {
      await second.close();
    }
  });

  it('counts a publish with an API key once', async () => {
    const org = await createOrg(t, owner);
    const key = await createApiKey(t, org.id, owner, ['write:events']);
    for (let i = 0; i < 3; i++) {
      const res = await publish(t, org.id, key.headers, event());
      expect(res.statusCode, res.body).toBe(201);
    }
    expect(await usage(org.id)).toBe(3);
    // And an access token's publishes add to the same count.
    expect((await publish(t, org.id, owner.auth, event())).statusCode).toBe(201);
    expect(await usage(org.id)).toBe(4);
    // Other requests of signed-in people are not counted.
    expect(
      (
        await t.request({
          method: 'POST',
          url: `/api/v1/organizations/${org.id}/projects`,
          headers: owner.auth,
          payload: { name: 'p' },
        })
      ).statusCode,
    ).toBe(201);
    expect(await usage(org.id)).toBe(4);
  });

  it('takes nothing for a caller refused before publishing, and refuses them as before once the quota is used', async () => {
    const org = await createOrg(t, owner);
    await addMember(t, org.id, owner, member, 'member');
    await setUsage(org.id, 9_999);
    // A member (no events:publish) and someone of another organization: 403, not counted.
    for (const who of [member, outsider]) {
      const res = await publish(t, org.id, who.auth, event());
      expect(res.statusCode, res.body).toBe(403);
    }
    // A malformed body is refused before anything is counted.
    expect((await publish(t, org.id, owner.auth, { type: 'order.shipped' })).statusCode).toBe(400);
    expect(await usage(org.id)).toBe(9_999);
    // The last request of the month is still the owner's.
    expect((await publish(t, org.id, owner.auth, event())).statusCode).toBe(201);
    expect(await usage(org.id)).toBe(10_000);
    // Past it, the refusals stay what they were: no permission is 403, not 429.
    expect((await publish(t, org.id, member.auth, event())).statusCode).toBe(403);
    expect((await publish(t, org.id, outsider.auth, event())).statusCode).toBe(403);
  });
});
