import { bigint, date, index, integer, pgTable, primaryKey, smallint, text, timestamp } from 'drizzle-orm/pg-core';
import { organizations } from './organizations.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export type ActorType = 'user' | 'api_key';

/** docs/api.md#audit-log: one entry per API-key request and per successful change a user makes in an organization. */
export const auditLogs = pgTable(
  'audit_logs',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    actorType: text('actor_type').$type<ActorType>().notNull(),
    actorId: text('actor_id').notNull(),
    action: text('action').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    statusCode: integer('status_code').notNull(),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    // Newest first within an organization, and the same with each filter in front.
    index('audit_logs_org_created_idx').on(t.organizationId, t.createdAt.desc(), t.id.desc()),
    index('audit_logs_org_actor_created_idx').on(t.organizationId, t.actorId, t.createdAt.desc(), t.id.desc()),
    index('audit_logs_org_action_created_idx').on(t.organizationId, t.action, t.createdAt.desc(), t.id.desc()),
    index('audit_logs_org_actor_type_created_idx').on(t.organizationId, t.actorType, t.createdAt.desc(), t.id.desc()),
  ],
);

/**
 * Exact entry counts per organization, UTC day and filter combination, kept in the statement that
 * inserts the entries (writer.ts, service.ts), so the list's `total` is a sum of a few rows instead
 * of a count(*) over millions. Each entry adds 1 to six rows of its day, '' standing for "any":
 * (any, any, any), (type, any, any), (type, id, any), (any, any, action), (type, any, action) and
 * (type, id, action); a filter on actorId alone sums its row of each actor type.
 */
export const auditLogCounters = pgTable(
  'audit_log_counters',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    actorType: text('actor_type').notNull(),
    actorId: text('actor_id').notNull(),
    action: text('action').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    // Concurrent writers add to different shards, so they never wait for each other's row locks;
    // readers sum the shards (counters.ts).
    shard: smallint('shard').notNull().default(0),
    total: bigint('total', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({
      name: 'audit_log_counters_pk',
      columns: [t.organizationId, t.actorType, t.actorId, t.action, t.day, t.shard],
    }),
  ],
);
