// The delivery worker. Any number can run: each claims due deliveries with FOR UPDATE SKIP LOCKED
// and holds a lease on them (longer than one attempt can take), so a crashed worker's deliveries
// are taken over when its lease runs out and two workers never send one attempt. It wakes on
// NOTIFY from the transaction that recorded the event, and polls for retries coming due.
// See docs/decisions.md ("Lease", "Batched delivery worker", "Concurrency").
//
// This file is the loop and its timers; the parts it wires together:
//   scheduler.ts  when to claim and how much (in-flight counts, caps per endpoint and organization,
//                 where the round robin over organizations starts), no I/O
//   claim.ts      the claim statement (round robin over organizations, each given only its room)
//   queue.ts      the worker's connection, the count of due deliveries
//   attempt.ts    one attempt: sign, send (sender.ts: SSRF rules, timeout), classify (retry.ts)
//   recorder.ts   results queued and written in batches
//   listen.ts     NOTIFY wake-ups
// A slot is free again once its request has answered; a result not yet recorded still holds its
// lease, so nobody else takes the delivery meanwhile. stop() and drain() wait for every result to
// be written. No endpoint holds more than `perEndpoint` of the `concurrency` slots, and no
// organization more than `perOrganization` (WEBHOOK_ORG_CONCURRENCY), so neither a slow endpoint nor
// a busy organization can hold back the others.
import { randomBytes } from 'node:crypto';
import type { Infra } from '../../../infra.js';
import { type AttemptResult, createAttempter } from './attempt.js';
import { listenForWakeups } from './listen.js';
import { type ClaimedDelivery, claimDue } from './claim.js';
import { disableFailing } from '../auto-disable.js';
import { countDue, queryOn } from './queue.js';
import { type FailingEndpoint, Recorder } from './recorder.js';
import { Scheduler, type WorkerOptions, workerSettings } from './scheduler.js';
import { createWebhookSender } from './sender.js';

export { signatureHeader } from './attempt.js';
export type { WorkerOptions } from './scheduler.js';

