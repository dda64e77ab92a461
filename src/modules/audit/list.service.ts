// The audit log of an organization, newest first, in ONE statement that returns the exact total and
// the page already as JSON text:
// - total: the sum of the organization's audit_log_counters rows for the filter combination (every
//   combination of actorType, actorId and action has its rows, counters.ts), one row per UTC day.
//   With from/to, the days wholly inside the range come from the counters and the partial days at
//   its ends from a count(*) over an index that starts with the filters: at most two days of
//   matching entries are counted, however long the history.
// - the page: its ids walked in an index that fits the filters (index-only when the filters are in
//   it), then each row fetched by primary key, so a deep OFFSET skips index entries, not table rows;
//   PostgreSQL turns each row into JSON, and the handler sends the text as the body, so no row is
//   mapped or serialized in JS.
import { fillPlaceholders, type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.js';
import type { Infra } from '../../infra.js';
import type { OrgAccess } from '../../platform/tenancy.js';
import { prepareRaw } from '../../db/prepared.js';

export interface AuditQuery {
  page: number;
  pageSize: number;
  actorType?: 'user' | 'api_key';
  actorId?: string;
  action?: string;
  from?: string;
  to?: string;
}

const DAY_MS = 86_400_000;
const dialect = new PgDialect();
const p = (name: string) => sql.placeholder(name);

// Times are kept within years 1 to 9999 (what ISO strings and PostgreSQL's dates share); no entry is
// outside them, so a bound beyond them is no bound.
const MIN_TIME = Date.parse('0001-01-01T00:00:00Z');
const MAX_TIME = Date.parse('9999-12-31T00:00:00Z');
const clamp = (t: number) => Math.min(Math.max(t, MIN_TIME), MAX_TIME);

// The statement depends only on which filters are present (a bit each): at most 32 texts. They are
// sent unnamed, so planned for each request's values: with LIMIT and OFFSET unknown, a generic plan
// assumes a tenth of the organization is wanted and picks a sequential scan and a sort (seen: 0.9 s
// on the benchmark's million entries), and PostgreSQL would switch a named statement to it for good
// once deep pages had made its custom plans look as costly. Planning costs about 0.2 ms.
const T = 1;
const I = 2;
const A = 4;
const FROM = 8;
const TO = 16;
const statements = new Map<number, SQL>();

function statementFor(shape: number): SQL {
  let s = statements.get(shape);
  if (s) return s;
  const filters: SQL[] = [sql`organization_id = ${p('org')}`];
  if (shape & T) filters.push(sql`actor_type = ${p('actorType')}`);
  if (shape & I) filters.push(sql`actor_id = ${p('actorId')}`);
  if (shape & A) filters.push(sql`action = ${p('action')}`);
  const where = sql.join(filters, sql` and `);
  const pageWhere = sql.join(
    [
      where,
      ...(shape & FROM ? [sql`created_at >= ${p('from')}::timestamptz`] : []),
      ...(shape & TO ? [sql`created_at < ${p('end')}::timestamptz`] : []),
    ],
    sql` and `,
  );
  const dated = (shape & (FROM | TO)) !== 0;
  const edge = (lo: string, hi: string) =>
    sql` + (select count(*) from audit_logs where ${where} and created_at >= ${p(lo)}::timestamptz and created_at < ${p(hi)}::timestamptz)`;
  s = sql`select
    ((select coalesce(sum(c.total), 0) from audit_log_counters c
      where c.organization_id = ${p('org')} and c.actor_type in (${p('ct1')}, ${p('ct2')}) and c.actor_id = ${p('ci')} and c.action = ${p('ca')}
      ${dated ? sql`and c.day >= ${p('d1')}::date and c.day < ${p('d2')}::date` : sql``})
      ${dated ? sql`${edge('a1', 'a2')}${edge('b1', 'b2')}` : sql``})::text as total,
    (select string_agg((select row_to_json(e)::text from (select a.id, a.organization_id as "organizationId", a.actor_type as "actorType",
        a.actor_id as "actorId", a.action, a.method, a.path, a.status_code as "statusCode", a.ip_address as "ipAddress",
        a.user_agent as "userAgent", to_char(a.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt"
        from audit_logs a where a.organization_id = ${p('org')} and a.id = pick.id) e), ',' order by pick.created_at desc, pick.id desc)
      from (select id, created_at from audit_logs where ${pageWhere}
            order by created_at desc nulls last, id desc nulls last limit ${p('limit')} offset ${p('offset')}) pick) as data`;
  statements.set(shape, s);
  return s;
}

const prepared = new WeakMap<Db, Map<number, ReturnType<typeof prepareRaw>>>();
function preparedFor(db: Db, shape: number) {
  let byShape = prepared.get(db);
  if (!byShape) prepared.set(db, (byShape = new Map()));
  let s = byShape.get(shape);
  if (!s) byShape.set(shape, (s = prepareRaw(db, undefined, statementFor(shape))));
  return s;
}

const NONE = '-infinity';
const iso = (ms: number) => new Date(ms).toISOString();
const isoDay = (ms: number) => iso(ms).slice(0, 10);

/** The split of [from, end) into whole UTC days (from the counters) and the partial days at its ends (counted in audit_logs). */
function dateSplit(from: number | null, end: number | null) {
  const empty = { d1: 'infinity', d2: 'infinity', a1: NONE, a2: NONE, b1: NONE, b2: NONE };
  if (from !== null && end !== null && from >= end) return empty;
  const firstDay = from === null ? null : Math.ceil(from / DAY_MS) * DAY_MS;
  const lastDay = end === null ? null : Math.floor(end / DAY_MS) * DAY_MS;
  if (firstDay !== null && lastDay !== null && firstDay >= lastDay) {
    // Within one or two partial days: all counted in audit_logs.
    return { ...empty, a1: iso(from!), a2: iso(end!) };
  }
  return {
    d1: firstDay === null ? '-infinity' : isoDay(firstDay),
    d2: lastDay === null ? 'infinity' : isoDay(lastDay),
    a1: from === null ? NONE : iso(from),
    a2: firstDay === null ? NONE : iso(firstDay),
    b1: lastDay === null ? NONE : iso(lastDay),
    b2: end === null ? NONE : iso(end),
  };
}

function parameters(organizationId: string, q: AuditQuery) {
  // [from, end): `to` is inclusive and times have millisecond precision, so end = to + 1 ms.
  const from = q.from && Date.parse(q.from) >= MIN_TIME ? clamp(Date.parse(q.from)) : null;
  const end = q.to && Date.parse(q.to) + 1 <= MAX_TIME ? clamp(Date.parse(q.to) + 1) : null;
  const shape =
    (q.actorType ? T : 0) |
    (q.actorId ? I : 0) |
    (q.action ? A : 0) |
    (from !== null ? FROM : 0) |
    (end !== null ? TO : 0);
  // The counter rows of the combination; actorId without actorType sums both types' rows.
  const ct = q.actorType ?? (q.actorId ? null : '');
  const values: Record<string, unknown> = {
    org: organizationId,
    ct1: ct ?? 'api_key',
    ct2: ct ?? 'user',
    ci: q.actorId ?? '',
    ca: q.action ?? '',
    limit: q.pageSize,
    offset: (q.page - 1) * q.pageSize,
  };
  if (q.actorType) values.actorType = q.actorType;
  if (q.actorId) values.actorId = q.actorId;
  if (q.action) values.action = q.action;
  if (from !== null) values.from = iso(from);
  if (end !== null) values.end = iso(end);
  if (shape & (FROM | TO)) Object.assign(values, dateSplit(from, end));
  return { shape, values };
}

/** The response body (the pagination envelope as JSON text). */
export async function listAuditLogs(deps: Pick<Infra, 'db'>, access: OrgAccess, q: AuditQuery): Promise<string> {
  const { shape, values } = parameters(access.organizationId, q);
  const { rows } = await preparedFor(deps.db, shape).execute(values);
  const row = rows[0] as { total: string; data: string | null };
  const total = Number(row.total);
  return `{"data":[${row.data ?? ''}],"total":${total},"page":${q.page},"pageSize":${q.pageSize},"hasMore":${q.page * q.pageSize < total}}`;
}

/** The statement the list sends for this query, with its values (the benchmark explains it). */
export function auditListStatement(organizationId: string, q: AuditQuery): { text: string; values: unknown[] } {
  const { shape, values } = parameters(organizationId, q);
  const query = dialect.sqlToQuery(statementFor(shape));
  return { text: query.sql, values: fillPlaceholders(query.params, values) };
}
