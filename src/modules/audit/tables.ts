import { bigint, index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { organizations } from '../organizations/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export type ActorType = 'user' | 'api_key';

/** DECISIONS §4: one entry per API-key request and per successful change a user makes in an organization. */
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
  ],
);

/** Entries per organization, kept with each audit insert, so the unfiltered list needs no count(*). */
export const auditLogCounts = pgTable('audit_log_counts', {
  organizationId: text('organization_id')
    .primaryKey()
    .references(() => organizations.id, { onDelete: 'cascade' }),
  total: bigint('total', { mode: 'number' }).notNull().default(0),
});
