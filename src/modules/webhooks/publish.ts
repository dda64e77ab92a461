// Events the adopting product publishes to its customers' endpoints, with an optional
// Idempotency-Key (docs/api.md#publishing-your-own-events, docs/decisions.md#publishing-your-own-events).
import { and, eq, lte, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import type { OrgAccess } from '../../platform/tenancy.js';
import { conflict, validationError } from '../../lib/errors.js';
import { auditChange } from '../../platform/audit/record.js';
import { ALIASES, EVENT_TYPES, validateEventTypes } from '../../platform/event-catalogue.js';
import { recordEvent } from '../../platform/outbox.js';
import { eventIdempotencyKeys, events } from '../../db/tables/webhooks.js';
import { transaction } from '../../db/transaction.js';

/** How long a key's first answer is returned for its repeats. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface PublishInput {
  type: string;
  data: Record<string, unknown>;
}

export interface PublishedBody {
  success: true;
  data: { id: string; type: string; deliveries: number };
}

export interface PublishAnswer {
  status: number;
  body: PublishedBody;
  /** True when this is the stored answer of an earlier request with the same key. */
  replayed: boolean;
}

/** A custom `a.b` name (the rule endpoints' `events` accept), never one of the service's own types or aliases. */
export function checkCustomType(type: string): void {
  if ((EVENT_TYPES as readonly string[]).includes(type) || ALIASES[type]) {
    throw validationError(
      'Invalid request body',
      `type: "${type}" is an event type of the service; publish your own types, like "order.shipped"`,
    );
  }
  try {
    validateEventTypes([type]);
  } catch {
    throw validationError(
      'Invalid request body',
      `type: "${type}" is not a custom type like "order.shipped" (lowercase letters, digits and _, parts joined by dots)`,
    );
  }
}

const PLACEHOLDER = { status: 0, body: null };

/**
 * Claims the key for this request: inserts its row, or takes over a row older than the window. A
 * concurrent request with the same key waits here on the row until the first commits (or rolls
 * back). Answers false when a live row exists: the caller returns its stored answer.
 */
async function claimKey(deps: Pick<Infra, 'clock'>, tx: Tx, organizationId: string, key: string): Promise<boolean> {
  const now = deps.clock.now();
  const claimed = await tx
    .insert(eventIdempotencyKeys)
    .values({ organizationId, key, eventId: '', response: PLACEHOLDER, createdAt: now })
    .onConflictDoUpdate({
      target: [eventIdempotencyKeys.organizationId, eventIdempotencyKeys.key],
      set: { eventId: '', response: PLACEHOLDER, createdAt: now },
      setWhere: lte(eventIdempotencyKeys.createdAt, new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)),
    })
    .returning({ key: eventIdempotencyKeys.key });
  return claimed.length === 1;
}

/** The stored answer of a live key; 409 when it was first sent with another type or data. */
async function storedAnswer(tx: Tx, organizationId: string, key: string, input: PublishInput): Promise<PublishAnswer> {
  const [row] = await tx
    .select({
      response: eventIdempotencyKeys.response,
      sameRequest: sql<boolean>`coalesce(${events.type} = ${input.type} and ${events.data} = ${JSON.stringify(input.data)}::jsonb, false)`,
    })
    .from(eventIdempotencyKeys)
    .leftJoin(
      events,
      and(eq(events.organizationId, eventIdempotencyKeys.organizationId), eq(events.id, eventIdempotencyKeys.eventId)),
    )
    .where(and(eq(eventIdempotencyKeys.organizationId, organizationId), eq(eventIdempotencyKeys.key, key)));
  if (!row) throw new Error('idempotency key row vanished while locked');
  if (!row.sameRequest) {
    throw conflict(
      'This Idempotency-Key was used for another request',
      'It was first sent with another type or data; send a new key for a new event',
    );
  }
  return { status: row.response.status, body: row.response.body as PublishedBody, replayed: true };
}

export async function publishEvent(
  deps: Pick<Infra, 'clock' | 'db'>,
  access: OrgAccess,
  input: PublishInput,
  key: string | undefined,
): Promise<PublishAnswer> {
  checkCustomType(input.type);
  const organizationId = access.organizationId;
  return transaction(deps.db, async (tx) => {
    if (key !== undefined && !(await claimKey(deps, tx, organizationId, key)))
      return storedAnswer(tx, organizationId, key, input);
    const { eventId, deliveryIds } = await recordEvent(deps, tx, organizationId, input.type, input.data);
    const body: PublishedBody = {
      success: true,
      data: { id: eventId, type: input.type, deliveries: deliveryIds.length },
    };
    if (key !== undefined) {
      await tx
        .update(eventIdempotencyKeys)
        .set({ eventId, response: { status: 201, body } })
        .where(and(eq(eventIdempotencyKeys.organizationId, organizationId), eq(eventIdempotencyKeys.key, key)));
    }
    await auditChange(deps, tx, access);
    return { status: 201, body, replayed: false };
  });
}
