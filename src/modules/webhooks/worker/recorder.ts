// Writing the results of attempts: the attempt row, and the delivery's new state (delivered,
// pending until its next attempt, failed, or canceled). Results are queued and written together,
// one statement per batch, as soon as the batch in progress is written or after `flushDelayMs`:
// batches grow with the load, and a result never waits long on a quiet worker.
// A result not yet written still holds its delivery's lease, so no other worker sends that
// delivery meanwhile; if this process dies before the write, the lease runs out and the delivery
// is attempted again under the same id (at least once). See docs/decisions.md, "Batched delivery
// worker".
import type { Infra } from '../../../infra.js';
import { newId } from '../../../lib/ids.js';
import type { AttemptResult } from './attempt.js';
import type { ClaimedDelivery } from './claim.js';
import type { Query } from './queue.js';

/** One result to record, in the short keys of the statement below (JSON is its only parameter). */
export interface ResultRow {
  /** organization_id, delivery id, claim token, endpoint id */
  o: string;
  i: string;
  k: string;
  ep: string;
  /** Canceled (no attempt made): only status, last_error and next_retry_at change. */
  c: boolean;
  /** The attempt's id and number, response status and body, error, duration. */
  a?: string;
  n?: number;
  rs?: number | null;
  rb?: string | null;
  e: string | null;
  dm?: number;
  /** New status, delivered_at, next_retry_at, and the time the result came in (ISO). */
  s: string;
  da?: string | null;
  nr: string | null;
  t: string;
}

// Attempts are inserted whatever the update finds: an attempt that outlived its lease was still
// sent. The update is guarded on the claim's token, so such a late result cannot overwrite what a
// later claim of the same delivery recorded, and on 'pending', so a delivery canceled meanwhile
// stays canceled. A batch that failed is written again row by row with ON CONFLICT DO NOTHING, so
// a batch that did commit before its connection broke is not recorded twice (the batch itself goes
// without: the speculative insertion costs PostgreSQL about a tenth of the statement).
//
// The same statement keeps each endpoint's failure streak (webhook_endpoints.failing_since, the
// first failed attempt since its last success): a success in the batch ends it, a failure after
// the batch's last success starts it unless it runs already. Only a change is written, so an
// endpoint that keeps answering costs nothing here. It returns the active endpoints whose streak
// has lasted $2 seconds as of the batch's last attempt: the worker turns them off (auto-disable.ts).
const record = (onConflict: string) => `
with r as (
  select * from json_to_recordset($1::json) as x(
    o text, i text, k text, ep text, c boolean, a text, n int, rs int, rb text, e text, dm int,
    s text, da timestamptz, nr timestamptz, t timestamptz)
), u as (
  update webhook_deliveries d set
    status = r.s,
    attempts = case when r.c then d.attempts else r.n end,
    response_status = case when r.c then d.response_status else r.rs end,
    response_body = case when r.c then d.response_body else r.rb end,
    delivered_at = case when r.c then d.delivered_at else r.da end,
    last_error = r.e,
    next_retry_at = r.nr,
    locked_until = null,
    locked_by = null,
    updated_at = r.t
  from r
  where d.organization_id = r.o and d.id = r.i and d.locked_by = r.k and d.status = 'pending'
), ins as (
  insert into webhook_attempts (organization_id, id, delivery_id, attempt, response_status, response_body, error, duration_ms, created_at)
  select o, a, i, n, rs, rb, e, dm, t from r where not c
  ${onConflict}
), ok as (
  select o, ep, max(t) as last_ok from r where not c and s = 'delivered' group by o, ep
), streak as (
  select r.o, r.ep, max(r.t) as latest,
    case when ok.last_ok is null then min(r.t) else min(r.t) filter (where r.s <> 'delivered' and r.t > ok.last_ok) end as fail_from,
    ok.last_ok is not null as ended
  from r left join ok on ok.o = r.o and ok.ep = r.ep
  where not r.c
  group by r.o, r.ep, ok.last_ok
), next as (
  select e.organization_id, e.id, s.latest, e.is_active, e.deleted_at, e.failing_since as was,
    case when s.fail_from is null then null when s.ended then s.fail_from else coalesce(e.failing_since, s.fail_from) end as since
  from streak s join webhook_endpoints e on e.organization_id = s.o and e.id = s.ep
), upd as (
  update webhook_endpoints e set failing_since = n.since
  from next n
  where e.organization_id = n.organization_id and e.id = n.id and n.since is distinct from n.was
)
select organization_id, id from next
where is_active and deleted_at is null and since is not null and since <= latest - make_interval(secs => $2::int)`;
const RECORD = record('');
const RECORD_AGAIN = record('on conflict do nothing');

/** An endpoint whose attempts have all failed for WEBHOOK_DISABLE_AFTER_H. */
export interface FailingEndpoint {
  organizationId: string;
  endpointId: string;
}

export async function recordResults(
  query: Query,
  rows: ResultRow[],
  disableAfterS: number,
  again = false,
): Promise<FailingEndpoint[]> {
  const result = again
    ? await query('tenantry_webhooks_record_again', RECORD_AGAIN, [JSON.stringify(rows), disableAfterS])
    : await query('tenantry_webhooks_record', RECORD, [JSON.stringify(rows), disableAfterS]);
  return result.map((r) => ({ organizationId: r.organization_id as string, endpointId: r.id as string }));
}

