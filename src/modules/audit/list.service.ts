// The audit log of an organization, newest first. Every filter combination is served by an index
// that starts with organization_id; the unfiltered total comes from audit_log_counts instead of a
// count(*) over millions of rows.
import { and, count, eq, gte, lte, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { OrgAccess } from '../../http/authorize.js';
import { auditLogCounts, auditLogs } from './tables.js';

export interface AuditQuery {
  page: number;
  pageSize: number;
  actorType?: 'user' | 'api_key';
  actorId?: string;
  action?: string;
  from?: string;
  to?: string;
}

export async function listAuditLogs(deps: Deps, access: OrgAccess, q: AuditQuery) {
  const filters: SQL[] = [eq(auditLogs.organizationId, access.organizationId)];
  if (q.actorType) filters.push(eq(auditLogs.actorType, q.actorType));
  if (q.actorId) filters.push(eq(auditLogs.actorId, q.actorId));
  if (q.action) filters.push(eq(auditLogs.action, q.action));
  if (q.from) filters.push(gte(auditLogs.createdAt, new Date(q.from)));
  if (q.to) filters.push(lte(auditLogs.createdAt, new Date(q.to)));
  const where = and(...filters);
  const rows = await deps.db
    .select()
    .from(auditLogs)
    .where(where)
    // NULLS LAST like the indexes (both columns are NOT NULL): with the default NULLS FIRST the
    // planner cannot walk the index and sorts the whole organization instead.
    .orderBy(sql`${auditLogs.createdAt} desc nulls last`, sql`${auditLogs.id} desc nulls last`)
    .limit(q.pageSize)
    .offset((q.page - 1) * q.pageSize);
  let total: number;
  if (filters.length === 1) {
    const [c] = await deps.db.select({ total: auditLogCounts.total }).from(auditLogCounts).where(eq(auditLogCounts.organizationId, access.organizationId));
    total = Number(c?.total ?? 0);
  } else {
    const [c] = await deps.db.select({ n: count() }).from(auditLogs).where(where);
    total = c?.n ?? 0;
  }
  return {
    data: rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })),
    total,
    page: q.page,
    pageSize: q.pageSize,
    hasMore: q.page * q.pageSize < total,
  };
}
