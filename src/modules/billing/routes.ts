// Billing (docs/api.md#billing): the plan and usage, checkout, portal and cancellation for people,
// the inbound Stripe events, and the built-in test provider's checkout page.
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import { conflict, notFound } from '../../lib/errors.js';
import type { ErrorExample } from '../../http/errors-doc.js';
import { route } from '../../http/route.js';
import { OrgParams, ref, success } from '../../http/schemas.js';
import type { TestProvider } from '../../providers/payments/test-provider.js';
import {
  BillingResponse,
  CancelResponse,
  CheckoutBody,
  CheckoutResponse,
  PortalResponse,
  StripeAck,
} from './schemas.js';
import * as billing from './service.js';

const tags = ['Billing'];
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
const manage = { org: 'orgId', permission: 'billing:manage' } as const;

export function billingRoutes(deps: Infra) {
  return [
    route({
      method: 'GET',
      url: '/organizations/:orgId/billing',
      auth: { org: 'orgId', permission: 'billing:read' },
      operationId: 'getBilling',
      tags,
      summary: 'Plan, status, subscription and this month’s API usage (members; scope read:billing)',
      description:
        'Any member, or an API key with read:billing. In `plan.limits`, null means unlimited (docs/api.md#plans-and-limits).',
      schema: { params: OrgParams, response: { 200: ref(BillingResponse, 'The billing state') } },
      handler: async (ctx) => success(await billing.getBilling(deps, ctx.access)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/billing/checkout',
      auth: manage,
      operationId: 'createCheckout',
      tags,
      summary:
        'Start a checkout for a plan price (billing:manage); URLs must be on APP_ORIGIN; 409 while a subscription is live (change it in the portal)',
      description: `${MANAGE} Answers a hosted payment page to send the user to; the plan changes when the provider confirms the payment. An unknown price or a URL off APP_ORIGIN answers 400.`,
      schema: {
        params: OrgParams,
        body: ref(CheckoutBody),
        response: { 200: ref(CheckoutResponse, 'The checkout session') },
      },
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
      handler: async (ctx, { body }) => success(await billing.createCheckout(deps, ctx.access, body)),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/billing/portal',
      auth: manage,
      operationId: 'createBillingPortalSession',
      tags,
      summary: 'A customer-portal session (billing:manage); return_url must be on APP_ORIGIN',
      description: `${MANAGE} Answers the provider's customer-portal URL, where plans are changed and payment details kept.`,
      schema: {
        params: OrgParams,
        querystring: Type.Object({
          return_url: Type.String({ minLength: 1, maxLength: 2048, description: 'On the origin of APP_ORIGIN' }),
        }),
        response: { 200: ref(PortalResponse, 'The portal session') },
      },
      errors: [{ ...OFF_ORIGIN, details: 'return_url: must be on http://localhost:3000' }, PROVIDER],
      handler: async (ctx, { query }) => success(await billing.createPortal(deps, ctx.access, query.return_url)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/billing/cancel',
      auth: manage,
      operationId: 'cancelSubscription',
      tags,
      summary: 'Cancel the subscription at the end of the period (billing:manage)',
      description: `${MANAGE} The plan stays until \`data.cancelAt\`; sends billing.canceled at once. No paid subscription: 409. \`data.success\` is deprecated: read the envelope's \`success\` (docs/api.md#billing-routes).`,
      schema: { params: OrgParams, response: { 200: ref(CancelResponse, 'Cancellation scheduled') } },
      errors: [
        {
          code: 'CONFLICT',
          message: 'There is no paid subscription to cancel',
          details: 'The organization is on the Free plan',
        },
        PROVIDER,
      ],
      // data.success: kept for v1 clients (docs/decisions.md#renamed-and-unnested-fields).
      handler: async (ctx) =>
        success({ ...(await billing.cancelSubscription(deps, ctx.access)), success: true as const }),
    }),
    route({
      method: 'POST',
      url: '/billing/webhook',
      auth: 'none',
      operationId: 'receiveStripeEvent',
      tags,
      summary: 'Inbound Stripe events (for Stripe, not for clients)',
      description:
        'Verified with Stripe-Signature against the raw body and applied once per event id, in the order of their `created` time; 400 for a bad signature or an event of an unexpected shape; types not acted on are acknowledged. 404 unless Stripe is the provider and STRIPE_WEBHOOK_SECRET is set (docs/api.md#stripe-events).',
      schema: { response: { 200: ref(StripeAck, 'Received') } },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid Stripe signature',
          details: 'Stripe-Signature: does not verify this body',
        },
        { code: 'NOT_FOUND', message: 'Route not found', details: 'Stripe is not configured' },
        PROVIDER,
      ],
      // Stripe signs the raw body: this route alone keeps it as a string.
      parsers: { 'application/json': (body) => body },
      handler: (ctx) => {
        const raw = ctx.request.body;
        return billing.handleStripeWebhook(
          deps,
          typeof raw === 'string' ? raw : '',
          ctx.request.headers['stripe-signature'] as string | undefined,
        );
      },
    }),
    ...testCheckoutRoutes(deps),
  ];
}

