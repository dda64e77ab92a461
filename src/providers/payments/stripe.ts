import Stripe from 'stripe';
import { type Static, type TSchema, Type } from 'typebox';
import Value from 'typebox/value';
import type { Config } from '../../config.js';
import { type PaymentProvider, PaymentProviderError, type ProviderSubscription } from './provider.js';

// Shapes of what Stripe sends, checked before anything is read: a correctly signed event (or an API
// answer) of another shape is refused as a whole instead of being half-applied or crashing.
const Id = Type.String({ minLength: 1, maxLength: 255 });
const Epoch = Type.Integer({ minimum: 0 });
const OrNull = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

const EventShape = Type.Object({
  id: Id,
  type: Type.String({ minLength: 1, maxLength: 255 }),
  created: Epoch,
  data: Type.Object({ object: Type.Object({}) }),
});

const SubscriptionShape = Type.Object({
  id: Id,
  customer: Type.Union([Id, Type.Object({ id: Id })]),
  status: Type.String({ pattern: '^[a-z_]{1,64}$' }),
  items: Type.Object({
    data: Type.Array(Type.Object({ price: OrNull(Type.Object({ id: Id })), current_period_end: OrNull(Epoch) })),
  }),
  // Older API versions carry the period on the subscription, newer ones on its items.
  current_period_end: OrNull(Epoch),
  cancel_at_period_end: Type.Optional(Type.Boolean()),
  cancel_at: OrNull(Epoch),
  metadata: OrNull(Type.Object({ organizationId: Type.Optional(Type.String()) })),
});

const CheckoutSessionShape = Type.Object({ subscription: OrNull(Id) });

/** What Stripe sent does not have the shape this code reads; the message names the fields. */
export class StripeShapeError extends Error {}

function check<T extends TSchema>(schema: T, value: unknown, at: string): Static<T> {
  if (Value.Check(schema, value)) return value as Static<T>;
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const err of Value.Errors(schema, value)) {
    // A union reports every branch: the first error at or under a field says enough.
    const said = [...seen].some(
      (p) => p === err.instancePath || (err.keyword !== 'required' && p.startsWith(`${err.instancePath}/`)),
    );
    if (err.keyword === 'anyOf' || said) continue;
    seen.add(err.instancePath);
    const path = [at, ...err.instancePath.split('/').filter(Boolean)].filter(Boolean).join('.');
    const required = (err.params as { requiredProperties?: string[] }).requiredProperties;
    lines.push(
      required
        ? required.map((p) => `${path ? `${path}.` : ''}${p}: is required`).join('; ')
        : `${path || '(root)'}: ${err.message}`,
    );
    if (lines.length === 3) break;
  }
  throw new StripeShapeError(lines.join('; ') || `${at || '(root)'}: is invalid`);
}

export interface StripeEventEnvelope {
  id: string;
  type: string;
  created: number;
  object: Record<string, unknown>;
}

/** The envelope every Stripe event has (any type): id, type, created and an object under data. */
export function parseStripeEvent(value: unknown): StripeEventEnvelope {
  const e = check(EventShape, value, '');
  return { id: e.id, type: e.type, created: e.created, object: e.data.object as Record<string, unknown> };
}

/** The subscription a completed Checkout Session created (null for one-off payments). */
export function checkoutSubscriptionId(session: Record<string, unknown>): string | null {
  return check(CheckoutSessionShape, session, 'data.object').subscription ?? null;
}

/** A Stripe subscription (event object or API answer), checked, in the provider-neutral form. */
export function toProviderSubscription(value: unknown, at = 'data.object'): ProviderSubscription {
  const s = check(SubscriptionShape, value, at);
  const item = s.items.data[0];
  const periodEnd = s.current_period_end ?? item?.current_period_end ?? null;
  return {
    id: s.id,
    customerId: typeof s.customer === 'string' ? s.customer : s.customer.id,
    priceId: item?.price?.id ?? null,
    status: s.status,
    currentPeriodEnd: periodEnd ? new Date(periodEnd * 1000) : null,
    cancelAtPeriodEnd: s.cancel_at_period_end ?? false,
    cancelAt: s.cancel_at ? new Date(s.cancel_at * 1000) : null,
    organizationId: s.metadata?.organizationId ?? null,
  };
}

export function createStripeClient(config: Config): Stripe {
  const base = config.stripe.apiBase ? new URL(config.stripe.apiBase) : null;
  return new Stripe(config.stripe.secretKey!, {
    maxNetworkRetries: 1,
    timeout: 15_000,
    ...(base
      ? {
          host: base.hostname,
          port: Number(base.port || (base.protocol === 'https:' ? 443 : 80)),
          protocol: base.protocol.replace(':', '') as 'http' | 'https',
        }
      : {}),
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
      call(
        async () =>
          (await stripe.customers.create({ name, ...(email ? { email } : {}), metadata: { organizationId } })).id,
      ),
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
    createPortal: ({ customerId, returnUrl }) =>
      call(
        async () => (await stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl })).url,
      ),
    cancelAtPeriodEnd: (id) =>
      call(async () =>
        toProviderSubscription(await stripe.subscriptions.update(id, { cancel_at_period_end: true }), 'subscription'),
      ),
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
    getSubscription: (id) =>
      call(async () => toProviderSubscription(await stripe.subscriptions.retrieve(id), 'subscription')),
  };
}
