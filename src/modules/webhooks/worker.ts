// The delivery worker (DECISIONS §5). Any number can run: each claims due deliveries with
// FOR UPDATE SKIP LOCKED and holds a lease on them (longer than one attempt can take), so a crashed
// worker's deliveries are taken over when its lease runs out and two workers never send one attempt.
// It wakes on NOTIFY from the transaction that recorded the event, and polls for retries coming due.
//
// Batched (issue 6): a claim is one statement returning the deliveries with their endpoints
// (queue.ts); results are queued and recorded together, one statement per batch, as soon as the
// previous batch is written or after a few milliseconds. A slot is free again once its request has
// answered; a result not yet recorded still holds its lease, so nobody else takes the delivery,
// and a crash before the write means the lease runs out and the delivery is attempted again
// (at least once, same delivery id). stop() and drain() wait for every result to be written.
// No endpoint holds more than `perEndpoint` of the `concurrency` slots, so a slow one cannot hold
// back the others.
import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Deps } from '../../deps.js';
import { newId } from '../../lib/ids.js';
import { DecryptError, decrypt, hmacSha256Hex } from '../../lib/secrets.js';
import { WAKE_CHANNEL } from './outbox.js';
import { claimDue, type ClaimedDelivery, queryOn, recordResults, type ResultRow } from './queue.js';
import { createWebhookSender, type SendResult } from './sender.js';

export interface WorkerOptions {
  /** Deliveries in flight at once (default 256). */
  concurrency?: number;
  /** Deliveries in flight to one endpoint at once (default a quarter of `concurrency`, at least 1). */
  perEndpoint?: number;
  /** Poll for retries coming due (default 1 s); NOTIFY wakes the worker for new events. */
  pollMs?: number;
  /** Results recorded per statement at most (default 500). */
  batchSize?: number;
  /** How long a result may wait for others before it is written, when nothing is being written (default 2 ms). */
  flushDelayMs?: number;
  /** Under load, how long freed slots may wait for others before they are claimed again (default 2 ms). */
  claimDelayMs?: number;
}

/** `t=<unix>,v1=<hex>`: HMAC-SHA256 keyed with the whole `whsec_…` secret over `<t>.<body>` (Stripe's scheme). */
export function signatureHeader(secret: string | KeyObject, timestampS: number, body: string): string {
  const mac = typeof secret === 'string' ? hmacSha256Hex(secret, `${timestampS}.${body}`) : createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex');
  return `t=${timestampS},v1=${mac}`;
}

/** An error PostgreSQL answered about the statement (SQLSTATE), not one about the connection or the server's state. */
function refusedByDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|53|57|58)/.test(code);
}

