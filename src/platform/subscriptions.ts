// What every feature must know of an organization's subscription: which provider statuses pay and
// which have ended, the provider's failures as 502, and that deleting an organization ends its
// subscription at the provider first (docs/api.md#billing). The billing feature owns the rest.
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
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
    if (err instanceof PaymentProviderError) throw new AppError(502, 'PAYMENT_PROVIDER_ERROR', 'The payment provider failed', err.message.slice(0, 300));
    throw err;
  }
}

/** Before an organization is deleted: its live subscription ends at the provider (502 if it cannot). */
export async function cancelForDeletion(deps: { db: Db; payments: PaymentProvider }, organizationId: string): Promise<void> {
  const [sub] = await deps.db.select().from(subscriptions).where(eq(subscriptions.organizationId, organizationId));
  if (sub?.subscriptionId && !ENDED_STATUSES.has(sub.status)) await callProvider(() => deps.payments.cancelNow(sub.subscriptionId!));
}
