// The retention job (docs/deploy.md#retention): every hour, started by main.ts and worker.ts, it
// deletes what nobody reads any more:
//   email tokens           expired (every one is single-use and short-lived)
//   sessions               ended (revoked or expired) SESSION_DAYS or more ago
//   webhook deliveries     finished (delivered, failed, canceled; never pending) and unchanged for
//     and their attempts   WEBHOOK_RETENTION_DAYS
//   event idempotency keys older than their 24-hour window
//   events                 older than WEBHOOK_RETENTION_DAYS with no delivery left
// Several instances may run it: on PostgreSQL one at a time (pg_try_advisory_lock: the others skip
// that hour), on the embedded database one process anyway. Rows go in bounded batches (`batchSize`
// per statement, by primary key, a short pause between statements), so no statement holds its locks
// for long; a row deleted by someone else meanwhile is simply not found again.
import { type SQL, sql } from 'drizzle-orm';
import type { Infra } from '../infra.js';

export const SESSION_DAYS = 30;
const IDEMPOTENCY_HOURS = 24;
const DAY_MS = 24 * 3600_000;
// Any fixed number, distinct from the migrations' (db/migrate.ts).
const RETENTION_LOCK = 7_345_002;

export interface RetentionOptions {
  /** Rows per statement (1000). */
  batchSize?: number;
  /** Pause between two statements of one kind, in ms (20). */
  pauseMs?: number;
  /** Between runs (an hour), and before the first one (a minute, so a start is not slowed). */
  intervalMs?: number;
  firstRunMs?: number;
}

export interface RetentionResult {
  emailTokens: number;
  sessions: number;
  deliveries: number;
  attempts: number;
  idempotencyKeys: number;
  events: number;
  /** Delete statements run. */
  statements: number;
}

type Deps = Pick<Infra, 'db' | 'dbHandle' | 'clock' | 'logger' | 'config'>;

const FINISHED = sql`status in ('delivered', 'failed', 'canceled')`;

/** The delete statements of one run, each taking at most `n` rows and answering how many it took. */
function statements(
  now: Date,
  retentionDays: number,
  n: number,
): Record<Exclude<keyof RetentionResult, 'statements' | 'attempts'>, SQL> {
  const at = (ms: number) => new Date(now.getTime() - ms).toISOString();
  const sessionsBefore = at(SESSION_DAYS * DAY_MS);
  const webhooksBefore = at(retentionDays * DAY_MS);
  return {
    emailTokens: sql`with d as (
      delete from email_tokens where expires_at < ${now.toISOString()}::timestamptz
        and id in (select id from email_tokens where expires_at < ${now.toISOString()}::timestamptz limit ${n})
      returning 1) select count(*)::int as n from d`,
    sessions: sql`with d as (
      delete from sessions where (revoked_at < ${sessionsBefore}::timestamptz or expires_at < ${sessionsBefore}::timestamptz)
        and id in (select id from sessions where revoked_at < ${sessionsBefore}::timestamptz or expires_at < ${sessionsBefore}::timestamptz limit ${n})
      returning 1) select count(*)::int as n from d`,
    // The status is checked again on the row deleted: a delivery queued again meanwhile stays.
    deliveries: sql`with d as (
      delete from webhook_deliveries where ${FINISHED} and updated_at < ${webhooksBefore}::timestamptz
        and (organization_id, id) in (select organization_id, id from webhook_deliveries where ${FINISHED} and updated_at < ${webhooksBefore}::timestamptz limit ${n})
      returning organization_id, id
    ), a as (
      delete from webhook_attempts w using d where w.organization_id = d.organization_id and w.delivery_id = d.id returning 1
    ) select (select count(*) from d)::int as n, (select count(*) from a)::int as attempts`,
    idempotencyKeys: sql`with d as (
      delete from event_idempotency_keys where created_at < ${at(IDEMPOTENCY_HOURS * 3600_000)}::timestamptz
        and (organization_id, key) in (select organization_id, key from event_idempotency_keys where created_at < ${at(IDEMPOTENCY_HOURS * 3600_000)}::timestamptz limit ${n})
      returning 1) select count(*)::int as n from d`,
    events: sql`with d as (
      delete from events e where e.created_at < ${webhooksBefore}::timestamptz
        and not exists (select 1 from webhook_deliveries w where w.organization_id = e.organization_id and w.event_id = e.id)
        and (e.organization_id, e.id) in (
          select x.organization_id, x.id from events x where x.created_at < ${webhooksBefore}::timestamptz
            and not exists (select 1 from webhook_deliveries w where w.organization_id = x.organization_id and w.event_id = x.id)
          limit ${n})
      returning 1) select count(*)::int as n from d`,
  };
}