export function createDeliveryWorker(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'dbHandle' | 'db' | 'mailer' | 'metrics'>,
  opts: WorkerOptions = {},
) {
  const workerId = `wrk_${randomBytes(6).toString('hex')}`;
  const settings = workerSettings(
    { perOrganization: deps.config.webhook.orgConcurrency, ...opts },
    deps.config.webhook.timeoutMs,
  );
  // One connection per in-flight request of an endpoint: its requests never queue in the pool.
  const sender = createWebhookSender(deps.config.webhook, { connectionsPerOrigin: settings.perEndpoint });
  const db = queryOn(deps);
  const attempt = createAttempter(deps, sender);
  const sched = new Scheduler(settings);

  let running = false;
  let stopping: Promise<void> | null = null;
  let claims = 0;
  let gatherTimer: NodeJS.Timeout | null = null;
  let wake: (() => void) | null = null;
  let loopDone: Promise<void> = Promise.resolve();
  let unlisten: (() => Promise<void>) | null = null;
  /** Whoever waits for the worker to settle (stop()). */
  const settled = new Set<() => void>();
  const stats = { claims: 0, claimed: 0 };

  const kick = () => wake?.();
  /** Wakes whoever waits for the worker to settle (nothing in flight, nothing unwritten). */
  function checkSettled() {
    if (sched.inFlight === 0 && recorder.unrecorded === 0) for (const f of settled) f();
  }
  // Endpoints found failing for WEBHOOK_DISABLE_AFTER_H are turned off one batch after another.
  let disabling: Promise<void> = Promise.resolve();
  let disablesQueued = 0;
  function disable(endpoints: FailingEndpoint[]) {
    disablesQueued++;
    disabling = disabling
      .then(() => disableFailing(deps, endpoints))
      .then(
        () => undefined,
        (err: Error) =>
          deps.logger.error(
            { err: { message: err.message }, endpoints },
            'turning off a failing webhook endpoint failed: tried again at its next failed attempt',
          ),
      )
      .finally(() => disablesQueued--);
  }
  const recorder = new Recorder(
    db.query,
    deps.logger,
    { ...settings, disableAfterS: deps.config.webhook.disableAfterH * 3600 },
    { running: () => running, written: kick, empty: checkSettled, failing: disable },
  );

  function signal() {
    sched.signal();
    kick();
  }

  /** May the loop claim now? If freed slots are gathering for a claim, the loop is kicked when their time is up. */
  function claimNow(): boolean {
    const wait = sched.claimWait(recorder.unrecorded);
    if (wait === 0) return true;
    if (wait !== Infinity) {
      gatherTimer ??= setTimeout(() => {
        gatherTimer = null;
        kick();
      }, wait);
    }
    return false;
  }

  function begin(d: ClaimedDelivery) {
    attempt(d).then(
      (result) => {
        if (result.canceled === null && result.outcome.status !== 'delivered') logFailedAttempt(d, result);
        recorder.add(d, result);
        deps.metrics.webhookResult(result.canceled === null ? result.outcome.status : 'canceled');
        release(d);
      },
      (err: Error) => {
        // Not recorded (an unexpected error): the lease runs out, then it is tried again.
        deps.logger.error({ err: { message: err.message }, deliveryId: d.id }, 'webhook delivery failed');
        release(d);
      },
    );
  }

  /** One warn line per failed attempt: the endpoint, what it answered (or why not), what follows. */
  function logFailedAttempt(d: ClaimedDelivery, r: Extract<AttemptResult, { canceled: null }>) {
    const to = d.url ? d.url.replace(/[?#].*$/, '') : null;
    const answer = r.sent.status === null ? (r.sent.error ?? 'no response') : `HTTP ${r.sent.status}`;
    const then =
      r.outcome.status === 'pending' ? `retry at ${r.outcome.nextRetryAt.toISOString()}` : 'no retry left: failed';
    deps.logger.warn(
      {
        endpointId: d.endpointId,
        deliveryId: d.id,
        url: to,
        attempt: r.number,
        status: r.sent.status,
        error: r.sent.error,
        next: r.outcome.status,
      },
      `webhook attempt ${r.number} to ${to} failed (${answer}); ${then}`,
    );
  }

  function release(d: ClaimedDelivery) {
    sched.release(d);
    if (claimNow()) kick();
    checkSettled();
  }

  async function loop() {
    while (running) {
      if (claimNow()) {
        // Rows claimed but not yet in flight are neither due nor counted: drain() must wait (sched.claiming).
        const claim = sched.startClaim();
        if (gatherTimer) clearTimeout(gatherTimer);
        gatherTimer = null;
        try {
          const now = deps.clock.now();
          // Each claim has its own token, so an attempt that outlived its lease cannot record over a
          // later claim of the same delivery, even one made by this same worker.
          const { deliveries, endedOn } = await claimDue(db.query, {
            now,
            until: new Date(now.getTime() + settings.leaseMs),
            token: `${workerId}.${++claims}`,
            limit: claim.room,
            busy: claim.before,
            busyOrgs: claim.beforeOrgs,
            perEndpoint: settings.perEndpoint,
            perOrganization: settings.perOrganization,
            after: claim.after,
          });
          stats.claims++;
          stats.claimed += deliveries.length;
          sched.claimed(claim, deliveries, endedOn);
          for (const d of deliveries) begin(d);
        } catch (err) {
          deps.logger.warn({ err: { message: (err as Error).message } }, 'webhook claim failed');
        } finally {
          sched.endClaim();
        }
        continue;
      }
      // Every slot busy, or results waiting to be written: a freed slot or a written batch wakes
      // the loop (no spinning). Otherwise the next NOTIFY, or the poll.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          sched.signal();
          resolve();
        }, settings.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  }

  return {
    workerId,
    async start() {
      if (running || stopping) return;
      running = true;
      // Whatever is due already goes at once.
      sched.signal();
      unlisten = await listenForWakeups(deps.dbHandle, signal);
      loopDone = loop();
    },
    /** Nudge the loop (new events in this process, or a test that moved the clock). */
    wake: signal,
    /** Claims, deliveries claimed, result batches and results written so far (tests, benchmarks). */
    stats: () => ({
      ...stats,
      batches: recorder.batches,
      recorded: recorder.recorded,
      inFlight: sched.inFlight,
      unrecorded: recorder.unrecorded,
    }),
    /** Resolves when nothing is claimable right now, nothing is in flight and every result is written (tests, benchmarks). */
    async drain(timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      const idle = () => sched.inFlight === 0 && !sched.claiming && recorder.unrecorded === 0 && disablesQueued === 0;
      for (;;) {
        signal();
        // Results waiting for their batch are written now.
        recorder.startWrite();
        await new Promise((r) => setTimeout(r, 20));
        if (idle() && (await countDue(db.query, deps.clock.now())) === 0 && idle()) return;
        if (Date.now() > deadline) throw new Error('webhook worker did not drain in time');
      }
    },
    /** Graceful stop: no new claims; in-flight deliveries finish and every result is recorded. Calling it again waits for the same stop. */
    stop(): Promise<void> {
      stopping ??= (async () => {
        running = false;
        kick();
        await loopDone;
        if (sched.inFlight > 0) {
          await new Promise<void>((resolve) => {
            const done = () => {
              if (sched.inFlight > 0) return;
              settled.delete(done);
              resolve();
            };
            settled.add(done);
            done();
          });
        }
        await recorder.flushAll();
        await disabling;
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