export function createDeliveryWorker(deps: Deps, opts: WorkerOptions = {}) {
  const workerId = `wrk_${randomBytes(6).toString('hex')}`;
  const concurrency = Math.max(1, opts.concurrency ?? 256);
  const perEndpoint = Math.max(1, Math.min(concurrency, opts.perEndpoint ?? Math.floor(concurrency / 4)));
  const pollMs = opts.pollMs ?? 1000;
  const batchSize = Math.max(1, opts.batchSize ?? 500);
  const flushDelayMs = opts.flushDelayMs ?? 2;
  const claimDelayMs = opts.claimDelayMs ?? 2;
  const minClaim = Math.max(1, Math.min(perEndpoint, Math.floor(concurrency / 8)));
  // Claims pause while this many results wait to be written (the database is slower than the receivers).
  const maxUnrecorded = batchSize * 4;
  const { timeoutMs, retryDelaysS } = deps.config.webhook;
  const maxAttempts = 1 + retryDelaysS.length;
  const leaseMs = timeoutMs + 30_000;
  // One connection per in-flight request of an endpoint: its requests never queue in the pool.
  const sender = createWebhookSender(deps.config.webhook, { connectionsPerOrigin: perEndpoint });
  const db = queryOn(deps);
  const query = db.query;
  // Decrypted secrets (as HMAC keys) by ciphertext: a rotation writes a new ciphertext, so it is seen at once.
  const secrets = new Map<string, KeyObject>();

  let running = false;
  let stopping: Promise<void> | null = null;
  let claims = 0;
  let inFlight = 0;
  /** In-flight deliveries per endpoint id. */
  const busy = new Map<string, number>();
  /** Endpoints the last claim took up to their cap (or skipped, being at it): due rows of them may be left. */
  const capped = new Set<string>();
  let claiming = false;
  /** Something may be claimable: a wake-up, a poll, a full claim, or a slot freed on a capped endpoint. */
  let wantClaim = false;
  /** A wake-up or the poll: claim at once. Otherwise (slots freed under load) claims gather a few slots first. */
  let urgent = false;
  /** Slots freed since the last claim started, and when the last claim ended. */
  let freed = 0;
  let lastClaimEnd = 0;
  let gatherTimer: NodeJS.Timeout | null = null;
  let wake: (() => void) | null = null;
  let loopDone: Promise<void> = Promise.resolve();
  let unlisten: (() => Promise<void>) | null = null;

  // Results not yet written: queued, and the batch being written.
  let queued: ResultRow[] = [];
  let writing = 0;
  let writer: Promise<void> | null = null;
  let flushTimer: NodeJS.Timeout | null = null;
  const settled = new Set<() => void>();
  const stats = { claims: 0, claimed: 0, batches: 0, recorded: 0 };

  const kick = () => wake?.();
  function signal() {
    wantClaim = true;
    urgent = true;
    kick();
  }
  /**
   * May the loop claim now? At once after a wake-up; under load, once `minClaim` slots are free or
   * `claimDelayMs` after the last claim (a claim per freed slot would cost more than the deliveries).
   */
  function claimable(): boolean {
    if (!wantClaim || inFlight >= concurrency || queued.length + writing >= maxUnrecorded) return false;
    if (urgent || freed >= minClaim) return true;
    if (freed === 0) return false;
    const wait = lastClaimEnd + claimDelayMs - performance.now();
    if (wait <= 0) return true;
    gatherTimer ??= setTimeout(() => {
      gatherTimer = null;
      kick();
    }, wait);
    return false;
  }
  /** Wakes whoever waits for the worker to settle (nothing in flight, nothing unwritten). */
  function checkSettled() {
    if (inFlight === 0 && queued.length === 0 && writing === 0) for (const f of settled) f();
  }

  // ---- recording ----------------------------------------------------------------------------

  function enqueue(row: ResultRow) {
    queued.push(row);
    if (writer) return; // written right after the batch in progress
    if (queued.length >= batchSize || !running) startWrite();
    else flushTimer ??= setTimeout(startWrite, flushDelayMs);
  }

  function startWrite() {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = null;
    if (writer || queued.length === 0) return;
    const batch = queued.length > batchSize ? queued.splice(0, batchSize) : queued;
    if (batch === queued) queued = [];
    writing = batch.length;
    writer = write(batch).finally(() => {
      writing = 0;
      writer = null;
      // What came in meanwhile goes as soon as it makes a batch, else after the short delay:
      // batches grow with the load, and a result is never left waiting for long.
      if (queued.length >= batchSize || (queued.length > 0 && !running)) startWrite();
      else if (queued.length > 0) flushTimer ??= setTimeout(startWrite, flushDelayMs);
      else checkSettled();
      // Claims may have paused on the backlog of results.
      kick();
    });
  }

  async function write(batch: ResultRow[]) {
    try {
      await recordResults(query, batch);
      stats.batches++;
      stats.recorded += batch.length;
      return;
    } catch (err) {
      if (batch.length === 1) return lost(batch[0]!, err as Error);
      deps.logger.warn({ err: { message: (err as Error).message }, results: batch.length }, 'webhook results batch failed: writing them one by one');
    }
    // One bad row must not lose the others. A result that cannot be written keeps its lease until
    // it runs out, and the delivery is attempted again (as after a crash). Without a database
    // (no answer, or a connection error) the rest is given up at once rather than tried one by one.
    let down: Error | null = null;
    for (const row of batch) {
      if (down) {
        lost(row, down);
        continue;
      }
      try {
        await recordResults(query, [row], true);
        stats.batches++;
        stats.recorded++;
      } catch (err) {
        lost(row, err as Error);
        if (!refusedByDatabase(err)) down = err as Error;
      }
    }
  }

  function lost(row: ResultRow, err: Error) {
    deps.logger.error({ err: { message: err.message }, deliveryId: row.i }, 'webhook delivery result not recorded: attempted again when its lease runs out');
  }

  /** Resolves once every queued result is written (and nothing is being written). */
  async function flushAll() {
    for (;;) {
      if (writer) await writer;
      else if (queued.length > 0) startWrite();
      else return;
    }
  }

  function resultRow(d: ClaimedDelivery, now: Date, result: SendResult): ResultRow {
    const attempt = d.attempts + 1;
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const retry = !ok && attempt < maxAttempts;
    const at = now.toISOString();
    return {
      o: d.organizationId,
      i: d.id,
      k: d.lockedBy,
      c: false,
      a: newId('dlv', now.getTime()),
      n: attempt,
      rs: result.status,
      rb: result.body,
      e: result.error,
      dm: result.durationMs,
      s: ok ? 'delivered' : retry ? 'pending' : 'failed',
      da: ok ? at : null,
      nr: retry ? new Date(now.getTime() + retryDelaysS[attempt - 1]! * 1000).toISOString() : null,
      t: at,
    };
  }

  const canceledRow = (d: ClaimedDelivery, reason: string): ResultRow => ({
    o: d.organizationId,
    i: d.id,
    k: d.lockedBy,
    c: true,
    e: reason,
    s: 'canceled',
    nr: null,
    t: deps.clock.now().toISOString(),
  });

  // ---- delivering ---------------------------------------------------------------------------

  /** The stored lastError of an attempt whose secret no key of ENCRYPTION_KEY opens. */
  const unreadableSecret = (reason: DecryptError['reason']) =>
    reason === 'no-key'
      ? "the endpoint's signing secret cannot be decrypted with ENCRYPTION_KEY: it was encrypted with a key the list no longer holds (list the old key after the new one, or rotate the endpoint's secret)"
      : "the endpoint's signing secret cannot be decrypted with ENCRYPTION_KEY: the stored value is damaged (rotate the endpoint's secret)";

  function secretOf(enc: string): KeyObject {
    let secret = secrets.get(enc);
    if (secret === undefined) {
      secret = createSecretKey(Buffer.from(decrypt(deps.config.encryptionKeys, enc), 'utf8'));
      if (secrets.size >= 10_000) secrets.clear();
      secrets.set(enc, secret);
    }
    return secret;
  }

  async function deliver(d: ClaimedDelivery): Promise<ResultRow> {
    if (d.deleted || d.url === null || d.secretEnc === null) return canceledRow(d, 'endpoint deleted');
    if (!d.isActive) return canceledRow(d, 'endpoint disabled');
    let secret: KeyObject;
    try {
      secret = secretOf(d.secretEnc);
    } catch (err) {
      if (!(err instanceof DecryptError)) throw err;
      // Encrypted with a key ENCRYPTION_KEY no longer lists (or damaged): nothing is sent, and the
      // attempt fails like an unreachable endpoint, so the delivery is retried (another instance of
      // a rolling key change may still open it) and then ends `failed`, instead of going back to the
      // queue forever.
      const error = unreadableSecret(err.reason);
      deps.logger.error({ deliveryId: d.id, endpointId: d.endpointId }, error);
      return resultRow(d, deps.clock.now(), { status: null, body: null, error, durationMs: 0 });
    }
    // The body keeps a fixed key order: type, timestamp, data.
    const body = JSON.stringify({ type: d.payload.type, timestamp: d.payload.timestamp, data: d.payload.data });
    const t = Math.floor(deps.clock.now().getTime() / 1000);
    const result = await sender.send(d.url, body, {
      'content-type': 'application/json',
      'user-agent': 'Tenantry-Webhooks/1.0',
      'x-webhook-signature': signatureHeader(secret, t, body),
      'x-webhook-event': d.eventType,
      'x-webhook-delivery-id': d.id,
    });
    return resultRow(d, deps.clock.now(), result);
  }

  function begin(d: ClaimedDelivery) {
    inFlight++;
    busy.set(d.endpointId, (busy.get(d.endpointId) ?? 0) + 1);
    deliver(d).then(
      (row) => {
        enqueue(row);
        release(d);
      },
      (err: Error) => {
        // Not recorded (an unexpected error): the lease runs out, then it is tried again.
        deps.logger.error({ err: { message: err.message }, deliveryId: d.id }, 'webhook delivery failed');
        release(d);
      },
    );
  }

  function release(d: ClaimedDelivery) {
    const n = busy.get(d.endpointId)! - 1;
    if (n === 0) busy.delete(d.endpointId);
    else busy.set(d.endpointId, n);
    // The last claim stopped at this endpoint's cap: rows of it may have been left for this slot.
    if (capped.has(d.endpointId)) wantClaim = true;
    inFlight--;
    freed++;
    if (wantClaim && claimable()) kick();
    checkSettled();
  }

  // ---- claiming -----------------------------------------------------------------------------

  async function loop() {
    while (running) {
      const room = concurrency - inFlight;
      if (claimable()) {
        wantClaim = false;
        urgent = false;
        freed = 0;
        if (gatherTimer) clearTimeout(gatherTimer);
        gatherTimer = null;
        // Rows claimed but not yet in flight are neither due nor counted: drain() must wait.
        claiming = true;
        try {
          const now = deps.clock.now();
          const before = new Map(busy);
          // Each claim has its own token, so an attempt that outlived its lease cannot record over a
          // later claim of the same delivery, even one made by this same worker.
          const claimed = await claimDue(query, {
            now,
            until: new Date(now.getTime() + leaseMs),
            token: `${workerId}.${++claims}`,
            limit: room,
            busy,
            perEndpoint,
          });
          stats.claims++;
          stats.claimed += claimed.length;
          for (const d of claimed) begin(d);
          capped.clear();
          for (const d of claimed) before.set(d.endpointId, (before.get(d.endpointId) ?? 0) + 1);
          for (const [endpointId, n] of before) if (n >= perEndpoint) capped.add(endpointId);
          // All it asked for: more may be due.
          if (claimed.length === room) wantClaim = true;
        } catch (err) {
          deps.logger.warn({ err: { message: (err as Error).message } }, 'webhook claim failed');
        } finally {
          claiming = false;
          lastClaimEnd = performance.now();
        }
        continue;
      }
      // Every slot busy, or results waiting to be written: a freed slot or a written batch wakes
      // the loop (no spinning). Otherwise the next NOTIFY, or the poll.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wantClaim = true;
          urgent = true;
          resolve();
        }, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  }

  async function listen(): Promise<void> {
    const h = deps.dbHandle;
    if (h.pglite) {
      const off = await h.pglite.listen(WAKE_CHANNEL, signal);
      unlisten = off;
      return;
    }
    if (!h.url) return;
    let client: pg.Client | null = null;
    let stopped = false;
    const connect = async () => {
      if (stopped) return;
      const c = new pg.Client({ connectionString: h.url! });
      c.on('notification', signal);
      c.on('error', () => {
        // Lost the connection: poll meanwhile and listen again shortly.
        client = null;
        setTimeout(() => void connect().catch(() => {}), 1000).unref();
      });
      try {
        await c.connect();
        await c.query(`listen ${WAKE_CHANNEL}`);
        client = c;
      } catch {
        setTimeout(() => void connect().catch(() => {}), 1000).unref();
      }
    };
    await connect();
    unlisten = async () => {
      stopped = true;
      await client?.end().catch(() => {});
    };
  }

  return {
    workerId,
    async start() {
      if (running || stopping) return;
      running = true;
      // Whatever is due already goes at once.
      wantClaim = true;
      urgent = true;
      await listen();
      loopDone = loop();
    },
    /** Nudge the loop (new events in this process, or a test that moved the clock). */
    wake: signal,
    /** Claims, deliveries claimed, result batches and results written so far (tests, benchmarks). */
    stats: () => ({ ...stats, inFlight, unrecorded: queued.length + writing }),
    /** Resolves when nothing is claimable right now, nothing is in flight and every result is written (tests, benchmarks). */
    async drain(timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      const idle = () => inFlight === 0 && !claiming && queued.length === 0 && writing === 0;
      for (;;) {
        signal();
        // Results waiting for their batch are written now.
        startWrite();
        await new Promise((r) => setTimeout(r, 20));
        if (idle()) {
          const now = deps.clock.now().toISOString();
          const due = await query(
            'tenantry_webhooks_due',
            `select count(*)::int as n from webhook_deliveries where status = 'pending' and next_retry_at <= $1::timestamptz and (locked_until is null or locked_until < $1::timestamptz)`,
            [now],
          );
          if (Number(due[0]?.n ?? 0) === 0 && idle()) return;
        }
        if (Date.now() > deadline) throw new Error('webhook worker did not drain in time');
      }
    },
    /** Graceful stop: no new claims; in-flight deliveries finish and every result is recorded. Calling it again waits for the same stop. */
    stop(): Promise<void> {
      stopping ??= (async () => {
        running = false;
        kick();
        await loopDone;
        if (inFlight > 0) {
          await new Promise<void>((resolve) => {
            const done = () => {
              if (inFlight > 0) return;
              settled.delete(done);
              resolve();
            };
            settled.add(done);
            done();
          });
        }
        await flushAll();
        if (gatherTimer) clearTimeout(gatherTimer);
        gatherTimer = null;
        await unlisten?.();
        unlisten = null;
        await sender.close();
        await db.close();
      })();
      return stopping;
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