// The embedded database belongs to one process; runs of this process take turns on it.
const embeddedRuns = new WeakSet<object>();

/** Runs `fn` unless another run holds the lock (then null). */
async function exclusively<T>(deps: Deps, fn: () => Promise<T>): Promise<T | null> {
  const { pool, pglite } = deps.dbHandle;
  if (pool) {
    const client = await pool.connect();
    try {
      const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [RETENTION_LOCK]);
      if (!rows[0]?.ok) return null;
      try {
        return await fn();
      } finally {
        await client.query('select pg_advisory_unlock($1)', [RETENTION_LOCK]);
      }
    } finally {
      client.release();
    }
  }
  const key = pglite ?? deps.dbHandle;
  if (embeddedRuns.has(key)) return null;
  embeddedRuns.add(key);
  try {
    return await fn();
  } finally {
    embeddedRuns.delete(key);
  }
}

export function createRetentionJob(deps: Deps, options: RetentionOptions = {}) {
  const batchSize = options.batchSize ?? 1000;
  const pauseMs = options.pauseMs ?? 20;
  const intervalMs = options.intervalMs ?? 3600_000;
  const firstRunMs = options.firstRunMs ?? 60_000;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();

  async function run(): Promise<RetentionResult> {
    const result: RetentionResult = {
      emailTokens: 0,
      sessions: 0,
      deliveries: 0,
      attempts: 0,
      idempotencyKeys: 0,
      events: 0,
      statements: 0,
    };
    const all = statements(deps.clock.now(), deps.config.webhook.retentionDays, batchSize);
    // Deliveries before events: the events they free go in the same run.
    for (const kind of ['emailTokens', 'sessions', 'deliveries', 'idempotencyKeys', 'events'] as const) {
      for (;;) {
        if (stopped) return result;
        const rows = (
          (await deps.db.execute(all[kind])) as unknown as { rows: Array<{ n: number; attempts?: number }> }
        ).rows;
        const n = Number(rows[0]?.n ?? 0);
        result[kind] += n;
        result.attempts += Number(rows[0]?.attempts ?? 0);
        result.statements++;
        if (n < batchSize) break;
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    }
    return result;
  }

  const job = {
    /** One run now; null when another instance (or run) holds the lock. */
    runOnce(): Promise<RetentionResult | null> {
      const once = exclusively(deps, run);
      current = once.catch(() => null);
      return once;
    },
    /** Runs after `firstRunMs`, then every `intervalMs`; a failed run is logged and tried again at the next. */
    start(): void {
      if (timer || stopped) return;
      const tick = async () => {
        try {
          const result = await job.runOnce();
          const deleted = result && Object.entries(result).some(([k, v]) => k !== 'statements' && v > 0);
          if (deleted) deps.logger.info({ retention: result }, 'retention: old rows deleted');
        } catch (err) {
          deps.logger.warn(
            { err: { message: (err as Error).message } },
            'retention run failed: tried again at the next',
          );
        }
        if (!stopped) timer = setTimeout(() => void tick(), intervalMs).unref();
      };
      timer = setTimeout(() => void tick(), firstRunMs).unref();
    },
    /** No new run; a run in progress stops after its current statement. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await current;
    },
  };
  return job;
}

export type RetentionJob = ReturnType<typeof createRetentionJob>;