const CHECKOUT_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Checkout not found' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The built-in test provider's checkout page: complete or cancel, as a person would at Stripe. */
function testCheckoutRoutes(deps: Infra) {
  const test = deps.payments as unknown as TestProvider;
  const Params = Type.Object({ sessionId: Type.String({ maxLength: 128 }) });
  // Served only by the built-in test provider.
  const enabled = () => deps.payments.kind === 'test';
  // The page's buttons are plain HTML forms; their (empty) bodies carry nothing we read.
  const parsers = { 'application/x-www-form-urlencoded': () => ({}) };
  return [
    route({
      method: 'GET',
      url: '/billing/test-checkout/:sessionId',
      auth: 'none',
      enabled,
      operationId: 'showTestCheckout',
      tags,
      summary: 'Test provider: the checkout page (no STRIPE_SECRET_KEY)',
      description:
        'An HTML page for a person, served only by the built-in test provider: its buttons complete or abandon the checkout (docs/api.md#test-payment-provider).',
      schema: { params: Params, produces: ['text/html'], response: { 200: Type.String({ description: 'HTML page' }) } },
      errors: [CHECKOUT_NOT_FOUND],
      handler: (ctx, { params }) => {
        const c = test.checkout(params.sessionId);
        if (!c) throw notFound('Checkout not found');
        const base = `/api/v1/billing/test-checkout/${encodeURIComponent(c.sessionId)}`;
        return ctx.reply
          .type('text/html; charset=utf-8')
          .send(
            `<!doctype html><html><head><title>Tenantry test checkout</title></head><body style="font-family:sans-serif;max-width:32rem;margin:3rem auto">` +
              `<h1>Test checkout</h1><p>Organization <code>${esc(c.organizationId)}</code>, price <code>${esc(c.priceId)}</code>.</p>` +
              `<p>No money moves: this page stands in for the payment provider.</p>` +
              (c.state === 'open'
                ? `<form method="post" action="${base}/complete"><button>Pay and subscribe</button></form><form method="post" action="${base}/cancel"><button>Cancel</button></form>`
                : `<p>This checkout is ${esc(c.state)}.</p>`) +
              `</body></html>`,
          );
      },
    }),
    route({
      method: 'POST',
      url: '/billing/test-checkout/:sessionId/complete',
      auth: 'none',
      enabled,
      parsers,
      operationId: 'completeTestCheckout',
      tags,
      summary: 'Test provider: complete the payment (applies the subscription, then redirects to successUrl)',
      description:
        'The "Pay" button of the test checkout page: applies the subscription (a 30-day period) exactly as a Stripe event would, then redirects (303) to successUrl.',
      schema: { params: Params, response: { 303: Type.Null({ description: 'Redirect to successUrl' }) } },
      errors: [
        CHECKOUT_NOT_FOUND,
        { code: 'CONFLICT', message: 'This checkout is complete', details: 'Start a new checkout' },
      ],
      handler: async (ctx, { params }) => {
        const c = test.checkout(params.sessionId);
        if (!c) throw notFound('Checkout not found');
        if (c.state !== 'open') throw conflict(`This checkout is ${c.state}`, 'Start a new checkout');
        const sub = test.completeCheckout(c.sessionId);
        await deps.db.transaction((tx) => billing.applySubscription(deps, tx, sub, deps.clock.now()));
        return ctx.reply.redirect(c.successUrl, 303);
      },
    }),
    route({
      method: 'POST',
      url: '/billing/test-checkout/:sessionId/cancel',
      auth: 'none',
      enabled,
      parsers,
      operationId: 'cancelTestCheckout',
      tags,
      summary: 'Test provider: abandon the checkout (redirects to cancelUrl)',
      description: 'The "Cancel" button of the test checkout page: redirects (303) to cancelUrl.',
      schema: { params: Params, response: { 303: Type.Null({ description: 'Redirect to cancelUrl' }) } },
      errors: [CHECKOUT_NOT_FOUND],
      handler: (ctx, { params }) => {
        const c = test.checkout(params.sessionId);
        if (!c) throw notFound('Checkout not found');
        if (c.state === 'open') c.state = 'canceled';
        return ctx.reply.redirect(c.cancelUrl, 303);
      },
    }),
  ];
}
