// The worker's own connection to the database, and how many deliveries are due and not leased
// (drain() waits for none). The claim is claim.ts; writing results is recorder.ts.
// On PostgreSQL the worker has two connections of its own (a claim and a batch write can run at
// once, and neither waits behind the API's queries for a pooled connection), where both statements
// are prepared once and run with their generic plan: planning the claim anew for each call cost
// more than running it.
import pg from 'pg';
import type { Infra } from '../../../infra.js';

type Rows = Array<Record<string, unknown>>;
export type Query = (name: string, text: string, values: unknown[]) => Promise<Rows>;

export function queryOn(deps: Pick<Infra, 'logger' | 'dbHandle'>): { query: Query; close(): Promise<void> } {
  const { pool, pglite, url } = deps.dbHandle;
  if (pool && url) {
    const own = new pg.Pool({
      connectionString: url,
      max: 2,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      options: '-c plan_cache_mode=force_generic_plan',
    });
    const lost = (err: Error) =>
      deps.logger.warn({ err: { message: err.message } }, 'webhook worker: database connection lost');
    own.on('error', lost);
    own.on('connect', (client) => client.on('error', lost));
    return {
      query: async (name, text, values) => (await own.query({ name, text, values })).rows as Rows,
      close: () => own.end(),
    };
  }
  if (pool)
    return {
      query: async (name, text, values) => (await pool.query({ name, text, values })).rows as Rows,
      close: async () => {},
    };
  if (pglite)
    return {
      query: async (_name, text, values) => (await pglite.query(text, values)).rows as Rows,
      close: async () => {},
    };
  throw new Error('webhook worker: no database driver');
}

/** Deliveries due at `now` that no lease holds. */
export async function countDue(query: Query, now: Date): Promise<number> {
  const rows = await query(
    'tenantry_webhooks_due',
    `select count(*)::int as n from webhook_deliveries where status = 'pending' and next_retry_at <= $1::timestamptz and (locked_until is null or locked_until < $1::timestamptz)`,
    [now.toISOString()],
  );
  return Number(rows[0]?.n ?? 0);
}
