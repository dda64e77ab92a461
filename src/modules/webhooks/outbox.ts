// Recording an event is part of the business transaction (DECISIONS §5): the caller passes its tx.
// The event row and one delivery row per matching active endpoint are the outbox; NOTIFY (sent by
// PostgreSQL only when the transaction commits) wakes the delivery workers.
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import { newId } from '../../lib/ids.js';
import { subscriptionNames } from './catalogue.js';
import { events, webhookDeliveries, webhookEndpoints } from './tables.js';

export const WAKE_CHANNEL = 'tenantry_webhooks';

export async function recordEvent(
  deps: Deps,
  tx: Tx,
  organizationId: string,
  type: string,
  data: Record<string, unknown>,
  /** Deliver to this endpoint only (the test event), whatever its subscriptions. */
  onlyEndpointId?: string,
): Promise<{ eventId: string; deliveryIds: string[] }> {
  const now = deps.clock.now();
  const eventId = newId('evt', now.getTime());
  await tx.insert(events).values({ organizationId, id: eventId, type, data, createdAt: now });
  const names = subscriptionNames(type);
  const targets = await tx
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.organizationId, organizationId),
        eq(webhookEndpoints.isActive, true),
        isNull(webhookEndpoints.deletedAt),
        onlyEndpointId
          ? eq(webhookEndpoints.id, onlyEndpointId)
          : sql`(${webhookEndpoints.events} = '[]'::jsonb or jsonb_exists_any(${webhookEndpoints.events}, array[${sql.join(
              names.map((n) => sql`${n}`),
              sql`, `,
            )}]::text[]))`,
      ),
    );
  if (targets.length === 0) return { eventId, deliveryIds: [] };
  const payload = { type, timestamp: now.toISOString(), data };
  const rows = targets.map((e) => ({
    organizationId,
    id: newId('dlv', now.getTime()),
    endpointId: e.id,
    eventId,
    eventType: type,
    payload,
    status: 'pending' as const,
    nextRetryAt: now,
    createdAt: now,
    updatedAt: now,
  }));
  await tx.insert(webhookDeliveries).values(rows);
  await tx.execute(sql`select pg_notify(${WAKE_CHANNEL}, '')`);
  return { eventId, deliveryIds: rows.map((r) => r.id) };
}
