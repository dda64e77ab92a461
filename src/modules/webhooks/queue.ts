// The delivery worker's two statements (DECISIONS §5, issue 6), sent straight to the driver.
//   claim:  one round trip picks due deliveries FOR UPDATE SKIP LOCKED, leases them to a claim
//           token, and returns them joined with their endpoint (url, secret, state).
//   record: one statement records a batch of results: the attempt rows, and each delivery's new
//           state guarded on that claim's token and on status 'pending', as a single-row update was.
// On PostgreSQL the worker has two connections of its own (a claim and a batch write can run at
// once, and neither waits behind the API's queries for a pooled connection), where both statements
// are prepared once and run with their generic plan: planning the claim anew for each call cost
// more than running it.
import pg from 'pg';
import type { Deps } from '../../deps.js';

type Rows = Array<Record<string, unknown>>;
type Query = (name: string, text: string, values: unknown[]) => Promise<Rows>;

export function queryOn(deps: Deps): { query: Query; close(): Promise<void> } {
  const { pool, pglite, url } = deps.dbHandle;
  if (pool && url) {
    const own = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000, options: '-c plan_cache_mode=force_generic_plan' });
    const lost = (err: Error) => deps.logger.warn({ err: { message: err.message } }, 'webhook worker: database connection lost');
    own.on('error', lost);
    own.on('connect', (client) => client.on('error', lost));
    return { query: async (name, text, values) => (await own.query({ name, text, values })).rows as Rows, close: () => own.end() };
  }
  if (pool) return { query: async (name, text, values) => (await pool.query({ name, text, values })).rows as Rows, close: async () => {} };
  if (pglite) return { query: async (_name, text, values) => (await pglite.query(text, values)).rows as Rows, close: async () => {} };
  throw new Error('webhook worker: no database driver');
}

export interface ClaimedDelivery {
  organizationId: string;
  id: string;
  endpointId: string;
  eventType: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Attempts made before this claim. */
  attempts: number;
  /** The claim token the lease is held under. */
  lockedBy: string;
  /** Null when the endpoint row is gone. */
  url: string | null;
  secretEnc: string | null;
  isActive: boolean;
  deleted: boolean;
}

// $1 now, $2 lease end, $3 claim token, $4 how many at most, $5 deliveries in flight per endpoint
// id (a JSON object) and $6 the cap per endpoint: an endpoint at its cap is skipped, and one claim
// takes no more of an endpoint than its room, so a slow endpoint cannot fill every slot.
const CLAIM = `
with cand as (
  select organization_id, id, endpoint_id, next_retry_at
  from webhook_deliveries
  where status = 'pending' and next_retry_at <= $1::timestamptz
    and (locked_until is null or locked_until < $1::timestamptz)
    and coalesce(($5::jsonb ->> endpoint_id)::int, 0) < $6::int
  order by next_retry_at
  limit $4::int
  for update skip locked
), picked as (
  select organization_id, id from (
    select organization_id, id, endpoint_id,
      row_number() over (partition by endpoint_id order by next_retry_at, id) as rn
    from cand
  ) ranked
  where rn + coalesce(($5::jsonb ->> endpoint_id)::int, 0) <= $6::int
), claimed as (
  update webhook_deliveries d set locked_until = $2::timestamptz, locked_by = $3::text
  from picked
  where d.organization_id = picked.organization_id and d.id = picked.id
  returning d.organization_id, d.id, d.endpoint_id, d.event_type, d.payload, d.attempts
)
select c.organization_id, c.id, c.endpoint_id, c.event_type, c.payload, c.attempts,
  e.url, e.secret_enc, coalesce(e.is_active, false) as is_active, (e.organization_id is null or e.deleted_at is not null) as deleted
from claimed c
left join webhook_endpoints e on e.organization_id = c.organization_id and e.id = c.endpoint_id`;

export async function claimDue(
  query: Query,
  args: { now: Date; until: Date; token: string; limit: number; busy: ReadonlyMap<string, number>; perEndpoint: number },
): Promise<ClaimedDelivery[]> {
  const busy: Record<string, number> = {};
  for (const [k, v] of args.busy) busy[k] = v;
  const rows = await query('tenantry_webhooks_claim', CLAIM, [
    args.now.toISOString(),
    args.until.toISOString(),
    args.token,
    args.limit,
    JSON.stringify(busy),
    args.perEndpoint,
  ]);
  return rows.map((r) => ({
    organizationId: r.organization_id as string,
    id: r.id as string,
    endpointId: r.endpoint_id as string,
    eventType: r.event_type as string,
    payload: (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as ClaimedDelivery['payload'],
    attempts: Number(r.attempts),
    lockedBy: args.token,
    url: (r.url as string | null) ?? null,
    secretEnc: (r.secret_enc as string | null) ?? null,
    isActive: r.is_active === true,
    deleted: r.deleted === true,
  }));
}

/** One result to record, in the short keys of the statement below (JSON is its only parameter). */
export interface ResultRow {
  /** organization_id, delivery id, claim token */
  o: string;
  i: string;
  k: string;
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
// sent. A batch that failed is written again row by row with ON CONFLICT DO NOTHING, so a batch that
// did commit before its connection broke is not recorded twice (the batch itself goes without: the
// speculative insertion costs PostgreSQL about a tenth of the statement).
const RECORD = `
with r as (
  select * from json_to_recordset($1::json) as x(
    o text, i text, k text, c boolean, a text, n int, rs int, rb text, e text, dm int,
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
)
insert into webhook_attempts (organization_id, id, delivery_id, attempt, response_status, response_body, error, duration_ms, created_at)
select o, a, i, n, rs, rb, e, dm, t from r where not c`;
const RECORD_AGAIN = `${RECORD}
on conflict do nothing`;

export async function recordResults(query: Query, rows: ResultRow[], again = false): Promise<void> {
  if (again) await query('tenantry_webhooks_record_again', RECORD_AGAIN, [JSON.stringify(rows)]);
  else await query('tenantry_webhooks_record', RECORD, [JSON.stringify(rows)]);
}
