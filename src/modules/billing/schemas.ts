import { Type } from 'typebox';
import { Body, named, Nullable, ok, ref, Timestamp } from '../../http/schemas.js';

const Limit = Nullable(Type.Integer({ description: 'null: unlimited' }));
const PERIOD_END = '2026-03-31T12:20:00.000Z';

export const BillingState = named(
  'Billing',
  Type.Object({
    plan: Type.Object({
      name: Type.String({ description: 'Free, Pro or Enterprise' }),
      limits: Type.Object({ members: Limit, apiRequests: Limit, storage: Limit }),
    }),
    status: Type.String({
      description:
        "The provider's subscription status (active, trialing, past_due, canceled, …); active without a subscription",
    }),
    subscription: Nullable(
      Type.Object({ id: Type.String(), currentPeriodEnd: Nullable(Timestamp), cancelAtPeriodEnd: Type.Boolean() }),
    ),
    usage: Type.Object({
      period: Type.String({ description: 'YYYY-MM (UTC)' }),
      apiRequests: Type.Integer({ description: "This month's API-key requests" }),
    }),
  }),
  {
    description: 'docs/api.md#billing-routes',
    examples: [
      {
        plan: { name: 'Pro', limits: { members: 25, apiRequests: 100000, storage: 10737418240 } },
        status: 'active',
        subscription: { id: 'sub_1QxYzAbCdEfGhIjK', currentPeriodEnd: PERIOD_END, cancelAtPeriodEnd: false },
        usage: { period: '2026-03', apiRequests: 42 },
      },
    ],
  },
);
export const BillingResponse = named('BillingResponse', ok({ data: ref(BillingState) }));

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'On the origin of APP_ORIGIN' });
export const CheckoutBody = named(
  'CheckoutRequest',
  Body({
    priceId: Type.String({ minLength: 1, maxLength: 255, description: 'STRIPE_PRICE_PRO or STRIPE_PRICE_ENTERPRISE' }),
    successUrl: Url,
    cancelUrl: Url,
  }),
  {
    examples: [
      {
        priceId: 'price_pro',
        successUrl: 'http://localhost:3000/billing/thanks',
        cancelUrl: 'http://localhost:3000/billing',
      },
    ],
  },
);
export const CheckoutResponse = named(
  'CheckoutResponse',
  ok({ data: Type.Object({ sessionId: Type.String(), url: Type.String({ description: 'Send the user there' }) }) }),
  {
    examples: [
      {
        success: true,
        data: { sessionId: 'cs_test_a1B2c3D4', url: 'https://checkout.stripe.com/c/pay/cs_test_a1B2c3D4' },
      },
    ],
  },
);
export const PortalResponse = named('PortalResponse', ok({ data: Type.Object({ url: Type.String() }) }), {
  examples: [{ success: true, data: { url: 'https://billing.stripe.com/p/session/test_YWNjdF8x' } }],
});
export const CancelResponse = named(
  'CancelSubscriptionResponse',
  ok({
    data: Type.Object({
      cancelAt: Nullable(Timestamp),
      success: Type.Optional(
        Type.Literal(true, {
          deprecated: true,
          description:
            'Repeats the envelope’s success: always sent in v1, to be dropped in v2; read the envelope instead (docs/decisions.md#renamed-and-unnested-fields)',
        }),
      ),
    }),
  }),
  { examples: [{ success: true, data: { cancelAt: PERIOD_END, success: true } }] },
);
export const StripeAck = named(
  'StripeEventReceipt',
  Type.Object({
    received: Type.Boolean(),
    duplicate: Type.Boolean({ description: 'The event id was applied before' }),
  }),
  {
    examples: [{ received: true, duplicate: false }],
  },
);
