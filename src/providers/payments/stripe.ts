import Stripe from 'stripe';
import type { Config } from '../../config.js';
import { type PaymentProvider, PaymentProviderError, type ProviderSubscription } from './provider.js';

export function toProviderSubscription(s: Stripe.Subscription): ProviderSubscription {
  const item = s.items?.data?.[0] as (Stripe.SubscriptionItem & { current_period_end?: number }) | undefined;
  // Newer API versions moved current_period_end onto the items.
  const periodEnd = (s as unknown as { current_period_end?: number }).current_period_end ?? item?.current_period_end ?? null;
  return {
    id: s.id,
    customerId: typeof s.customer === 'string' ? s.customer : s.customer.id,
    priceId: item?.price?.id ?? null,
    status: s.status,
    currentPeriodEnd: periodEnd ? new Date(periodEnd * 1000) : null,
    cancelAtPeriodEnd: Boolean(s.cancel_at_period_end),
    cancelAt: s.cancel_at ? new Date(s.cancel_at * 1000) : null,
    organizationId: s.metadata?.organizationId ?? null,
  };
}

export function createStripeClient(config: Config): Stripe {
  const base = config.stripe.apiBase ? new URL(config.stripe.apiBase) : null;
  return new Stripe(config.stripe.secretKey!, {
    maxNetworkRetries: 1,
    timeout: 15_000,
    ...(base ? { host: base.hostname, port: Number(base.port || (base.protocol === 'https:' ? 443 : 80)), protocol: base.protocol.replace(':', '') as 'http' | 'https' } : {}),
  });
}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new PaymentProviderError((err as Error).message);
  }
}

export function createStripeProvider(config: Config): PaymentProvider {
  const stripe = createStripeClient(config);
  return {
    kind: 'stripe',
    createCustomer: ({ organizationId, name, email }) =>
      call(async () => (await stripe.customers.create({ name, ...(email ? { email } : {}), metadata: { organizationId } })).id),
    createCheckout: ({ customerId, priceId, successUrl, cancelUrl, organizationId }) =>
      call(async () => {
        const session = await stripe.checkout.sessions.create({
          mode: 'subscription',
          customer: customerId,
          line_items: [{ price: priceId, quantity: 1 }],
          success_url: successUrl,
          cancel_url: cancelUrl,
          client_reference_id: organizationId,
          metadata: { organizationId },
          subscription_data: { metadata: { organizationId } },
        });
        return { sessionId: session.id, url: session.url ?? '' };
      }),
    createPortal: ({ customerId, returnUrl }) => call(async () => (await stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl })).url),
    cancelAtPeriodEnd: (id) => call(async () => toProviderSubscription(await stripe.subscriptions.update(id, { cancel_at_period_end: true }))),
    cancelNow: (id) =>
      call(async () => {
        try {
          await stripe.subscriptions.cancel(id);
        } catch (err) {
          // Already ended at Stripe (its deletion event not here yet): nothing is left to cancel.
          if (err instanceof Stripe.errors.StripeError && err.code === 'resource_missing') return;
          if (err instanceof Stripe.errors.StripeInvalidRequestError) {
            const s = await stripe.subscriptions.retrieve(id);
            if (s.status === 'canceled' || s.status === 'incomplete_expired') return;
          }
          throw err;
        }
      }),
    getSubscription: (id) => call(async () => toProviderSubscription(await stripe.subscriptions.retrieve(id))),
  };
}
