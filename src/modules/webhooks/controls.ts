// The controls of one webhook endpoint (docs/api.md#webhook-endpoints, #deliveries): rotating its
// signing secret, with a grace period during which the old one signs too; test events, at most
// TEST_EVENTS_PER_MINUTE a minute; and recovering its failed deliveries. Each runs in one
// transaction that locks the endpoint row first, so it is serialized with the others on the same
// endpoint (two test events cannot both take the last slot; a rotation sees the secret the previous
// one wrote).
import { and, desc, eq, gt, gte, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import type { OrgAccess } from '../../platform/tenancy.js';
import { AppError, conflict, notFound, validationError } from '../../lib/errors.js';
import { encrypt } from '../../lib/secrets.js';
import { auditChange } from '../../platform/audit/record.js';
import { recordEvent, WAKE_CHANNEL } from '../../platform/outbox.js';
import { webhookDeliveries, webhookEndpoints } from '../../db/tables/webhooks.js';
import { transaction } from '../../db/transaction.js';
import { live, newSecret, presentEndpoint } from './service.js';

/** The longest grace a rotation may give the old secret: 7 days. */
export const MAX_GRACE_S = 604_800;
export const TEST_EVENTS_PER_MINUTE = 10;
const TEST_WINDOW_MS = 60_000;

/** The live endpoint, locked until the transaction ends (404 when deleted or in another organization). */
async function lockEndpoint(tx: Tx, access: OrgAccess, id: string) {
  const [e] = await tx.select().from(webhookEndpoints).where(live(access, id)).for('update');
  if (!e) throw notFound('Webhook endpoint not found');
  return e;
}

/**
 * A new secret. With `graceSeconds` > 0 the secret it replaces keeps signing (a second v1, after the
 * new one's) until now + graceSeconds; with 0, it stops at once. The previous secret is kept as the
 * ciphertext it had (encrypted like secret_enc). Rotating again during a grace makes the current
 * secret the previous one, with the new grace: the one before it stops at once (0 drops it too).
 */
export async function rotateSecret(
  deps: Pick<Infra, 'config' | 'clock' | 'db'>,
  access: OrgAccess,
  id: string,
  graceSeconds = 0,
) {
  const secret = newSecret();
  const now = deps.clock.now();
  return transaction(deps.db, async (tx) => {
    const current = await lockEndpoint(tx, access, id);
    const [e] = await tx
      .update(webhookEndpoints)
      .set({
        secretEnc: encrypt(deps.config.encryptionKey, secret),
        previousSecretEnc: graceSeconds > 0 ? current.secretEnc : null,
        previousSecretExpiresAt: graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null,
        updatedAt: now,
      })
      .where(live(access, id))
      .returning();
    await auditChange(deps, tx, access);
    return { ...presentEndpoint(e!), secret };
  });
}

/** Too many test events: Retry-After is the wait, in whole seconds, until one of the last minute's is a minute old. */
const testLimitReached = (retryAfterS: number) =>
  new AppError(
    'RATE_LIMIT_EXCEEDED',
    'Too many test events for this endpoint',
    `Limit of ${TEST_EVENTS_PER_MINUTE} test events per endpoint per minute reached; retry in ${retryAfterS} seconds`,
    { 'Retry-After': String(retryAfterS) },
  );

/**
 * One `test` event to this endpoint only. At most TEST_EVENTS_PER_MINUTE test deliveries of the
 * endpoint created in the last 60 s (by the app's clock); beyond, 429 and nothing is queued. The
 * endpoint's row lock makes the count exact under concurrent requests.
 */
export async function sendTestEvent(deps: Pick<Infra, 'clock' | 'db'>, access: OrgAccess, id: string) {
  return transaction(deps.db, async (tx) => {
    const e = await lockEndpoint(tx, access, id);
    if (!e.isActive) throw conflict('The endpoint is disabled', 'Enable it (isActive: true) to send a test event');
    const now = deps.clock.now().getTime();
    // The TEST_EVENTS_PER_MINUTE-th newest test delivery of the last minute: while there is one, the
    // limit is reached, until it is a minute old (the index on (organization, endpoint, created_at)).
    const [oldestCounted] = await tx
      .select({ createdAt: webhookDeliveries.createdAt })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.organizationId, access.organizationId),
          eq(webhookDeliveries.endpointId, id),
          gt(webhookDeliveries.createdAt, new Date(now - TEST_WINDOW_MS)),
          eq(webhookDeliveries.eventType, 'test'),
        ),
      )
      .orderBy(desc(webhookDeliveries.createdAt))
      .offset(TEST_EVENTS_PER_MINUTE - 1)
      .limit(1);
    if (oldestCounted)
      throw testLimitReached(Math.max(1, Math.ceil((oldestCounted.createdAt.getTime() + TEST_WINDOW_MS - now) / 1000)));
    const { eventId, deliveryIds } = await recordEvent(
      deps,
      tx,
      access.organizationId,
      'test',
      { message: 'This is a test event from Tenantry', webhookId: id },
      id,
    );
    await auditChange(deps, tx, access);
    return { eventId, deliveryId: deliveryIds[0]! };
  });
}

/**
 * Queues again every `failed` delivery of the endpoint created at or after `since`, as a manual
 * retry does each one: the same delivery, `pending`, due now, its attempts still counted, so it gets
 * one more attempt and, if that fails, is `failed` again without automatic retries.
 */
export async function recoverDeliveries(deps: Pick<Infra, 'clock' | 'db'>, access: OrgAccess, id: string, since: Date) {
  const now = deps.clock.now();
  if (since.getTime() > now.getTime())
    throw validationError('Invalid request body', 'since: must not be in the future');
  return transaction(deps.db, async (tx) => {
    const e = await lockEndpoint(tx, access, id);
    if (!e.isActive) throw conflict('The endpoint is disabled', 'Enable it (isActive: true) to recover deliveries');
    const queued = await tx
      .update(webhookDeliveries)
      .set({ status: 'pending', nextRetryAt: now, updatedAt: now })
      .where(
        and(
          eq(webhookDeliveries.organizationId, access.organizationId),
          eq(webhookDeliveries.endpointId, id),
          gte(webhookDeliveries.createdAt, since),
          eq(webhookDeliveries.status, 'failed'),
        ),
      )
      .returning({ id: webhookDeliveries.id });
    if (queued.length > 0) await tx.execute(sql`select pg_notify(${WAKE_CHANNEL}, '')`);
    await auditChange(deps, tx, access);
    return { queued: queued.length };
  });
}
