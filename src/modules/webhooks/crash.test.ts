// Crash safety and concurrency of the delivery workers. Meaningful on PostgreSQL (two
// workers really race for rows with FOR UPDATE SKIP LOCKED); must hold on PGlite too.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { attemptRows, createOrg, createWebhook, type Receiver, rowsOf } from '../../../test/factories.js';
import { createTestApp } from '../../../test/harness.js';
import { deferred } from '../../../test/fixtures/worker.js';
import { owner, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';
import { recordEvent } from '../../platform/outbox.js';
import { waitUntil } from '../../../test/expect.js';

// The fake clock passes leases here: a fresh access token for every test.
const fx = useDeliveryApp('crash-owner', { worker: 'none', freshTokens: true });
const { worker, receiver, record, statusCounts } = fx;

function countIds(rx: Receiver) {
  const counts = new Map<string, number>();
  for (const r of rx.received) {
    const id = r.headers['x-webhook-delivery-id'] as string;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('two workers on one database', () => {
  it('200 events: every delivery is delivered exactly once (no duplicate, none missing)', async () => {
    const rx = await receiver((_req, res) => setTimeout(() => res.writeHead(204).end(), 2));
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    // Small batches so both keep coming back for more.
    const a = worker({ concurrency: 8 });
    const b = worker({ concurrency: 8 });
    await a.start();
    await b.start();

    await record(org.id, 200);
    a.wake();
    b.wake();
    await waitUntil('all 200 are delivered', async () => (await statusCounts(hook.id)).delivered === 200);
    await Promise.all([a.drain(60_000), b.drain(60_000)]);

    const rows = rowsOf(
      await t.deps.db.execute(
        sql`select id, status, attempts, locked_by from webhook_deliveries where endpoint_id = ${hook.id}`,
      ),
    );
    expect(rows).toHaveLength(200);
    const counts = countIds(rx);
    expect(counts.size).toBe(200);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(counts.keys()));
    expect(rows.every((r) => r.status === 'delivered' && r.attempts === 1 && r.locked_by === null)).toBe(true);
    expect(rx.received).toHaveLength(200);
    const [attempts] = rowsOf(
      await t.deps.db.execute(
        sql`select count(*)::int as n, count(distinct delivery_id)::int as d from webhook_attempts where delivery_id in (select id from webhook_deliveries where endpoint_id = ${hook.id})`,
      ),
    );
    expect(attempts).toMatchObject({ n: 200, d: 200 });
    // The payloads: every event once.
    expect(new Set(rx.received.map((r) => JSON.parse(r.body).data.n)).size).toBe(200);

    await a.stop();
    await b.stop();
  });

  it('a worker saturated (every slot busy) and woken keeps the event loop free and finishes the backlog', async () => {
    const rx = await receiver((_req, res) => setTimeout(() => res.writeHead(204).end(), 100));
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    await record(org.id, 30);
    const w = worker({ concurrency: 2 });
    await w.start();
    // Nudge it while every slot is taken: it must not spin.
    const ticker = setInterval(() => w.wake(), 5);
    let ticks = 0;
    const heartbeat = setInterval(() => ticks++, 20);
    try {
      await waitUntil('the 30 are delivered', async () => (await statusCounts(hook.id)).delivered === 30, 120_000);
    } finally {
      clearInterval(ticker);
      clearInterval(heartbeat);
    }
    expect(ticks).toBeGreaterThan(0);
    expect(countIds(rx).size).toBe(30);
    expect(rx.received).toHaveLength(30);
    await w.stop();
  });
});

describe('waking up', () => {
  it('a committed event wakes an idle worker at once (LISTEN/NOTIFY), also when another instance commits it', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    await createWebhook(t, org.id, owner, { url: rx.url });
    // It polls once a minute: only the notification can bring it in time.
    const w = worker({ pollMs: 60_000 });
    await w.start();
    // Past its first claim (at start): from here only a notification brings it back.
    await waitUntil('the claim at start is done', () => w.stats().claims >= 1);
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: owner.auth,
      payload: { name: 'here' },
    });
    expect(res.statusCode).toBe(201);
    await rx.waitFor(1, 20_000);

    const other = await createTestApp({
      database: t.database,
      clock: t.clock,
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
    });
    try {
      // The first delivery written: the worker is idle again, waiting for a notification.
      await waitUntil('the first delivery is recorded', () => w.stats().recorded === 1 && w.stats().inFlight === 0);
      await other.deps.db.transaction(async (tx) => {
        await recordEvent(other.deps, tx, org.id, 'project.created', {
          projectId: 'prj_other',
          organizationId: org.id,
          name: 'there',
        });
      });
      await rx.waitFor(2, 20_000);
    } finally {
      await other.close();
    }
    expect(rx.received.map((r) => JSON.parse(r.body).data.name)).toEqual(['here', 'there']);
    await w.stop();
  });
});

