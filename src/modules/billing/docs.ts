// The OpenAPI prose of the billing routes (routes.ts), by operationId: each operation's summary,
// description and the error examples its service answers. The declarations name them (`doc: docs.getBilling`).
import { type ErrorExample, notFound } from '../../http/errors-doc.js';
import { routeDocs } from '../../http/route.js';

const PROVIDER: ErrorExample = {
  code: 'PAYMENT_PROVIDER_ERROR',
  message: 'The payment provider failed',
  details: 'The provider did not answer in time',
};
const OFF_ORIGIN: ErrorExample = {
  code: 'VALIDATION_ERROR',
  message: 'Invalid request',
  details: 'successUrl: must be on http://localhost:3000',
};
const MANAGE = 'Owners and admins (billing:manage); no API-key scope reaches it.';
const CHECKOUT_NOT_FOUND = notFound('Checkout not found');

export const docs = routeDocs(['Billing'], {
  getBilling: {
    summary: 'Plan, status, subscription and this month’s API usage (members; scope read:billing)',
    description:
      'Any member, or an API key with read:billing. In `plan.limits`, null means unlimited (docs/api.md#plans-and-limits).',
  },
  createCheckout: {
    summary:
      'Start a checkout for a plan price (billing:manage); URLs must be on APP_ORIGIN; 409 while a subscription is live (change it in the portal)',
    description: `${MANAGE} Answers a hosted payment page to send the user to; the plan changes when the provider confirms the payment. An unknown price or a URL off APP_ORIGIN answers 400.`,
    errors: [
      {
        code: 'VALIDATION_ERROR',
        message: 'Unknown price',
        details: 'priceId: must be one of price_pro, price_enterprise',
      },
      OFF_ORIGIN,
      {
        code: 'CONFLICT',
        message: 'The organization already has a subscription',
        details: 'Change or cancel it in the billing portal',
      },
      PROVIDER,
    ],
  },
  createBillingPortalSession: {
    summary: 'A customer-portal session (billing:manage); return_url must be on APP_ORIGIN',
    description: `${MANAGE} Answers the provider's customer-portal URL, where plans are changed and payment details kept.`,
    errors: [{ ...OFF_ORIGIN, details: 'return_url: must be on http://localhost:3000' }, PROVIDER],
  },
  cancelSubscription: {
    summary: 'Cancel the subscription at the end of the period (billing:manage)',
    description: `${MANAGE} The plan stays until \`data.cancelAt\`; sends billing.canceled at once. No paid subscription: 409. \`data.success\` is deprecated: read the envelope's \`success\` (docs/api.md#billing-routes).`,
    errors: [
      {
        code: 'CONFLICT',
        message: 'There is no paid subscription to cancel',
        details: 'The organization is on the Free plan',
      },
      PROVIDER,
    ],
  },
  receiveStripeEvent: {
    summary: 'Inbound Stripe events (for Stripe, not for clients)',
    description:
      'Verified with Stripe-Signature against the raw body and applied once per event id, in the order of their `created` time; 400 for a bad signature or an event of an unexpected shape; types not acted on are acknowledged. 404 unless Stripe is the provider and STRIPE_WEBHOOK_SECRET is set (docs/api.md#stripe-events).',
    errors: [
      {
        code: 'VALIDATION_ERROR',
        message: 'Invalid Stripe signature',
        details: 'Stripe-Signature: does not verify this body',
      },
      { code: 'NOT_FOUND', message: 'Route not found', details: 'Stripe is not configured' },
      PROVIDER,
    ],
  },
  showTestCheckout: {
    summary: 'Test provider: the checkout page (no STRIPE_SECRET_KEY)',
    description:
      'An HTML page for a person, served only by the built-in test provider: its buttons complete or abandon the checkout (docs/api.md#test-payment-provider).',
    errors: [CHECKOUT_NOT_FOUND],
  },
  completeTestCheckout: {
    summary: 'Test provider: complete the payment (applies the subscription, then redirects to successUrl)',
    description:
      'The "Pay" button of the test checkout page: applies the subscription (a 30-day period) exactly as a Stripe event would, then redirects (303) to successUrl.',
    errors: [
      CHECKOUT_NOT_FOUND,
      { code: 'CONFLICT', message: 'This checkout is complete', details: 'Start a new checkout' },
    ],
  },
  cancelTestCheckout: {
    summary: 'Test provider: abandon the checkout (redirects to cancelUrl)',
    description: 'The "Cancel" button of the test checkout page: redirects (303) to cancelUrl.',
    errors: [CHECKOUT_NOT_FOUND],
  },
});
