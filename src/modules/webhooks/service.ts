// Webhook endpoints of an organization (docs/api.md#webhook-endpoints); test events, rotation and recovery: controls.ts.
import { and, count, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import type { OrgAccess } from '../../platform/tenancy.js';
import { conflict, notFound, validationError } from '../../lib/errors.js';
import { pageInfo } from '../../platform/pagination.js';
import { newId } from '../../lib/ids.js';
import { encrypt, randomHex } from '../../lib/secrets.js';
import { unsafeUrlReason } from '../../lib/ssrf.js';
import { auditChange } from '../../platform/audit/record.js';
import { assertWithinLimit, lockPlanLimits } from '../../platform/plans.js';
import { validateEventTypes } from '../../platform/event-catalogue.js';
import { WAKE_CHANNEL } from '../../platform/outbox.js';
import {
  type DeliveryRow,
  type EndpointRow,
  events,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '../../db/tables/webhooks.js';
import { transaction } from '../../db/transaction.js';

/** What a write of an endpoint uses (its URL checked under the configured rules). */
type EndpointWriteDeps = Pick<Infra, 'config' | 'clock' | 'db'>;

export const presentEndpoint = (e: EndpointRow) => ({
  id: e.id,
  organizationId: e.organizationId,
  url: e.url,
  description: e.description,
  events: e.events,
  isActive: e.isActive,
  disabledReason: e.disabledReason ?? null,
  createdAt: e.createdAt.toISOString(),
  updatedAt: e.updatedAt.toISOString(),
});

/** The event fields of a delivery's body, read from its event row (a delivery holds no copy). */
const bodyColumns = { type: events.type, data: events.data, createdAt: events.createdAt };
type Body = { type: string; data: Record<string, unknown>; createdAt: Date };
const withEvent = and(
  eq(events.organizationId, webhookDeliveries.organizationId),
  eq(events.id, webhookDeliveries.eventId),
);

export const presentDelivery = (d: DeliveryRow, e: Body) => ({
  id: d.id,
  endpointId: d.endpointId,
  eventType: d.eventType,
  // What every attempt sends (worker/attempt.ts): the event's body.
  payload: { id: d.eventId, type: e.type, timestamp: e.createdAt.toISOString(), data: e.data },
  status: d.status,
  attempts: d.attempts,
  responseStatus: d.responseStatus,
  responseBody: d.responseBody,
  lastError: d.lastError,
  deliveredAt: d.deliveredAt?.toISOString() ?? null,
  nextRetryAt: d.status === 'pending' ? (d.nextRetryAt?.toISOString() ?? null) : null,
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
});

export const newSecret = () => `whsec_${randomHex(32)}`;

function checkUrl(deps: Pick<Infra, 'config'>, url: string) {
  if (deps.config.webhook.allowPrivateUrls) {
    if (!/^https?:\/\//i.test(url)) throw validationError('Invalid webhook URL', 'url: must use http or https');
    return;
  }
  const reason = unsafeUrlReason(url);
  if (!reason) return;
  // A local or private target: say which switch allows it, where it may be used.
  const local = /localhost|private|fully qualified/.test(reason);
  throw validationError(
    'Invalid webhook URL',
    `url: ${reason}${local ? ' (WEBHOOK_ALLOW_PRIVATE_URLS=true allows it outside production)' : ''}`,
  );
}

/** The endpoint `id` of the organization, not deleted. */
export const live = (access: OrgAccess, id: string) =>
  and(
    eq(webhookEndpoints.organizationId, access.organizationId),
    eq(webhookEndpoints.id, id),
    isNull(webhookEndpoints.deletedAt),
  );

async function load(tx: Tx | Infra['db'], access: OrgAccess, id: string) {
  const [e] = await tx.select().from(webhookEndpoints).where(live(access, id));
  if (!e) throw notFound('Webhook endpoint not found');
  return e;
}

/** The organization of an endpoint, for the flat `/webhooks/{id}` paths; 404 when there is none (or it is deleted). */
export async function organizationOfEndpoint(deps: Pick<Infra, 'db'>, id: string): Promise<string> {
  const [e] = await deps.db
    .select({ org: webhookEndpoints.organizationId })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.deletedAt)));
  if (!e) throw notFound('Webhook endpoint not found');
  return e.org;
}

export async function listEndpoints(deps: Pick<Infra, 'db'>, access: OrgAccess) {
  const rows = await deps.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.organizationId, access.organizationId), isNull(webhookEndpoints.deletedAt)))
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id));
  return rows.map(presentEndpoint);
}

export async function createEndpoint(
  deps: EndpointWriteDeps,
  access: OrgAccess,
  input: { url: string; description?: string | null; events?: string[] },
) {
  checkUrl(deps, input.url);
  const eventTypes = validateEventTypes(input.events ?? []);
  const now = deps.clock.now();
  const secret = newSecret();
  return transaction(deps.db, async (tx) => {
    const limits = await lockPlanLimits(tx, access.organizationId);
    const [n] = await tx
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.organizationId, access.organizationId), isNull(webhookEndpoints.deletedAt)));
    assertWithinLimit(limits.webhookEndpoints, n?.n ?? 0, 'webhook endpoints');
    const [e] = await tx
      .insert(webhookEndpoints)
      .values({
        organizationId: access.organizationId,
        id: newId('wh', now.getTime()),
        url: input.url,
        description: input.description ?? null,
        events: eventTypes,
        secretEnc: encrypt(deps.config.encryptionKey, secret),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await auditChange(deps, tx, access);
    return { ...presentEndpoint(e!), secret };
  });
}

export async function getEndpoint(deps: Pick<Infra, 'db'>, access: OrgAccess, id: string) {
  return presentEndpoint(await load(deps.db, access, id));
}