describe('a crashed worker', () => {
  it('its leased deliveries are left alone until the lease runs out, then another worker delivers them all', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    await record(org.id, 20);
    // Worker A claimed them and died mid-batch: its lease is on the rows, nothing was sent.
    const leaseMs = t.deps.config.webhook.timeoutMs + 30_000;
    const until = new Date(t.clock.now().getTime() + leaseMs);
    await t.deps.db.execute(
      sql`update webhook_deliveries set locked_by = 'wrk_crashed', locked_until = ${until.toISOString()}::timestamptz where endpoint_id = ${hook.id}`,
    );

    const b = worker();
    await b.start();
    b.wake();
    await b.drain(60_000);
    // And once more: B claims again and still takes nothing (it would have it in flight, or sent).
    const looked = b.stats().claims;
    await waitUntil('worker B has claimed again', () => b.stats().claims > looked && b.stats().inFlight === 0);
    expect(rx.received).toHaveLength(0);
    expect(await statusCounts(hook.id)).toEqual({ pending: 20 });

    // Not yet: one second before the lease runs out.
    t.clock.advance(leaseMs - 1000);
    b.wake();
    await b.drain(60_000);
    expect(rx.received).toHaveLength(0);

    t.clock.advance(2000);
    b.wake();
    await b.drain(60_000);
    expect(await statusCounts(hook.id)).toEqual({ delivered: 20 });
    const counts = countIds(rx);
    expect(counts.size).toBe(20);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const rows = rowsOf(
      await t.deps.db.execute(sql`select attempts, locked_by from webhook_deliveries where endpoint_id = ${hook.id}`),
    );
    expect(rows.every((r) => r.attempts === 1 && r.locked_by === null)).toBe(true);
    await b.stop();
  });

  it('an attempt that answers after its lease was taken over does not overwrite the result of the new claim', async () => {
    // Attempt 1 hangs past its lease; the delivery is claimed again and attempt 2 goes out; then
    // attempt 1 comes back with a 500, and attempt 2 with a 204: the delivery ends delivered.
    const gates = [deferred(), deferred()];
    let calls = 0;
    const rx = await receiver((_req, res) => {
      const n = calls++;
      void gates[n]!.promise.then(() => res.writeHead(n === 0 ? 500 : 204).end(n === 0 ? 'late' : ''));
    });
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const a = worker();
    await a.start();
    await record(org.id, 1);
    a.wake();
    await rx.waitFor(1);
    t.clock.advance(t.deps.config.webhook.timeoutMs + 31_000);
    a.wake();
    await rx.waitFor(2);
    expect(rx.received[1]!.headers['x-webhook-delivery-id']).toBe(rx.received[0]!.headers['x-webhook-delivery-id']);

    gates[0]!.resolve();
    // Attempt 1's late 500 is recorded (its attempt row) before attempt 2 answers.
    const deliveryId = rx.received[0]!.headers['x-webhook-delivery-id'] as string;
    await waitUntil('the late attempt is recorded', async () =>
      (await attemptRows(t, deliveryId)).some((x) => x.response_status === 500),
    );
    gates[1]!.resolve();
    await a.drain(60_000);
    const [d] = rowsOf(
      await t.deps.db.execute(
        sql`select status, response_status, next_retry_at, locked_by from webhook_deliveries where endpoint_id = ${hook.id}`,
      ),
    );
    expect(d).toMatchObject({ status: 'delivered', response_status: 204, next_retry_at: null, locked_by: null });
    // Nothing more is sent later.
    t.clock.advance(3600_000);
    a.wake();
    await a.drain(60_000);
    expect(rx.received).toHaveLength(2);
    await a.stop();
  });
});

describe('graceful stop', () => {
  it('a worker stopped with deliveries in flight finishes them and records them', async () => {
    const rx = await receiver((_req, res) => setTimeout(() => res.writeHead(200).end('slow ok'), 1500));
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const w = worker();
    await w.start();
    await record(org.id, 5);
    w.wake();
    await rx.waitFor(5);
    expect(await statusCounts(hook.id)).toEqual({ pending: 5 });
    await w.stop();
    expect(await statusCounts(hook.id)).toEqual({ delivered: 5 });
    const [attempts] = rowsOf(
      await t.deps.db.execute(
        sql`select count(*)::int as n from webhook_attempts where response_status = 200 and delivery_id in (select id from webhook_deliveries where endpoint_id = ${hook.id})`,
      ),
    );
    expect(Number(attempts!.n)).toBe(5);
    expect(rx.received).toHaveLength(5);

    // Stopped means stopped: new events wait for the next worker. The stopped one, nudged before
    // the next one even starts, never claims again; the next one sends the new delivery.
    const claimsAtStop = w.stats().claims;
    await record(org.id, 1);
    w.wake();
    expect(await statusCounts(hook.id)).toEqual({ delivered: 5, pending: 1 });
    const next = worker();
    await next.start();
    await next.drain(60_000);
    expect(w.stats().claims).toBe(claimsAtStop);
    expect(rx.received).toHaveLength(6);
    expect(next.stats().claimed).toBe(1);
    expect(new Set(rx.received.map((r) => r.headers['x-webhook-delivery-id'])).size).toBe(6);
    expect(await statusCounts(hook.id)).toEqual({ delivered: 6 });
    await next.stop();
  });
});
