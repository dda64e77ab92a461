import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import { conflict, notFound } from '../../lib/errors.js';
import { errors, orgAccessErrors, type ErrorExample } from '../../http/errors-doc.js';
import { bearerAuth, OrgParams, orgSecurity, ref, success } from '../../http/schemas.js';
import type { TestProvider } from '../../providers/payments/test-provider.js';
import { BillingResponse, CancelResponse, CheckoutBody, CheckoutResponse, PortalResponse, StripeAck } from './schemas.js';
import * as billing from './service.js';
import { orgAccess } from '../../http/access.js';

const tags = ['Billing'];
const PROVIDER: ErrorExample = { code: 'PAYMENT_PROVIDER_ERROR', message: 'The payment provider failed', details: 'The provider did not answer in time' };
const OFF_ORIGIN: ErrorExample = { code: 'VALIDATION_ERROR', message: 'Invalid request', details: 'successUrl: must be on http://localhost:3000' };
const MANAGE = 'Owners and admins (billing:manage); no API-key scope reaches it.';

export const billingRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const authorize = orgAccess(deps);

  app.get('/organizations/:orgId/billing', {
    schema: {
      tags,
      security: orgSecurity('billing:read'),
      operationId: 'getBilling',
      summary: 'Plan, status, subscription and this month’s API usage (members; scope read:billing)',
      description: 'Any member, or an API key with read:billing. In `plan.limits`, null means unlimited (docs/api.md#plans-and-limits).',
      params: OrgParams,
      response: { 200: ref(BillingResponse, 'The billing state'), ...errors(...orgAccessErrors('billing:read')) },
    },
    handler: async (req) => success(await billing.getBilling(deps, await authorize(req, req.params.orgId, 'billing:read'))),
  });

  app.post('/organizations/:orgId/billing/checkout', {
    schema: {
      tags,
      security: bearerAuth,
      operationId: 'createCheckout',
      summary: 'Start a checkout for a plan price (billing:manage); URLs must be on APP_ORIGIN; 409 while a subscription is live (change it in the portal)',
      description: `${MANAGE} Answers a hosted payment page to send the user to; the plan changes when the provider confirms the payment. An unknown price or a URL off APP_ORIGIN answers 400.`,
      params: OrgParams,
      body: ref(CheckoutBody),
      response: {
        200: ref(CheckoutResponse, 'The checkout session'),
        ...errors(
          { code: 'VALIDATION_ERROR', message: 'Unknown price', details: 'priceId: must be one of price_pro, price_enterprise' },
          OFF_ORIGIN,
          ...orgAccessErrors('billing:manage'),
          { code: 'CONFLICT', message: 'The organization already has a subscription', details: 'Change or cancel it in the billing portal' },
          PROVIDER,
        ),
      },
    },
    handler: async (req) => success(await billing.createCheckout(deps, await authorize(req, req.params.orgId, 'billing:manage'), req.body)),
  });

  app.get('/organizations/:orgId/billing/portal', {
    schema: {
      tags,
      security: bearerAuth,
      operationId: 'createBillingPortalSession',
      summary: 'A customer-portal session (billing:manage); return_url must be on APP_ORIGIN',
      description: `${MANAGE} Answers the provider's customer-portal URL, where plans are changed and payment details kept.`,
      params: OrgParams,
      querystring: Type.Object({ return_url: Type.String({ minLength: 1, maxLength: 2048, description: 'On the origin of APP_ORIGIN' }) }),
      response: { 200: ref(PortalResponse, 'The portal session'), ...errors({ ...OFF_ORIGIN, details: 'return_url: must be on http://localhost:3000' }, ...orgAccessErrors('billing:manage'), PROVIDER) },
    },
    handler: async (req) => success(await billing.createPortal(deps, await authorize(req, req.params.orgId, 'billing:manage'), req.query.return_url)),
  });

  app.post('/organizations/:orgId/billing/cancel', {
    schema: {
      tags,
      security: bearerAuth,
      operationId: 'cancelSubscription',
      summary: 'Cancel the subscription at the end of the period (billing:manage)',
      description: `${MANAGE} The plan stays until \`data.cancelAt\`; sends billing.canceled at once. No paid subscription: 409. \`data.success\` is deprecated: read the envelope's \`success\` (docs/api.md#billing-routes).`,
      params: OrgParams,
      response: {
        200: ref(CancelResponse, 'Cancellation scheduled'),
        ...errors(...orgAccessErrors('billing:manage'), { code: 'CONFLICT', message: 'There is no paid subscription to cancel', details: 'The organization is on the Free plan' }, PROVIDER),
      },
    },
    // data.success: kept for v1 clients (docs/decisions.md#renamed-and-unnested-fields).
    handler: async (req) => success({ ...(await billing.cancelSubscription(deps, await authorize(req, req.params.orgId, 'billing:manage'))), success: true as const }),
  });

  // Stripe signs the raw body: this route alone keeps it as a string.
  await app.register(async (raw) => {
    raw.removeContentTypeParser('application/json');
    raw.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    raw.post('/billing/webhook', {
      config: { auth: 'none' },
      schema: {
        tags,
        operationId: 'receiveStripeEvent',
        summary: 'Inbound Stripe events (for Stripe, not for clients)',
        description:
          'Verified with Stripe-Signature against the raw body and applied once per event id, in the order of their `created` time; 400 for a bad signature or an event of an unexpected shape; types not acted on are acknowledged. 404 unless Stripe is the provider and STRIPE_WEBHOOK_SECRET is set (docs/api.md#stripe-events).',
        response: {
          200: ref(StripeAck, 'Received'),
          ...errors(
            { code: 'VALIDATION_ERROR', message: 'Invalid Stripe signature', details: 'Stripe-Signature: does not verify this body' },
            { code: 'NOT_FOUND', message: 'Route not found', details: 'Stripe is not configured' },
            PROVIDER,
          ),
        },
      },
      handler: async (req) => billing.handleStripeWebhook(deps, typeof req.body === 'string' ? req.body : '', req.headers['stripe-signature'] as string | undefined),
    });
  });

  if (deps.payments.kind === 'test') await app.register(testCheckoutRoutes, { deps });
};

