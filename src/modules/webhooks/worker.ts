// The delivery worker (DECISIONS §5). Any number can run: each claims due deliveries with
// FOR UPDATE SKIP LOCKED and holds a lease on them (longer than one attempt can take), so a crashed
// worker's deliveries are taken over when its lease runs out and two workers never send one attempt.
// It wakes on NOTIFY from the transaction that recorded the event, and polls for retries coming due.
import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import pg from 'pg';
import type { Deps } from '../../deps.js';
import { newId } from '../../lib/ids.js';
import { decrypt, hmacSha256Hex } from '../../lib/secrets.js';
import { createWebhookSender, type SendResult } from './sender.js';
import { type DeliveryRow, webhookAttempts, webhookDeliveries, webhookEndpoints } from './tables.js';
import { WAKE_CHANNEL } from './outbox.js';

export interface WorkerOptions {
  concurrency?: number;
  pollMs?: number;
}

/** `t=<unix>,v1=<hex>`: HMAC-SHA256 keyed with the whole `whsec_…` secret over `<t>.<body>` (Stripe's scheme). */
export function signatureHeader(secret: string, timestampS: number, body: string): string {
  return `t=${timestampS},v1=${hmacSha256Hex(secret, `${timestampS}.${body}`)}`;
}

export function createDeliveryWorker(deps: Deps, opts: WorkerOptions = {}) {
  const workerId = `wrk_${randomBytes(6).toString('hex')}`;
  const concurrency = opts.concurrency ?? 64;
  const pollMs = opts.pollMs ?? 1000;
  const { timeoutMs, retryDelaysS } = deps.config.webhook;
  const maxAttempts = 1 + retryDelaysS.length;
  const leaseMs = timeoutMs + 30_000;
  const sender = createWebhookSender(deps.config.webhook);
  const secrets = new Map<string, string>();

  let running = false;
  let stopping: Promise<void> | null = null;
  let claims = 0;
  let inFlight = 0;
  let claiming = false;
  let wake: (() => void) | null = null;
  let wakePending = false;
  let loopDone: Promise<void> = Promise.resolve();
  let unlisten: (() => Promise<void>) | null = null;
  const idle = new Set<() => void>();

  function signal() {
    wakePending = true;
    wake?.();
  }

  async function claim(limit: number): Promise<DeliveryRow[]> {
    const now = deps.clock.now();
    const until = new Date(now.getTime() + leaseMs);
    // Each claim has its own token, so an attempt that outlived its lease cannot record over a
    // later claim of the same delivery, even one made by this same worker.
    const token = `${workerId}.${++claims}`;
    const result = (await deps.db.execute(sql`
      update webhook_deliveries d set locked_until = ${until.toISOString()}::timestamptz, locked_by = ${token}
      from (
        select organization_id, id from webhook_deliveries
        where status = 'pending' and next_retry_at <= ${now.toISOString()}::timestamptz
          and (locked_until is null or locked_until < ${now.toISOString()}::timestamptz)
        order by next_retry_at
        limit ${limit}
        for update skip locked
      ) due
      where d.organization_id = due.organization_id and d.id = due.id
      returning d.organization_id, d.id`)) as unknown as { rows: Array<{ organization_id: string; id: string }> };
    if (result.rows.length === 0) return [];
    const ids = result.rows.map((r) => sql`(${r.organization_id}, ${r.id})`);
    return deps.db
      .select()
      .from(webhookDeliveries)
      .where(sql`(${webhookDeliveries.organizationId}, ${webhookDeliveries.id}) in (${sql.join(ids, sql`, `)})`);
  }

  async function endpointFor(d: DeliveryRow) {
    const [e] = await deps.db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.organizationId, d.organizationId), eq(webhookEndpoints.id, d.endpointId)));
    if (!e) return null;
    const cacheKey = `${e.organizationId}:${e.id}:${e.secretEnc}`;
    let secret = secrets.get(cacheKey);
    if (!secret) {
      secret = decrypt(deps.config.encryptionKey, e.secretEnc);
      if (secrets.size > 10_000) secrets.clear();
      secrets.set(cacheKey, secret);
    }
    return { endpoint: e, secret };
  }

  async function finish(d: DeliveryRow, result: SendResult | { canceled: string }) {
    const now = deps.clock.now();
    await deps.db.transaction(async (tx) => {
      let set: Partial<DeliveryRow>;
      if ('canceled' in result) {
        set = { status: 'canceled', lastError: result.canceled, nextRetryAt: null };
      } else {
        const attempt = d.attempts + 1;
        await tx.insert(webhookAttempts).values({
          organizationId: d.organizationId,
          id: newId('dlv', now.getTime()),
          deliveryId: d.id,
          attempt,
          responseStatus: result.status,
          responseBody: result.body,
          error: result.error,
          durationMs: result.durationMs,
          createdAt: now,
        });
        const ok = result.status !== null && result.status >= 200 && result.status < 300;
        const retry = !ok && attempt < maxAttempts;
        set = {
          attempts: attempt,
          responseStatus: result.status,
          responseBody: result.body,
          lastError: result.error,
          status: ok ? 'delivered' : retry ? 'pending' : 'failed',
          deliveredAt: ok ? now : null,
          nextRetryAt: retry ? new Date(now.getTime() + retryDelaysS[attempt - 1]! * 1000) : null,
        };
      }
      // Guarded on this claim's lease: a delivery canceled or claimed again meanwhile keeps that.
      await tx
        .update(webhookDeliveries)
        .set({ ...set, lockedUntil: null, lockedBy: null, updatedAt: now })
        .where(
          and(
            eq(webhookDeliveries.organizationId, d.organizationId),
            eq(webhookDeliveries.id, d.id),
            eq(webhookDeliveries.lockedBy, d.lockedBy!),
            eq(webhookDeliveries.status, 'pending'),
          ),
        );
    });
  }

  async function deliver(d: DeliveryRow) {
    const target = await endpointFor(d);
    if (!target || target.endpoint.deletedAt) return finish(d, { canceled: 'endpoint deleted' });
    if (!target.endpoint.isActive) return finish(d, { canceled: 'endpoint disabled' });
    // The body keeps a fixed key order: type, timestamp, data.
    const body = JSON.stringify({ type: d.payload.type, timestamp: d.payload.timestamp, data: d.payload.data });
    const t = Math.floor(deps.clock.now().getTime() / 1000);
    const result = await sender.send(target.endpoint.url, body, {
      'content-type': 'application/json',
      'user-agent': 'Tenantry-Webhooks/1.0',
      'x-webhook-signature': signatureHeader(target.secret, t, body),
      'x-webhook-event': d.eventType,
      'x-webhook-delivery-id': d.id,
    });
    return finish(d, result);
  }

  async function loop() {
    while (running) {
      const room = concurrency - inFlight;
      let claimed: DeliveryRow[] = [];
      if (room > 0) {
        wakePending = false;
        // Rows claimed but not yet in flight are neither due nor counted: drain() must wait.
        claiming = true;
        try {
          claimed = await claim(room);
        } catch (err) {
          deps.logger.warn({ err: { message: (err as Error).message } }, 'webhook claim failed');
        }
      }
      for (const d of claimed) {
        inFlight++;
        deliver(d)
          .catch((err: Error) => deps.logger.error({ err: { message: err.message }, deliveryId: d.id }, 'webhook delivery failed'))
          .finally(() => {
            inFlight--;
            signal();
            if (inFlight === 0) for (const f of idle) f();
          });
      }
      claiming = false;
      if (claimed.length > 0 && claimed.length === room) continue;
      if (!running) break;
      // With every slot busy, a wake-up can do nothing before a delivery ends (which wakes us
      // again): wait for it rather than spin, which would block the event loop for good.
      if (wakePending && room > 0) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
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
      await listen();
      loopDone = loop();
    },
    /** Nudge the loop (new events in this process, or a test that moved the clock). */
    wake: signal,
    /** Resolves when nothing is claimable right now and nothing is in flight (tests, benchmarks). */
    async drain(timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        signal();
        await new Promise((r) => setTimeout(r, 20));
        if (inFlight === 0 && !claiming) {
          const now = deps.clock.now().toISOString();
          const due = (await deps.db.execute(
            sql`select count(*)::int as n from webhook_deliveries where status = 'pending' and next_retry_at <= ${now}::timestamptz and (locked_until is null or locked_until < ${now}::timestamptz)`,
          )) as unknown as { rows: Array<{ n: number }> };
          if (Number(due.rows[0]?.n ?? 0) === 0 && inFlight === 0 && !claiming) return;
        }
        if (Date.now() > deadline) throw new Error('webhook worker did not drain in time');
      }
    },
    /** Graceful stop: no new claims; in-flight deliveries finish and are recorded. Calling it again waits for the same stop. */
    stop(): Promise<void> {
      stopping ??= (async () => {
        running = false;
        signal();
        await loopDone;
        if (inFlight > 0) await new Promise<void>((resolve) => idle.add(resolve));
        await unlisten?.();
        unlisten = null;
        await sender.close();
      })();
      return stopping;
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
