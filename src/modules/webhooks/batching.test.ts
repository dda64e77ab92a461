// The worker's batches: results of many concurrent deliveries recorded together, results
// not yet written keeping their lease (nobody else sends them), stop() and drain() writing every
// result, and the per-endpoint cap that keeps a slow endpoint from taking every slot. Real local
// receivers; PGlite, and PostgreSQL with TEST_DATABASE_URL.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { attemptRows, createOrg, createWebhook, type Receiver, rowsOf, setPlan } from '../../../test/factories.js';
import { deferred } from '../../../test/fixtures/worker.js';
import { owner, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';
import { waitUntil } from '../../../test/expect.js';

// The fake clock passes leases here: a fresh access token for every test. A worker left running by a
// failed test would deliver the next test's events: stopped after each.
const fx = useDeliveryApp('batch-owner', { worker: 'none', freshTokens: true, stopEach: true });
const { worker, receiver, statusCounts } = fx;
const record = (orgId: string, n: number) => fx.record(orgId, n, { perTransaction: 50 });

async function attemptCount(endpointId: string) {
  const [row] = rowsOf(
    await t.deps.db.execute(
      sql`select count(*)::int as n, count(distinct delivery_id)::int as d from webhook_attempts where delivery_id in (select id from webhook_deliveries where endpoint_id = ${endpointId})`,
    ),
  );
  return { n: Number(row!.n), d: Number(row!.d) };
}

const ids = (rx: Receiver) => rx.received.map((r) => r.headers['x-webhook-delivery-id'] as string);

describe('results recorded in batches', () => {
  it('600 deliveries over 3 endpoints, 48 at a time: each delivered once, one attempt each, written in far fewer statements than results', async () => {
    const rx = await receiver((_req, res) => setTimeout(() => res.writeHead(204).end(), 5));
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    const hooks = [];
    for (let i = 0; i < 3; i++) hooks.push(await createWebhook(t, org.id, owner, { url: `${rx.url}/${i}` }));
    await record(org.id, 200);
    const w = worker({ concurrency: 48 });
    await w.start();
    await waitUntil('600 requests arrived', () => rx.received.length >= 600);
    await w.drain(60_000);

    for (const hook of hooks) {
      expect(await statusCounts(hook.id)).toEqual({ delivered: 200 });
      expect(await attemptCount(hook.id)).toEqual({ n: 200, d: 200 });
    }
    expect(rx.received).toHaveLength(600);
    expect(new Set(ids(rx)).size).toBe(600);
    const rows = rowsOf(
      await t.deps.db.execute(
        sql`select attempts, locked_by, locked_until, response_status from webhook_deliveries where organization_id = ${org.id}`,
      ),
    );
    expect(
      rows.every(
        (r) => r.attempts === 1 && r.locked_by === null && r.locked_until === null && r.response_status === 204,
      ),
    ).toBe(true);
    const stats = w.stats();
    expect(stats.recorded).toBe(600);
    expect(stats.batches).toBeLessThan(300);
    expect(stats.claims).toBeLessThan(300);
    await w.stop();
  });
});

describe('starting', () => {
  it('a worker started on a backlog claims it at once, without waiting for the poll or a NOTIFY', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    await record(org.id, 3);
    const w = worker({ pollMs: 60_000 });
    await w.start();
    await rx.waitFor(3, 5_000);
    await w.drain(60_000);
    expect(await statusCounts(hook.id)).toEqual({ delivered: 3 });
  });
});

