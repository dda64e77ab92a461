// Fairness between organizations, through real local receivers: an organization holds at most
// WEBHOOK_ORG_CONCURRENCY of a worker's slots (3 here), so one whose endpoints never answer cannot
// hold back another's deliveries; claims take turns across the organizations with due work; and an
// endpoint at its cap with a long queue neither starves the others nor gets more than its cap.
// PGlite, and PostgreSQL with TEST_DATABASE_URL.
import { describe, expect, it } from 'vitest';
import { createOrg, createWebhook, type Receiver, setPlan } from '../../../test/factories.js';
import { deferred } from '../../../test/fixtures/worker.js';
import { owner, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';
import { expectRefused, load, useTempDirs } from '../../../test/fixtures/config.js';
import { waitUntil } from '../../../test/expect.js';

// Receivers stopped after each test: a request held by a black hole fails at once instead of holding the stop.
const fx = useDeliveryApp('fair-owner', {
  env: { WEBHOOK_ORG_CONCURRENCY: '3' },
  worker: 'none',
  freshTokens: true,
  stopEach: true,
});
const { worker, receiver, statusCounts } = fx;
const record = (orgId: string, n: number, type = 'load.tested') => fx.record(orgId, n, { type, perTransaction: 50 });
const ids = (rx: Receiver) => rx.received.map((r) => r.headers['x-webhook-delivery-id'] as string);

useTempDirs();

/** A receiver that takes requests and answers none of them until `open()`. */
async function blackHole() {
  const gate = deferred();
  const rx = await receiver((_req, res) => void gate.promise.then(() => res.writeHead(204).end()));
  return { rx, open: gate.resolve };
}

describe('WEBHOOK_ORG_CONCURRENCY', () => {
  it('defaults to 32; takes a whole number of at least 1', () => {
    expect(load().webhook.orgConcurrency).toBe(32);
    expect(load({ WEBHOOK_ORG_CONCURRENCY: '8' }).webhook.orgConcurrency).toBe(8);
    for (const bad of ['0', '-1', '2.5', 'many'])
      expectRefused(() => load({ WEBHOOK_ORG_CONCURRENCY: bad }), 'WEBHOOK_ORG_CONCURRENCY');
    expect(t.deps.config.webhook.orgConcurrency).toBe(3);
  });
});

describe('an organization whose endpoints never answer', () => {
  it('holds 3 of the 8 slots, though its 4 endpoints could take 2 each: another organization is delivered meanwhile', async () => {
    const noisy = await createOrg(t, owner);
    const quiet = await createOrg(t, owner);
    await setPlan(t, noisy.id, 'enterprise');
    const holes: Array<Awaited<ReturnType<typeof blackHole>>> = [];
    for (let i = 0; i < 4; i++) {
      const hole = await blackHole();
      await createWebhook(t, noisy.id, owner, { url: hole.rx.url });
      holes.push(hole);
    }
    const quietRx = await receiver();
    const quietHook = await createWebhook(t, quiet.id, owner, { url: quietRx.url });
    const held = () => holes.reduce((n, h) => n + h.rx.received.length, 0);

    await record(noisy.id, 20);
    // perEndpoint 2 × 4 endpoints would be every slot; the organization's cap (3) comes first.
    const w = worker({ concurrency: 8, perEndpoint: 2 });
    await w.start();
    try {
      await waitUntil('the noisy organization fills its share', () => held() === 3 && w.stats().inFlight === 3);
      await record(quiet.id, 5);
      w.wake();
      await waitUntil(
        'the quiet organization has all 5',
        async () => (await statusCounts(quietHook.id)).delivered === 5,
      );
      expect(quietRx.received).toHaveLength(5);
      // Claims went by meanwhile (one per quiet delivery at least): the noisy one never got a fourth slot.
      expect(held()).toBe(3);
      expect(w.stats().inFlight).toBe(3);
    } finally {
      for (const h of holes) h.open();
    }
    await waitUntil('the noisy organization has all 80', async () => {
      let delivered = 0;
      for (const h of holes) delivered += h.rx.received.length;
      return delivered >= 80;
    });
    await w.drain(60_000);
    const all = holes.flatMap((h) => ids(h.rx));
    expect(all).toHaveLength(80);
    expect(new Set(all).size).toBe(80);
    await w.stop();
  });
});

describe('round robin', () => {
  it('one slot, three organizations with due work: deliveries take turns, whichever organization recorded first', async () => {
    const rx = await receiver();
    const orgs = [];
    for (const name of ['a', 'b', 'c']) {
      const org = await createOrg(t, owner);
      await createWebhook(t, org.id, owner, { url: `${rx.url}/${name}` });
      orgs.push(org);
    }
    // In due order, the first organization's six come before any other's.
    for (const org of orgs) await record(org.id, 6);
    const w = worker({ concurrency: 1 });
    await w.start();
    await rx.waitFor(18);
    await w.drain(60_000);
    const order = rx.received.map((r) => r.url);
    expect(order).toHaveLength(18);
    // Every run of three consecutive deliveries has one of each organization.
    for (let i = 0; i + 3 <= order.length; i++) expect(new Set(order.slice(i, i + 3)).size, order.join(' ')).toBe(3);
    await w.stop();
  });
});

describe('an endpoint at its cap with a long queue', () => {
  it('gets its 2 slots and no more; its organization’s other endpoint and another organization are delivered meanwhile', async () => {
    const busy = await createOrg(t, owner);
    const other = await createOrg(t, owner);
    await setPlan(t, busy.id, 'enterprise');
    const hot = await blackHole();
    const hotHook = await createWebhook(t, busy.id, owner, { url: hot.rx.url, events: ['load.hot'] });
    const sideRx = await receiver();
    const sideHook = await createWebhook(t, busy.id, owner, { url: sideRx.url, events: ['load.side'] });
    const otherRx = await receiver();
    const otherHook = await createWebhook(t, other.id, owner, { url: otherRx.url });

    await record(busy.id, 400, 'load.hot');
    const w = worker({ concurrency: 8, perEndpoint: 2 });
    await w.start();
    try {
      await waitUntil('the hot endpoint is at its cap', () => hot.rx.received.length === 2 && w.stats().inFlight === 2);
      // Recorded after the whole queue of the hot endpoint, so due after all of it.
      await record(busy.id, 5, 'load.side');
      await record(other.id, 5);
      w.wake();
      await waitUntil(
        'both others have all 5',
        async () =>
          (await statusCounts(sideHook.id)).delivered === 5 && (await statusCounts(otherHook.id)).delivered === 5,
      );
      expect(hot.rx.received).toHaveLength(2);
      expect(await statusCounts(hotHook.id)).toEqual({ pending: 400 });
    } finally {
      hot.open();
    }
    await waitUntil('the hot endpoint has its 400', async () => (await statusCounts(hotHook.id)).delivered === 400);
    await w.drain(60_000);
    expect(new Set(ids(hot.rx)).size).toBe(400);
    expect(hot.rx.received).toHaveLength(400);
    await w.stop();
  });
});