/** The row that records `result` of the attempt on claimed delivery `d`. */
export function rowOf(d: ClaimedDelivery, result: AttemptResult): ResultRow {
  const t = result.at.toISOString();
  if (result.canceled !== null)
    return {
      o: d.organizationId,
      i: d.id,
      k: d.lockedBy,
      ep: d.endpointId,
      c: true,
      e: result.canceled,
      s: 'canceled',
      nr: null,
      t,
    };
  const { sent, outcome } = result;
  return {
    o: d.organizationId,
    i: d.id,
    k: d.lockedBy,
    ep: d.endpointId,
    c: false,
    a: newId('dlv', result.at.getTime()),
    n: result.number,
    rs: sent.status,
    rb: sent.body,
    e: sent.error,
    dm: sent.durationMs,
    s: outcome.status,
    da: outcome.status === 'delivered' ? t : null,
    nr: outcome.status === 'pending' ? outcome.nextRetryAt.toISOString() : null,
    t,
  };
}

/** An error PostgreSQL answered about the statement (SQLSTATE), not one about the connection or the server's state. */
export function refusedByDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|53|57|58)/.test(code);
}

export interface RecorderHooks {
  /** Is the worker running? Once it stops, every result is written at once. */
  running(): boolean;
  /** A batch was written: claims may have paused on the backlog of results. */
  written(): void;
  /** Nothing queued nor being written any more. */
  empty(): void;
  /** Endpoints whose attempts have all failed for the disable period, as of a batch just written. */
  failing(endpoints: FailingEndpoint[]): void;
}

export class Recorder {
  /** Result batches and results written so far. */
  batches = 0;
  recorded = 0;
  private queued: ResultRow[] = [];
  /** Results in the batch being written. */
  private writing = 0;
  private writer: Promise<void> | null = null;
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly query: Query,
    private readonly logger: Pick<Infra['logger'], 'warn' | 'error'>,
    private readonly opts: { batchSize: number; flushDelayMs: number; disableAfterS: number },
    private readonly hooks: RecorderHooks,
  ) {}

  /** Results queued or being written. */
  get unrecorded(): number {
    return this.queued.length + this.writing;
  }

  add(d: ClaimedDelivery, result: AttemptResult): void {
    this.queued.push(rowOf(d, result));
    if (this.writer) return; // written right after the batch in progress
    if (this.queued.length >= this.opts.batchSize || !this.hooks.running()) this.startWrite();
    else this.flushTimer ??= setTimeout(this.startWrite, this.opts.flushDelayMs);
  }

  /** Writes what is queued now, unless a batch is being written (what is queued goes right after it). */
  readonly startWrite = (): void => {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.writer || this.queued.length === 0) return;
    const { batchSize, flushDelayMs } = this.opts;
    const batch = this.queued.length > batchSize ? this.queued.splice(0, batchSize) : this.queued;
    if (batch === this.queued) this.queued = [];
    this.writing = batch.length;
    this.writer = this.write(batch).finally(() => {
      this.writing = 0;
      this.writer = null;
      const n = this.queued.length;
      // What came in meanwhile goes as soon as it makes a batch, else after the short delay:
      // batches grow with the load, and a result is never left waiting for long.
      if (n >= batchSize || (n > 0 && !this.hooks.running())) this.startWrite();
      else if (n > 0) this.flushTimer ??= setTimeout(this.startWrite, flushDelayMs);
      else this.hooks.empty();
      this.hooks.written();
    });
  };

  /** Resolves once every queued result is written (and nothing is being written). */
  async flushAll(): Promise<void> {
    for (;;) {
      if (this.writer) await this.writer;
      else if (this.queued.length > 0) this.startWrite();
      else return;
    }
  }

  private async write(batch: ResultRow[]): Promise<void> {
    try {
      const failing = await recordResults(this.query, batch, this.opts.disableAfterS);
      this.batches++;
      this.recorded += batch.length;
      if (failing.length > 0) this.hooks.failing(failing);
      return;
    } catch (err) {
      if (batch.length === 1) return this.lost(batch[0]!, err as Error);
      this.logger.warn(
        { err: { message: (err as Error).message }, results: batch.length },
        'webhook results batch failed: writing them one by one',
      );
    }
    // One bad row must not lose the others. A result that cannot be written keeps its lease until
    // it runs out, and the delivery is attempted again (as after a crash). Without a database
    // (no answer, or a connection error) the rest is given up at once rather than tried one by one.
    let down: Error | null = null;
    for (const row of batch) {
      if (down) {
        this.lost(row, down);
        continue;
      }
      try {
        const failing = await recordResults(this.query, [row], this.opts.disableAfterS, true);
        this.batches++;
        this.recorded++;
        if (failing.length > 0) this.hooks.failing(failing);
      } catch (err) {
        this.lost(row, err as Error);
        if (!refusedByDatabase(err)) down = err as Error;
      }
    }
  }

  private lost(row: ResultRow, err: Error): void {
    this.logger.error(
      { err: { message: err.message }, deliveryId: row.i },
      'webhook delivery result not recorded: attempted again when its lease runs out',
    );
  }
}
