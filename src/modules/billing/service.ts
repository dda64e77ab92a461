// Subscription billing (docs/api.md#billing). Provider calls run outside transactions; local
// state changes only after the provider answered, so a provider failure (502) changes nothing.
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import type { OrgAccess } from '../../platform/tenancy.js';
import { AppError, conflict, validationError } from '../../lib/errors.js';
import { type ProviderSubscription } from '../../providers/payments/provider.js';
import {
  checkoutSubscriptionId,
  createStripeClient,
  parseStripeEvent,
  StripeShapeError,
  toProviderSubscription,
} from '../../providers/payments/stripe.js';
import { auditChange } from '../../platform/audit/record.js';
import { organizations, type PlanName } from '../../db/tables/organizations.js';
import { recordEvent } from '../../platform/outbox.js';
import { PLANS } from '../../platform/plans.js';
import { callProvider, ENDED_STATUSES, PAID_STATUSES } from '../../platform/subscriptions.js';
import { periodOf } from '../../platform/quota.js';
import { apiRequestsInMonth } from '../../platform/audit/counters.js';
import { billingEvents, subscriptions, type SubscriptionRow } from '../../db/tables/billing.js';
import { transaction } from '../../db/transaction.js';

/** What a call to the payment provider on an organization's customer uses. */
type CustomerDeps = Pick<Infra, 'clock' | 'db' | 'payments'>;

/** What a page of the provider's (checkout, portal) uses. */
type ProviderPageDeps = Pick<Infra, 'config' | 'clock' | 'db' | 'payments'>;

function planOfPrice(deps: Pick<Infra, 'config'>, priceId: string | null): PlanName | null {
  if (priceId === deps.config.stripe.pricePro) return 'pro';
  if (priceId === deps.config.stripe.priceEnterprise) return 'enterprise';
  return null;
}

const presentLimits = (plan: PlanName) => {
  const { members, apiRequests, storage } = PLANS[plan].limits;
  return { members, apiRequests, storage };
};

export async function getBilling(deps: Pick<Infra, 'clock' | 'db'>, access: OrgAccess) {
  const [org] = await deps.db
    .select({ plan: organizations.plan })
    .from(organizations)
    .where(eq(organizations.id, access.organizationId));
  const [sub] = await deps.db
    .select()
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, access.organizationId));
  const period = periodOf(deps.clock.now());
  const requests = await apiRequestsInMonth(deps.db, access.organizationId, period);
  const plan = org?.plan ?? 'free';
  return {
    plan: { name: PLANS[plan].name, limits: presentLimits(plan) },
    status: sub?.status ?? 'active',
    subscription: sub?.subscriptionId
      ? {
          id: sub.subscriptionId,
          currentPeriodEnd: sub.currentPeriodEnd?.toISOString() ?? null,
          cancelAtPeriodEnd: sub.cancelAtPeriodEnd,
        }
      : null,
    usage: { period, apiRequests: requests },
  };
}

/** docs/api.md#billing-routes: exactly the origin of APP_ORIGIN, parsed, not prefix-matched. */
function assertAppUrl(deps: Pick<Infra, 'config'>, field: string, value: string) {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw validationError('Invalid request', `${field}: must be an absolute URL`);
  }
  if (url.origin !== deps.config.appOrigin)
    throw validationError('Invalid request', `${field}: must be on ${deps.config.appOrigin}`);
}

const PENDING = 'pending:';
const CLAIM_STALE_MS = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The organization's one provider customer. The first caller claims the row with a pending marker
 * before asking the provider, so parallel checkouts (on any instance) create one customer: the others
 * wait for the claim to resolve. A failed call removes the claim (nothing changed locally); a claim
 * left by a crashed process is taken over once stale.
 */
