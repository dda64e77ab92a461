import { sql } from 'drizzle-orm';
import { boolean, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { organizations, type PlanName } from './organizations.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/** One payment-provider customer and at most one subscription per organization. */
export const subscriptions = pgTable(
  'subscriptions',
  {
    organizationId: text('organization_id')
      .primaryKey()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    customerId: text('customer_id').notNull(),
    // The provider's subscription id (`sub_…`), null until a checkout completes.
    subscriptionId: text('subscription_id'),
    priceId: text('price_id'),
    plan: text('plan').$type<PlanName>().notNull().default('free'),
    status: text('status').notNull().default('active'),
    currentPeriodEnd: ts('current_period_end'),
    cancelAtPeriodEnd: boolean('cancel_at_period_end').notNull().default(false),
    cancelAt: ts('cancel_at'),
    // The provider time of the last event applied: an older event never moves the state backwards.
    lastEventAt: ts('last_event_at'),
    // Subscriptions of this customer that ended (deleted, canceled, incomplete_expired): an end is
    // final at the provider, so nothing received about these ids afterwards changes anything.
    endedSubscriptionIds: text('ended_subscription_ids')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('subscriptions_customer_key').on(t.customerId)],
);

/** Provider events already applied: each event id is processed once. */
export const billingEvents = pgTable('billing_events', {
  id: text('id').primaryKey(),
  type: text('type').notNull(),
  receivedAt: ts('received_at').notNull(),
});

export type SubscriptionRow = typeof subscriptions.$inferSelect;
