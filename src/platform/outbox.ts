// Recording an event is part of the business transaction (docs/api.md#delivery-rules): the caller passes its tx.
// The event row (its type, data and time: the body of every delivery, stored once) and one delivery
// row per matching active endpoint (a reference to the event and the delivery's state) are the
// outbox; NOTIFY (sent by PostgreSQL only when the transaction commits) wakes the delivery workers.
import { sql } from 'drizzle-orm';
import type { Clock } from '../lib/clock.js';
import type { Tx } from '../db/client.js';
import { newId } from '../lib/ids.js';
import { subscriptionNames } from './event-catalogue.js';

export const WAKE_CHANNEL = 'tenantry_webhooks';

export async function recordEvent(
  deps: { clock: Clock },
  tx: Tx,
  organizationId: string,
  type: string,
  data: Record<string, unknown>,
  /** Deliver to this endpoint only (the test event), whatever its subscriptions. */
  onlyEndpointId?: string,
): Promise<{ eventId: string; deliveryIds: string[] }> {
  const now = deps.clock.now();
  const eventId = newId('evt', now.getTime());
  const names = subscriptionNames(type);
  // One round trip: the event row, and the endpoints it goes to.
  const targets = (await tx.execute(sql`with ev as (
      insert into events (organization_id, id, type, data, created_at)
      values (${organizationId}, ${eventId}, ${type}, ${JSON.stringify(data)}::jsonb, ${now.toISOString()}::timestamptz)
      returning 1
    )
    select id from webhook_endpoints
    where organization_id = ${organizationId} and is_active and deleted_at is null and (select count(*) from ev) = 1 and ${
      onlyEndpointId
        ? sql`id = ${onlyEndpointId}`
        : sql`(events = '[]'::jsonb or jsonb_exists_any(events, array[${sql.join(
            names.map((n) => sql`${n}`),
            sql`, `,
          )}]::text[]))`
    }`)) as unknown as { rows: Array<{ id: string }> };
  if (targets.rows.length === 0) return { eventId, deliveryIds: [] };
  // The same delivery id on every attempt (docs/api.md#delivery-requests). A delivery holds no copy
  // of the body: every attempt sends the event row's {id, type, timestamp, data}, which the worker's
  // claim joins, so an event's data is stored once whatever the number of its endpoints.
  const at = now.toISOString();
  const deliveryIds = targets.rows.map(() => newId('dlv', now.getTime()));
  // And one more: the deliveries, and the wake-up (sent by PostgreSQL at commit).
  const deliveries = sql.join(
    targets.rows.map(
      (e, i) =>
        sql`(${organizationId}, ${deliveryIds[i]}, ${e.id}, ${eventId}, ${type}, 'pending', ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz)`,
    ),
    sql`, `,
  );
  await tx.execute(sql`with d as (
      insert into webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, next_retry_at, created_at, updated_at)
      values ${deliveries}
      returning 1
    )
    select pg_notify(${WAKE_CHANNEL}, '') where (select count(*) from d) > 0`);
  return { eventId, deliveryIds };
}
