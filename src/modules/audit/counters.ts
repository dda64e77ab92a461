// What the two audit writers (writer.ts for API-key requests, service.ts for users' changes) and the
// list (list.service.ts) share: the counter rows an entry adds to, the row-lock order, and prepared
// statements for raw SQL.
//
// Every audit insert is ONE statement that also adds to audit_log_counters, so a counter can never
// disagree with the entries it counts. Row locks are always taken in one order, on every instance:
//   1. the organizations of the entries, FOR KEY SHARE, sorted by id (what the foreign-key checks
//      at the end of the statement would take anyway; taken first, a writer waits for an
//      organization being deleted before it holds anything the deletion's cascade needs);
//   2. api_keys rows (writer only), sorted by (organization_id, id);
//   3. api_usage rows (writer only), sorted by (organization_id, period);
//   4. audit_log_counters rows, sorted by their primary key.
// A business transaction calls auditChange last, after its own rows, so it takes 4 after whatever
// it holds of 2 (a key's revocation), like the writer. Inside one statement the order of
// data-modifying CTEs is not defined by PostgreSQL, so each step is made to wait for the one before
// it with `(select count(*) from <previous>) >= 0`, always true, evaluated (as an init plan) before
// the step touches its first row.
import { type Query, type SQL, sql } from 'drizzle-orm';
import { PgDialect, type PgPreparedQuery, type PreparedQueryConfig } from 'drizzle-orm/pg-core';
import type { Db, Tx } from '../../db/client.js';

/**
 * Upserts the counter rows of the entries in CTE `v` (organization_id, actor_type, actor_id, action,
 * created_at) once `after` has run: six rows per entry and UTC day, '' standing for "any".
 */
export function upsertCounters(after: string): SQL {
  return sql.raw(`insert into audit_log_counters as c (organization_id, actor_type, actor_id, action, day, total)
    select v.organization_id, g.actor_type, g.actor_id, g.action, (v.created_at at time zone 'UTC')::date, count(*)
    from v cross join lateral (values ('', '', ''), (v.actor_type, '', ''), (v.actor_type, v.actor_id, ''),
      ('', '', v.action), (v.actor_type, '', v.action), (v.actor_type, v.actor_id, v.action)) as g(actor_type, actor_id, action)
    where (select count(*) from ${after}) >= 0
    group by 1, 2, 3, 4, 5
    order by 1, 2, 3, 4, 5
    on conflict (organization_id, actor_type, actor_id, action, day) do update set total = c.total + excluded.total`);
}

/** Locks the organizations of the entries in CTE `v` (step 1 of the lock order). */
export const lockOrganizations = sql.raw(`select o.id from organizations o where o.id in (select organization_id from v) order by o.id for key share`);

const dialect = new PgDialect();
const texts = new WeakMap<SQL, Query>();

type Raw = PgPreparedQuery<PreparedQueryConfig & { execute: { rows: Record<string, unknown>[] } }>;

/**
 * Raw SQL with `sql.placeholder`s as a prepared query, on the pool or in a transaction (`tx`). Named,
 * each PostgreSQL connection parses it once and may keep a generic plan (the same name must always
 * carry the same SQL); unnamed (`name` undefined), it is planned for each execution's values.
 */
export function prepareRaw(db: Db | Tx, name: string | undefined, query: SQL): Raw {
  let q = texts.get(query);
  if (!q) texts.set(query, (q = dialect.sqlToQuery(query)));
  return db._.session.prepareQuery(q, undefined, name, false) as unknown as Raw;
}
