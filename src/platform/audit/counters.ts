// What the two audit writers (writer.ts for API-key requests, service.ts for users' changes) and the
// readers (list.service.ts, API-key usage, the apiRequests quota: key requests and people's publishes) share: the counter rows an entry
// adds to, the row-lock order, and prepared statements for raw SQL.
//
// Every audit insert is ONE statement that also adds to audit_log_counters, so a counter can never
// disagree with the entries it counts. The counters are also what a key's request count and an
// organization's monthly API usage are read from: no other row is updated per request. Row locks
// are always taken in one order, on every instance:
//   1. the organizations of the entries, FOR KEY SHARE, sorted by id (what the foreign-key checks
//      at the end of the statement would take anyway; taken first, a writer waits for an
//      organization being deleted before it holds anything the deletion's cascade needs);
//   2. audit_log_counters rows, sorted by their primary key.
// Counter rows are sharded (`shard`): each concurrent batch of the group commit adds to its own
// shard, so batches in flight together never wait for one another's locks (and their commits share
// WAL flushes); a user's change picks a shard at random. Readers sum every shard.
// A business transaction calls auditChange last, after its own rows. Inside one statement the order
// of data-modifying CTEs is not defined by PostgreSQL, so each step is made to wait for the one
// before it with `(select count(*) from <previous>) >= 0`, always true, evaluated (as an init plan)
// before the step touches its first row.
import { type SQL, sql, type SQLWrapper } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { auditLogs } from '../../db/tables/audit.js';

export const COUNTER_SHARDS = 8;

/**
 * Upserts the counter rows of the entries in CTE `v` (organization_id, actor_type, actor_id, action,
 * created_at) into shard `$shard` once `after` has run: six rows per entry and UTC day, '' standing
 * for "any".
 */
export function upsertCounters(after: string): SQL {
  return sql`insert into audit_log_counters as c (organization_id, actor_type, actor_id, action, day, shard, total)
    select v.organization_id, g.actor_type, g.actor_id, g.action, (v.created_at at time zone 'UTC')::date, ${sql.placeholder('shard')}::smallint, count(*)
    from v cross join lateral (values ('', '', ''), (v.actor_type, '', ''), (v.actor_type, v.actor_id, ''),
      ('', '', v.action), (v.actor_type, '', v.action), (v.actor_type, v.actor_id, v.action)) as g(actor_type, actor_id, action)
    where (select count(*) from ${sql.raw(after)}) >= 0
    group by 1, 2, 3, 4, 5, 6
    order by 1, 2, 3, 4, 5, 6
    on conflict (organization_id, actor_type, actor_id, action, day, shard) do update set total = c.total + excluded.total`;
}

/** Requests made with one API key over its life (its audit entries), as a scalar subquery. */
export const keyRequestsSql = (orgId: SQLWrapper, keyId: SQLWrapper) =>
  sql<number>`(select coalesce(sum(c.total), 0) from audit_log_counters c
    where c.organization_id = ${orgId} and c.actor_type = 'api_key' and c.actor_id = ${keyId} and c.action = '')`.mapWith(
    Number,
  );

/** The time of an API key's last request (its newest audit entry), as a scalar subquery. */
export const keyLastUsedSql = (orgId: SQLWrapper, keyId: SQLWrapper) =>
  sql<Date | null>`(select max(a.created_at) from audit_logs a where a.organization_id = ${orgId} and a.actor_id = ${keyId})`.mapWith(
    auditLogs.createdAt,
  );

/**
 * The audit action of a publish by a signed-in person (`POST /organizations/{orgId}/events`): its
 * entries count against the monthly apiRequests quota like API-key requests (platform/quota.ts).
 */
export const PUBLISH_ACTION = 'POST /api/v1/organizations/:orgId/events';

/**
 * An organization's usage of the apiRequests quota in a UTC month (`YYYY-MM`): its API-key requests,
 * plus the events its people published with an access token (a key's publishes are key requests
 * already, counted once).
 */
export async function apiRequestsInMonth(db: Db, orgId: string, period: string): Promise<number> {
  const [year, month] = period.split('-').map(Number) as [number, number];
  const start = new Date(Date.UTC(year, month - 1, 1)).toISOString().slice(0, 10);
  const end = new Date(Date.UTC(year, month, 1)).toISOString().slice(0, 10);
  // One range of the primary key each.
  const result = (await db.execute(sql`select
      (select coalesce(sum(total), 0) from audit_log_counters
        where organization_id = ${orgId} and actor_type = 'api_key' and actor_id = '' and action = '' and day >= ${start}::date and day < ${end}::date)
      + (select coalesce(sum(total), 0) from audit_log_counters
        where organization_id = ${orgId} and actor_type = 'user' and actor_id = '' and action = ${PUBLISH_ACTION} and day >= ${start}::date and day < ${end}::date)
      as n`)) as unknown as { rows: Array<{ n: string | number }> };
  return Number(result.rows[0]?.n ?? 0);
}

/** Locks the organizations of the entries in CTE `v` (step 1 of the lock order). */
export const lockOrganizations = sql.raw(
  `select o.id from organizations o where o.id in (select organization_id from v) order by o.id for key share`,
);

/**
 * The CTEs `o` (step 1 of the lock order) and `e` (the entries of CTE `v` inserted once `o` has
 * run), shared by both writers; `e` returns a row per entry.
 */
export const insertEntries = sql`o as (${lockOrganizations}),
  e as (
    insert into audit_logs (organization_id, id, actor_type, actor_id, action, method, path, status_code, ip_address, user_agent, created_at)
    select organization_id, id, actor_type, actor_id, action, method, path, status_code, ip_address, user_agent, created_at from v
    where (select count(*) from o) >= 0
    returning 1
  )`;
