// What the delivery-worker tests share (src/modules/webhooks/*.test.ts):
// workers and local receivers that are all stopped by `stopAll`, events recorded straight into the
// outbox, delivery states counted in the database, and waiting for a condition.
import { sql } from 'drizzle-orm';
import { recordEvent } from '../src/platform/outbox.js';
import { createDeliveryWorker, type DeliveryWorker } from '../src/modules/webhooks/worker/index.js';
import { type Receiver, rowsOf, startReceiver } from './factories.js';
import type { TestApp } from './harness.js';

/** `app` is read when a fixture is used, so the fixtures can be made before the app exists. */
export function workerFixtures(app: () => TestApp) {
  const receivers: Receiver[] = [];
  const workers: DeliveryWorker[] = [];
  return {
    worker(opts: Parameters<typeof createDeliveryWorker>[1] = {}): DeliveryWorker {
      const w = createDeliveryWorker(app().deps, { pollMs: 50, ...opts });
      workers.push(w);
      return w;
    },

    async receiver(handler?: Receiver['handler']): Promise<Receiver> {
      const r = await startReceiver(handler);
      receivers.push(r);
      return r;
    },

    /** `n` events for the organization, committed `perTransaction` at a time. */
    async record(orgId: string, n: number, { type = 'load.tested', perTransaction = 10 } = {}): Promise<void> {
      const { deps } = app();
      for (let i = 0; i < n; i += perTransaction) {
        await deps.db.transaction(async (tx) => {
          for (let j = i; j < Math.min(n, i + perTransaction); j++) await recordEvent(deps, tx, orgId, type, { n: j });
        });
      }
    },

    async statusCounts(endpointId: string): Promise<Record<string, number>> {
      const rows = rowsOf(await app().deps.db.execute(sql`select status, count(*)::int as n from webhook_deliveries where endpoint_id = ${endpointId} group by status`));
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },

    /** Closes every receiver and stops every worker made so far. */
    async stopAll(): Promise<void> {
      for (const r of receivers.splice(0)) await r.close();
      for (const w of workers.splice(0)) await w.stop().catch(() => {});
    },
  };
}

export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