async function ensureCustomer(deps: CustomerDeps, access: OrgAccess): Promise<SubscriptionRow> {
  const orgId = access.organizationId;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [existing] = await deps.db.select().from(subscriptions).where(eq(subscriptions.organizationId, orgId));
    if (existing && !existing.customerId.startsWith(PENDING)) return existing;
    const marker = `${PENDING}${randomUUID()}`;
    const now = deps.clock.now();
    let claimed: SubscriptionRow | undefined;
    if (!existing) {
      [claimed] = await deps.db
        .insert(subscriptions)
        .values({ organizationId: orgId, customerId: marker, createdAt: now, updatedAt: now })
        .onConflictDoNothing({ target: subscriptions.organizationId })
        .returning();
    } else if (now.getTime() - existing.updatedAt.getTime() > CLAIM_STALE_MS) {
      [claimed] = await deps.db
        .update(subscriptions)
        .set({ customerId: marker, updatedAt: now })
        .where(sql`${subscriptions.organizationId} = ${orgId} and ${subscriptions.customerId} = ${existing.customerId}`)
        .returning();
    }
    if (!claimed) {
      if (Date.now() > deadline)
        throw new AppError(
          'PAYMENT_PROVIDER_ERROR',
          'The payment provider failed',
          'The customer is still being created; try again',
        );
      await sleep(50);
      continue;
    }
    const [org] = await deps.db.select().from(organizations).where(eq(organizations.id, orgId));
    let customerId: string;
    try {
      customerId = await callProvider(() =>
        deps.payments.createCustomer({
          organizationId: orgId,
          name: org!.name,
          email: org!.settings.billing?.email ?? null,
        }),
      );
    } catch (err) {
      await deps.db
        .delete(subscriptions)
        .where(sql`${subscriptions.organizationId} = ${orgId} and ${subscriptions.customerId} = ${marker}`);
      throw err;
    }
    const [row] = await deps.db
      .update(subscriptions)
      .set({ customerId, updatedAt: deps.clock.now() })
      .where(sql`${subscriptions.organizationId} = ${orgId} and ${subscriptions.customerId} = ${marker}`)
      .returning();
    if (row) return row;
    // Our claim was taken over meanwhile (it looked stale): use whatever customer the row holds now.
  }
}

export async function createCheckout(
  deps: ProviderPageDeps,
  access: OrgAccess,
  input: { priceId: string; successUrl: string; cancelUrl: string },
) {
  if (!planOfPrice(deps, input.priceId)) {
    throw validationError(
      'Unknown price',
      `priceId: must be one of ${deps.config.stripe.pricePro}, ${deps.config.stripe.priceEnterprise}`,
    );
  }
  assertAppUrl(deps, 'successUrl', input.successUrl);
  assertAppUrl(deps, 'cancelUrl', input.cancelUrl);
  const sub = await ensureCustomer(deps, access);
  // A second subscription would bill the customer twice: plan changes go through the portal.
  if (sub.subscriptionId && !ENDED_STATUSES.has(sub.status)) {
    throw conflict('The organization already has a subscription', 'Change or cancel it in the billing portal');
  }
  const session = await callProvider(() =>
    deps.payments.createCheckout({ customerId: sub.customerId, organizationId: access.organizationId, ...input }),
  );
  return session;
}

export async function createPortal(deps: ProviderPageDeps, access: OrgAccess, returnUrl: string) {
  assertAppUrl(deps, 'return_url', returnUrl);
  const sub = await ensureCustomer(deps, access);
  const url = await callProvider(() => deps.payments.createPortal({ customerId: sub.customerId, returnUrl }));
  return { url };
}

export async function cancelSubscription(deps: CustomerDeps, access: OrgAccess) {
  const [sub] = await deps.db
    .select()
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, access.organizationId));
  if (!sub?.subscriptionId || sub.plan === 'free' || !PAID_STATUSES.has(sub.status)) {
    throw conflict('There is no paid subscription to cancel', 'The organization is on the Free plan');
  }
  const updated = await callProvider(() => deps.payments.cancelAtPeriodEnd(sub.subscriptionId!));
  const cancelAt = updated.cancelAt ?? updated.currentPeriodEnd ?? sub.currentPeriodEnd;
  await transaction(deps.db, async (tx) => {
    await tx
      .update(subscriptions)
      .set({ cancelAtPeriodEnd: true, cancelAt, updatedAt: deps.clock.now() })
      .where(eq(subscriptions.organizationId, access.organizationId));
    await recordEvent(deps, tx, access.organizationId, 'billing.canceled', {
      organizationId: access.organizationId,
      subscriptionId: sub.subscriptionId,
      cancelAt: cancelAt?.toISOString() ?? null,
    });
    await auditChange(deps, tx, access);
  });
  return { cancelAt: cancelAt?.toISOString() ?? null };
}

/**
 * The one place subscription state changes, from a provider event or the test provider. A
 * subscription that ended is terminal: its end applies whatever the event's timestamp, and nothing
 * received about its id afterwards changes anything; only another subscription brings a paid plan
 * back. Otherwise an event older than the last one applied is ignored, so out-of-order delivery never
 * moves state backwards.
 */