describe('a result not yet written', () => {
  it('keeps its lease: another worker does not send the delivery again; drain() writes it', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    // Results wait a minute for their batch: only drain() or stop() writes them sooner.
    const a = worker({ flushDelayMs: 60_000 });
    await a.start();
    await record(org.id, 5);
    a.wake();
    await rx.waitFor(5);
    // Every answer is in; two polls later (a poll is a claim, 50 ms apart here, where results
    // would go within 2 ms by default) none of them has been written.
    await waitUntil('the 5 attempts have answered', () => a.stats().claimed === 5 && a.stats().inFlight === 0);
    const polled = a.stats().claims;
    await waitUntil('worker A has polled twice since', () => a.stats().claims >= polled + 2);
    expect(await statusCounts(hook.id)).toEqual({ pending: 5 });
    expect(a.stats().unrecorded).toBe(5);

    const b = worker();
    await b.start();
    const looked = b.stats().claims;
    b.wake();
    // B has run a claim since and has nothing in flight: a delivery it had taken would be at the receiver by now.
    await waitUntil('worker B has looked at the queue', () => b.stats().claims > looked && b.stats().inFlight === 0);
    expect(rx.received).toHaveLength(5);

    await a.drain(60_000);
    expect(await statusCounts(hook.id)).toEqual({ delivered: 5 });
    expect(await attemptCount(hook.id)).toEqual({ n: 5, d: 5 });
    expect(a.stats().unrecorded).toBe(0);
    await b.drain(60_000);
    expect(rx.received).toHaveLength(5);
    await a.stop();
    await b.stop();
  });

  it('stop() writes every result before it resolves', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const w = worker({ flushDelayMs: 60_000 });
    await w.start();
    await record(org.id, 7);
    w.wake();
    await rx.waitFor(7);
    expect(await statusCounts(hook.id)).toEqual({ pending: 7 });
    await w.stop();
    expect(await statusCounts(hook.id)).toEqual({ delivered: 7 });
    expect(await attemptCount(hook.id)).toEqual({ n: 7, d: 7 });
  });

  it('lost with its worker (never written): the delivery is sent again, same id, once the lease runs out; the late write does not undo the new result', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    // A polls once an hour: once its one delivery is out it claims nothing more (no event wakes it),
    // so the delivery can only be taken over by B.
    const a = worker({ flushDelayMs: 60_000, pollMs: 3_600_000 });
    await a.start();
    await record(org.id, 1);
    a.wake();
    await rx.waitFor(1);
    // Worker A is as good as crashed: its result is still in memory. After the lease, B takes over.
    t.clock.advance(t.deps.config.webhook.timeoutMs + 31_000);
    const b = worker();
    await b.start();
    b.wake();
    await rx.waitFor(2);
    await b.drain(60_000);
    expect(ids(rx)[1]).toBe(ids(rx)[0]);
    const [d] = rowsOf(
      await t.deps.db.execute(
        sql`select id, status, attempts, locked_by from webhook_deliveries where endpoint_id = ${hook.id}`,
      ),
    );
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, locked_by: null });

    // A comes back and writes its (stale) result: recorded as an attempt, the delivery unchanged.
    await a.stop();
    expect(await statusCounts(hook.id)).toEqual({ delivered: 1 });
    const attempts = await attemptRows(t, d!.id as string);
    expect(attempts).toHaveLength(2);
    expect(attempts.every((x) => x.response_status === 204)).toBe(true);
    await b.stop();
  });
});

describe('a slow endpoint', () => {
  it('holds at most its share of the slots (a quarter): deliveries to another endpoint behind it go out meanwhile', async () => {
    const gate = deferred();
    const slow = await receiver((_req, res) => void gate.promise.then(() => res.writeHead(204).end()));
    const fast = await receiver();
    const slowOrg = await createOrg(t, owner);
    const fastOrg = await createOrg(t, owner);
    const slowHook = await createWebhook(t, slowOrg.id, owner, { url: slow.url });
    const fastHook = await createWebhook(t, fastOrg.id, owner, { url: fast.url });
    // The slow endpoint's deliveries come first in the queue.
    await record(slowOrg.id, 20);
    await record(fastOrg.id, 20);
    const w = worker({ concurrency: 8 });
    await w.start();
    w.wake();
    try {
      await waitUntil('the fast endpoint has all 20', async () => (await statusCounts(fastHook.id)).delivered === 20);
      expect(slow.received).toHaveLength(2);
      expect(w.stats().inFlight).toBe(2);
      expect(await statusCounts(slowHook.id)).toEqual({ pending: 20 });
    } finally {
      gate.resolve();
    }
    await waitUntil('the slow endpoint has all 20', async () => (await statusCounts(slowHook.id)).delivered === 20);
    await w.drain(60_000);
    expect(new Set(ids(slow)).size).toBe(20);
    expect(slow.received).toHaveLength(20);
    expect(fast.received).toHaveLength(20);
    await w.stop();
  });
});
