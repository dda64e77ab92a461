// What every feature must know of an organization's subscription: which provider statuses pay and
// which have ended, the provider's failures as 502, and that deleting an organization ends its
// subscription at the provider, inside the deletion's transaction (docs/api.md#billing). The billing
// feature owns the rest.
import { eq } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { subscriptions } from '../db/tables/billing.js';
import { AppError } from '../lib/errors.js';
import { type PaymentProvider, PaymentProviderError } from '../providers/payments/provider.js';

export const PAID_STATUSES: ReadonlySet<string> = new Set(['active', 'trialing', 'past_due']);
export const ENDED_STATUSES: ReadonlySet<string> = new Set(['canceled', 'incomplete_expired']);

/** A provider call; its failure answers 502 and changes nothing here. */
export async function callProvider<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof PaymentProviderError)
      throw new AppError('PAYMENT_PROVIDER_ERROR', 'The payment provider failed', err.message.slice(0, 300));
    throw err;
  }
}

/**
 * An organization about to be deleted: its live subscription ends at the provider (502 if it cannot:
 * the caller's transaction then rolls back and nothing is deleted). Called once the deletion is
 * decided, under the locks it was decided on, so no refusal follows a cancellation.
 */
export async function cancelForDeletion(
  deps: { payments: PaymentProvider },
  tx: Tx | Db,
  organizationId: string,
): Promise<void> {
  const [sub] = await tx.select().from(subscriptions).where(eq(subscriptions.organizationId, organizationId));
  if (sub?.subscriptionId && !ENDED_STATUSES.has(sub.status))
    await callProvider(() => deps.payments.cancelNow(sub.subscriptionId!));
}