export async function applySubscription(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'quota'>,
  tx: Tx,
  s: ProviderSubscription,
  eventAt: Date,
  deleted = false,
): Promise<void> {
  const [row] = await tx.select().from(subscriptions).where(eq(subscriptions.customerId, s.customerId)).for('update');
  if (!row) {
    deps.logger.warn({ customerId: s.customerId }, 'billing event for an unknown customer ignored');
    return;
  }
  if (row.endedSubscriptionIds.includes(s.id)) return;
  const ended = deleted || ENDED_STATUSES.has(s.status);
  const now = deps.clock.now();
  const endedIds = ended ? { endedSubscriptionIds: [...row.endedSubscriptionIds, s.id] } : {};
  if (ended && row.subscriptionId && row.subscriptionId !== s.id) {
    // The end of a subscription the organization no longer uses leaves the one it uses alone.
    await tx
      .update(subscriptions)
      .set({ ...endedIds, updatedAt: now })
      .where(eq(subscriptions.organizationId, row.organizationId));
    return;
  }
  // An end is never stale: an update stamped after it but received first must not keep it alive.
  if (!ended && row.lastEventAt && eventAt < row.lastEventAt) return;
  const plan: PlanName = !ended && PAID_STATUSES.has(s.status) ? (planOfPrice(deps, s.priceId) ?? 'free') : 'free';
  const status = deleted ? 'canceled' : s.status;
  await tx
    .update(subscriptions)
    .set({
      subscriptionId: ended ? null : s.id,
      priceId: ended ? null : s.priceId,
      plan,
      status,
      currentPeriodEnd: ended ? null : s.currentPeriodEnd,
      cancelAtPeriodEnd: ended ? false : s.cancelAtPeriodEnd,
      cancelAt: ended ? null : s.cancelAt,
      ...endedIds,
      lastEventAt: row.lastEventAt && row.lastEventAt > eventAt ? row.lastEventAt : eventAt,
      updatedAt: now,
    })
    .where(eq(subscriptions.organizationId, row.organizationId));
  await tx.update(organizations).set({ plan, updatedAt: now }).where(eq(organizations.id, row.organizationId));
  deps.quota.forget(row.organizationId);
  if (ended) {
    await recordEvent(deps, tx, row.organizationId, 'billing.canceled', {
      organizationId: row.organizationId,
      subscriptionId: s.id,
      cancelAt: now.toISOString(),
    });
  } else {
    await recordEvent(deps, tx, row.organizationId, 'billing.updated', {
      organizationId: row.organizationId,
      plan,
      status,
      subscriptionId: s.id,
      currentPeriodEnd: s.currentPeriodEnd?.toISOString() ?? null,
      cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    });
  }
}

/** What Stripe sent, read through its expected shape: anything else is a 400 that changes nothing. */
function shaped<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof StripeShapeError) throw validationError('Unexpected Stripe event', err.message.slice(0, 500));
    throw err;
  }
}

/**
 * Verifies and applies one inbound Stripe event, once per event id (concurrent duplicates included).
 * A signed event of an unexpected shape answers 400 and is not recorded; an event of a type not acted
 * on is acknowledged (and recorded) so Stripe stops sending it.
 */
export async function handleStripeWebhook(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'payments' | 'quota'>,
  rawBody: string,
  signature: string | undefined,
) {
  const secret = deps.config.stripe.webhookSecret;
  // Only the provider in use takes events: with BILLING_PROVIDER=test a Stripe key left in the
  // environment must not let Stripe's events change plans beside the test checkout.
  if (!secret || deps.config.billingProvider !== 'stripe')
    throw new AppError('NOT_FOUND', 'Route not found', 'Stripe is not configured');
  let verified: unknown;
  try {
    verified = createStripeClient(deps.config).webhooks.constructEvent(rawBody, signature ?? '', secret);
  } catch {
    throw validationError('Invalid Stripe signature', 'Stripe-Signature: does not verify this body');
  }
  const event = shaped(() => parseStripeEvent(verified));
  let subscriptionId: string | null = null;
  let sub: ProviderSubscription | null = null;
  if (event.type === 'checkout.session.completed') {
    subscriptionId = shaped(() => checkoutSubscriptionId(event.object));
  } else if (event.type.startsWith('customer.subscription.')) {
    sub = shaped(() => toProviderSubscription(event.object));
  }
  const deleted = event.type === 'customer.subscription.deleted';

  const [seen] = await deps.db
    .select({ id: billingEvents.id })
    .from(billingEvents)
    .where(eq(billingEvents.id, event.id));
  if (seen) return { received: true, duplicate: true };
  if (subscriptionId) sub = await callProvider(() => deps.payments.getSubscription(subscriptionId));

  const applied = await transaction(deps.db, async (tx) => {
    const [first] = await tx
      .insert(billingEvents)
      .values({ id: event.id, type: event.type, receivedAt: deps.clock.now() })
      .onConflictDoNothing()
      .returning({ id: billingEvents.id });
    if (!first) return false;
    if (sub) await applySubscription(deps, tx, sub, new Date(event.created * 1000), deleted);
    return true;
  });
  return { received: true, duplicate: !applied };
}
