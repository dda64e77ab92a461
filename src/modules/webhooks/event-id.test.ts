// The event id in every delivery's body ({id, type, timestamp, data}), with real local receivers and
// signatures checked by the `stripe` package: one event sent to two endpoints carries the same id
// (the event's), two events two ids; and a delivery recorded before events carried their id in the
// payload (a row without it) is sent with the id from its event, the same bytes on every attempt.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, createWebhook, deliveryRows, rowsOf, setPlan, signedInUser, type SignedInUser, stripeVerify } from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { workerFixtures } from '../../../test/fixtures/worker.js';
import { recordEvent } from '../../platform/outbox.js';
import type { DeliveryWorker } from './worker/index.js';

let t: TestApp;
let worker: DeliveryWorker;
let owner: SignedInUser;
const fx = workerFixtures(() => t);

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
  worker = fx.worker();
  owner = await signedInUser(t, 'event-id-owner');
});
afterAll(async () => {
  await fx.stopAll();
  await t?.close();
});

describe('the event id', () => {
  it('is the first key of the body: the same for both endpoints of one event, another for the next event; signatures verify', async () => {
    const a = await fx.receiver();
    const b = await fx.receiver();
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    const hookA = await createWebhook(t, org.id, owner, { url: a.url });
    const hookB = await createWebhook(t, org.id, owner, { url: b.url });
    await worker.start();
    for (const name of ['one', 'two']) {
      const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/projects`, headers: owner.auth, payload: { name } });
      expect(res.statusCode, res.body).toBe(201);
    }
    await worker.drain(60_000);

    const events = rowsOf(await t.deps.db.execute(sql`select id from events where organization_id = ${org.id} and type = 'project.created' order by created_at, id`));
    expect(events).toHaveLength(2);
    const byName = (rx: typeof a, secret: string) =>
      Object.fromEntries(rx.received.map((r) => [(JSON.parse(r.body) as { data: { name: string } }).data.name, stripeVerify(t, r, secret)]));
    const fromA = byName(a, hookA.secret);
    const fromB = byName(b, hookB.secret);
    for (const name of ['one', 'two']) {
      expect(Object.keys(fromA[name]!)).toEqual(['id', 'type', 'timestamp', 'data']);
      expect(fromA[name]!.id).toBe(fromB[name]!.id);
    }
    expect(new Set([fromA.one!.id, fromA.two!.id])).toEqual(new Set(events.map((e) => e.id)));
    // Each endpoint's delivery has its own delivery id, though the event id is shared.
    expect(a.received[0]!.headers['x-webhook-delivery-id']).not.toBe(b.received[0]!.headers['x-webhook-delivery-id']);
  });

  it('of the test event is the eventId the test route answers', async () => {
    const rx = await fx.receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    await worker.start();
    const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/test`, headers: owner.auth });
    expect(res.statusCode, res.body).toBe(200);
    await worker.drain(60_000);
    expect(stripeVerify(t, rx.received[0]!, hook.secret)).toMatchObject({ id: json(res).data.eventId, type: 'test' });
  });
});

describe('a delivery recorded without the id in its payload (before this version)', () => {
  it('is sent with its event’s id, the same bytes on the retry', async () => {
    let calls = 0;
    const rx = await fx.receiver((_req, res) => res.writeHead(++calls === 1 ? 500 : 204).end());
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    // Stopped while the row is rewritten as the previous version wrote it; a new worker sends it.
    await worker.stop();
    const { eventId } = await t.deps.db.transaction((tx) => recordEvent(t.deps, tx, org.id, 'order.shipped', { orderId: 'o1' }));
    await t.deps.db.execute(sql`update webhook_deliveries set payload = payload - 'id' where event_id = ${eventId}`);
    const [stored] = await deliveryRows(t, hook.id);
    expect(stored!.payload).toEqual({ type: 'order.shipped', timestamp: expect.any(String), data: { orderId: 'o1' } });

    worker = fx.worker();
    await worker.start();
    await worker.drain(60_000);
    t.clock.advance(60_000);
    worker.wake();
    await worker.drain(60_000);

    expect(rx.received).toHaveLength(2);
    expect(rx.received[1]!.body).toBe(rx.received[0]!.body);
    for (const r of rx.received) {
      expect(stripeVerify(t, r, hook.secret)).toEqual({ id: eventId, type: 'order.shipped', timestamp: (stored!.payload as { timestamp: string }).timestamp, data: { orderId: 'o1' } });
    }
    expect((await deliveryRows(t, hook.id))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
  });
});
