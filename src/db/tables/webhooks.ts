import { sql } from 'drizzle-orm';
import {
  boolean,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { organizations } from './organizations.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/**
 * The outbox: every event is written in the transaction of the change that causes it, so there is
 * no change without its event and no event without its change (docs/api.md#delivery-rules).
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
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    index('events_org_created_idx').on(t.organizationId, t.createdAt),
  ],
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
    // Event types it receives; empty means all (docs/api.md#webhook-endpoints).
    events: jsonb('events').$type<string[]>().notNull(),
    // `whsec_…`, encrypted with ENCRYPTION_KEY: it must be read back to sign, so it cannot be hashed.
    secretEnc: text('secret_enc').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    // Why the service turned it off ('failing': every attempt failed for WEBHOOK_DISABLE_AFTER_H
    // hours); null when active or turned off by a person (docs/api.md#webhook-endpoints).
    disabledReason: text('disabled_reason').$type<'failing'>(),
    // Since when every attempt has failed: set by the first failure after a success, cleared by a
    // success. Auto-disable compares it with WEBHOOK_DISABLE_AFTER_H.
    failingSince: ts('failing_since'),
    // The secret replaced by a rotation with a grace period, encrypted like secretEnc; deliveries are
    // signed with both until previousSecretExpiresAt.
    previousSecretEnc: text('previous_secret_enc'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    // Deleted endpoints are kept (soft delete) so their delivery history stays readable.
    deletedAt: ts('deleted_at'),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    index('webhook_endpoints_org_idx').on(t.organizationId, t.createdAt),
  ],
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
    // The event it delivers: the body every attempt sends is the event's ({id, type, timestamp: its
    // created_at, data}), stored once in its row however many endpoints it goes to. The worker's claim
    // reads it with a join.
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
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
    // An event stays as long as a delivery of it does (retention deletes it only once it has none).
    foreignKey({
      name: 'webhook_deliveries_event_fk',
      columns: [t.organizationId, t.eventId],
      foreignColumns: [events.organizationId, events.id],
    }).onDelete('cascade'),
    uniqueIndex('webhook_deliveries_event_endpoint_key').on(t.organizationId, t.eventId, t.endpointId),
    index('webhook_deliveries_endpoint_idx').on(t.organizationId, t.endpointId, t.createdAt),
    // What the workers walk: the pending deliveries of each endpoint, grouped by organization and
    // endpoint, oldest due first. A claim visits each (organization, endpoint) with one descent and
    // takes from the front of the ones with room, so an endpoint or an organization at its cap costs
    // one probe however long its queue is.
    index('webhook_deliveries_pending_idx')
      .on(t.organizationId, t.endpointId, t.nextRetryAt)
      .where(sql`status = 'pending'`),
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
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    index('webhook_attempts_delivery_idx').on(t.organizationId, t.deliveryId, t.attempt),
  ],
);

/**
 * The answers of POST /organizations/{orgId}/events by Idempotency-Key: a key repeated within 24 h
 * returns the first answer and records nothing new (docs/api.md#publishing-your-own-events).
 */
export const eventIdempotencyKeys = pgTable(
  'event_idempotency_keys',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    eventId: text('event_id').notNull(),
    // The status and body of the first answer, returned as they were.
    response: jsonb('response').$type<{ status: number; body: unknown }>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.key] }),
    index('event_idempotency_keys_created_idx').on(t.createdAt),
  ],
);

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