const CHECKOUT_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Checkout not found' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The built-in test provider's checkout page: complete or cancel, as a person would at Stripe. */
const testCheckoutRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const test = deps.payments as unknown as TestProvider;
  const Params = Type.Object({ sessionId: Type.String({ maxLength: 128 }) });
  const open = { auth: 'none' as const };
  // The page's buttons are plain HTML forms; their (empty) bodies carry nothing we read.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, _body, done) => done(null, {}));

  app.get('/billing/test-checkout/:sessionId', {
    config: open,
    schema: {
      tags,
      operationId: 'showTestCheckout',
      summary: 'Test provider: the checkout page (no STRIPE_SECRET_KEY)',
      description: 'An HTML page for a person, served only by the built-in test provider: its buttons complete or abandon the checkout (docs/api.md#test-payment-provider).',
      params: Params,
      produces: ['text/html'],
      response: { 200: Type.String({ description: 'HTML page' }), ...errors(CHECKOUT_NOT_FOUND) },
    },
    handler: async (req, reply) => {
      const c = test.checkout(req.params.sessionId);
      if (!c) throw notFound('Checkout not found');
      const base = `/api/v1/billing/test-checkout/${encodeURIComponent(c.sessionId)}`;
      return reply.type('text/html; charset=utf-8').send(
        `<!doctype html><html><head><title>Tenantry test checkout</title></head><body style="font-family:sans-serif;max-width:32rem;margin:3rem auto">` +
          `<h1>Test checkout</h1><p>Organization <code>${esc(c.organizationId)}</code>, price <code>${esc(c.priceId)}</code>.</p>` +
          `<p>No money moves: this page stands in for the payment provider.</p>` +
          (c.state === 'open'
            ? `<form method="post" action="${base}/complete"><button>Pay and subscribe</button></form><form method="post" action="${base}/cancel"><button>Cancel</button></form>`
            : `<p>This checkout is ${esc(c.state)}.</p>`) +
          `</body></html>`,
      );
    },
  });

  app.post('/billing/test-checkout/:sessionId/complete', {
    config: open,
    schema: {
      tags,
      operationId: 'completeTestCheckout',
      summary: 'Test provider: complete the payment (applies the subscription, then redirects to successUrl)',
      description: 'The "Pay" button of the test checkout page: applies the subscription (a 30-day period) exactly as a Stripe event would, then redirects (303) to successUrl.',
      params: Params,
      response: { 303: Type.Null({ description: 'Redirect to successUrl' }), ...errors(CHECKOUT_NOT_FOUND, { code: 'CONFLICT', message: 'This checkout is complete', details: 'Start a new checkout' }) },
    },
    handler: async (req, reply) => {
      const c = test.checkout(req.params.sessionId);
      if (!c) throw notFound('Checkout not found');
      if (c.state !== 'open') throw conflict(`This checkout is ${c.state}`, 'Start a new checkout');
      const sub = test.completeCheckout(c.sessionId);
      await deps.db.transaction((tx) => billing.applySubscription(deps, tx, sub, deps.clock.now()));
      return reply.redirect(c.successUrl, 303);
    },
  });

  app.post('/billing/test-checkout/:sessionId/cancel', {
    config: open,
    schema: {
      tags,
      operationId: 'cancelTestCheckout',
      summary: 'Test provider: abandon the checkout (redirects to cancelUrl)',
      description: 'The "Cancel" button of the test checkout page: redirects (303) to cancelUrl.',
      params: Params,
      response: { 303: Type.Null({ description: 'Redirect to cancelUrl' }), ...errors(CHECKOUT_NOT_FOUND) },
    },
    handler: async (req, reply) => {
      const c = test.checkout(req.params.sessionId);
      if (!c) throw notFound('Checkout not found');
      if (c.state === 'open') c.state = 'canceled';
      return reply.redirect(c.cancelUrl, 303);
    },
  });
};
