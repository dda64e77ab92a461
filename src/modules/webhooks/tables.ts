import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { organizations } from '../../db/tables/organizations.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/**
 * The outbox: every event is written in the transaction of the change that causes it, so there is
 * no change without its event and no event without its change (DECISIONS §5).
 */
export const events = pgTable(
  'events',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    type: text('type').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.id] }), index('events_org_created_idx').on(t.organizationId, t.createdAt)],
);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    url: text('url').notNull(),
    description: text('description'),
    // Event types it receives; empty means all (spec §2.7).
    events: jsonb('events').$type<string[]>().notNull(),
    // `whsec_…`, encrypted with ENCRYPTION_KEY: it must be read back to sign, so it cannot be hashed.
    secretEnc: text('secret_enc').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    // Deleted endpoints are kept (soft delete) so their delivery history stays readable.
    deletedAt: ts('deleted_at'),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.id] }), index('webhook_endpoints_org_idx').on(t.organizationId, t.createdAt)],
);

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'canceled';

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    // Sent as X-Webhook-Delivery-ID, the same on every attempt: one per (event, endpoint).
    id: text('id').notNull(),
    endpointId: text('endpoint_id').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').$type<{ type: string; timestamp: string; data: Record<string, unknown> }>().notNull(),
    status: text('status').$type<DeliveryStatus>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    lastError: text('last_error'),
    deliveredAt: ts('delivered_at'),
    nextRetryAt: ts('next_retry_at'),
    // The lease of the worker that claimed it; an expired lease lets another worker take over.
    lockedUntil: ts('locked_until'),
    lockedBy: text('locked_by'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex('webhook_deliveries_event_endpoint_key').on(t.organizationId, t.eventId, t.endpointId),
    index('webhook_deliveries_endpoint_idx').on(t.organizationId, t.endpointId, t.createdAt),
    // What the workers scan: due pending deliveries.
    index('webhook_deliveries_due_idx').on(t.nextRetryAt).where(sql`status = 'pending'`),
  ],
);

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    deliveryId: text('delivery_id').notNull(),
    attempt: integer('attempt').notNull(),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.id] }), index('webhook_attempts_delivery_idx').on(t.organizationId, t.deliveryId, t.attempt)],
);

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