export async function updateEndpoint(
  deps: EndpointWriteDeps,
  access: OrgAccess,
  id: string,
  input: { url?: string; description?: string | null; events?: string[]; isActive?: boolean },
) {
  if (input.url !== undefined) checkUrl(deps, input.url);
  const eventTypes = input.events !== undefined ? validateEventTypes(input.events) : undefined;
  return transaction(deps.db, async (tx) => {
    await load(tx, access, id);
    const [e] = await tx
      .update(webhookEndpoints)
      .set({
        ...(input.url !== undefined ? { url: input.url } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(eventTypes !== undefined ? { events: eventTypes } : {}),
        // A person turning it on or off ends what the service decided (auto-disable.ts).
        ...(input.isActive !== undefined ? { isActive: input.isActive, disabledReason: null, failingSince: null } : {}),
        updatedAt: deps.clock.now(),
      })
      .where(live(access, id))
      .returning();
    await auditChange(deps, tx, access);
    return presentEndpoint(e!);
  });
}

/** Removes the endpoint (its history stays readable) and cancels its pending deliveries. */
export async function deleteEndpoint(deps: Pick<Infra, 'clock' | 'db'>, access: OrgAccess, id: string) {
  const now = deps.clock.now();
  await transaction(deps.db, async (tx) => {
    await load(tx, access, id);
    await tx.update(webhookEndpoints).set({ deletedAt: now, isActive: false, updatedAt: now }).where(live(access, id));
    await tx
      .update(webhookDeliveries)
      .set({ status: 'canceled', nextRetryAt: null, lastError: 'endpoint deleted', updatedAt: now })
      .where(
        and(
          eq(webhookDeliveries.organizationId, access.organizationId),
          eq(webhookDeliveries.endpointId, id),
          eq(webhookDeliveries.status, 'pending'),
        ),
      );
    await auditChange(deps, tx, access);
  });
}

export async function listDeliveries(
  deps: Pick<Infra, 'db'>,
  access: OrgAccess,
  id: string,
  page: number,
  pageSize: number,
) {
  await load(deps.db, access, id);
  const where = and(eq(webhookDeliveries.organizationId, access.organizationId), eq(webhookDeliveries.endpointId, id));
  const rows = await deps.db
    .select({ d: webhookDeliveries, e: bodyColumns })
    .from(webhookDeliveries)
    .innerJoin(events, withEvent)
    .where(where)
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(pageSize)
    .offset((page - 1) * pageSize);
  const [n] = await deps.db.select({ n: count() }).from(webhookDeliveries).where(where);
  const total = n?.n ?? 0;
  return { data: rows.map((r) => presentDelivery(r.d, r.e)), ...pageInfo(total, page, pageSize) };
}

/** The most attempts the attempts list returns: the newest ones (a delivery has a handful). */
export const ATTEMPTS_LIMIT = 100;

/** The attempts of one delivery of the endpoint, oldest first (the newest ATTEMPTS_LIMIT). */
export async function listAttempts(deps: Pick<Infra, 'db'>, access: OrgAccess, id: string, deliveryId: string) {
  await load(deps.db, access, id);
  const [d] = await deps.db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.organizationId, access.organizationId),
        eq(webhookDeliveries.id, deliveryId),
        eq(webhookDeliveries.endpointId, id),
      ),
    );
  if (!d) throw notFound('Delivery not found');
  // webhook_attempts_delivery_idx (organization_id, delivery_id, attempt), read backwards.
  const rows = await deps.db
    .select()
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.organizationId, access.organizationId), eq(webhookAttempts.deliveryId, deliveryId)))
    .orderBy(desc(webhookAttempts.attempt), desc(webhookAttempts.createdAt), desc(webhookAttempts.id))
    .limit(ATTEMPTS_LIMIT);
  return rows.reverse().map((a) => ({
    attempt: a.attempt,
    responseStatus: a.responseStatus,
    responseBody: a.responseBody,
    error: a.error,
    durationMs: a.durationMs,
    createdAt: a.createdAt.toISOString(),
  }));
}

/** Queues one more attempt of a delivery that failed (or is waiting for a retry) now. */
export async function retryDelivery(
  deps: Pick<Infra, 'clock' | 'db'>,
  access: OrgAccess,
  id: string,
  deliveryId: string,
) {
  const now = deps.clock.now();
  return transaction(deps.db, async (tx) => {
    const e = await load(tx, access, id);
    if (!e.isActive) throw conflict('The endpoint is disabled', 'Enable it to retry deliveries');
    const [row] = await tx
      .select({ d: webhookDeliveries, e: bodyColumns })
      .from(webhookDeliveries)
      .innerJoin(events, withEvent)
      .where(
        and(
          eq(webhookDeliveries.organizationId, access.organizationId),
          eq(webhookDeliveries.endpointId, id),
          eq(webhookDeliveries.id, deliveryId),
        ),
      )
      .for('update', { of: webhookDeliveries });
    if (!row) throw notFound('Delivery not found');
    const d = row.d;
    if (d.status === 'delivered' || d.status === 'canceled')
      throw conflict(`The delivery is ${d.status}`, 'Only a failed or pending delivery can be retried');
    const [updated] = await tx
      .update(webhookDeliveries)
      .set({ status: 'pending', nextRetryAt: now, updatedAt: now })
      .where(and(eq(webhookDeliveries.organizationId, access.organizationId), eq(webhookDeliveries.id, deliveryId)))
      .returning();
    await tx.execute(sql`select pg_notify(${WAKE_CHANNEL}, '')`);
    await auditChange(deps, tx, access);
    return presentDelivery(updated!, row.e);
  });
}
