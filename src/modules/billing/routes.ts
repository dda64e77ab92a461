import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../deps.js';
import { conflict, notFound } from '../../http/errors.js';
import { Body, bearerAuth, bearerOrKey, errors, Nullable, Timestamp } from '../../http/schemas.js';
import type { TestProvider } from '../../providers/payments/test-provider.js';
import { OrgParams } from '../organizations/schemas.js';
import * as billing from './service.js';

const tags = ['billing'];
const ok = <T extends Parameters<typeof Type.Object>[0]>(props: T) => Type.Object({ success: Type.Literal(true), ...props });
const Limit = Nullable(Type.Integer({ description: 'null: unlimited' }));
const Billing = ok({
  data: Type.Object({
    plan: Type.Object({ name: Type.String(), limits: Type.Object({ members: Limit, apiRequests: Limit, storage: Limit }) }),
    status: Type.String(),
    subscription: Nullable(Type.Object({ id: Type.String(), currentPeriodEnd: Nullable(Timestamp), cancelAtPeriodEnd: Type.Boolean() })),
    usage: Type.Object({ period: Type.String({ description: 'YYYY-MM (UTC)' }), apiRequests: Type.Integer() }),
  }),
});
const Url = Type.String({ minLength: 1, maxLength: 2048 });

export const billingRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const authorize = deps.authorizeOrg;

  app.get('/organizations/:orgId/billing', {
    schema: { tags, security: bearerOrKey, summary: 'Plan, status, subscription and this month’s API usage (members; scope read:billing)', params: OrgParams, response: { 200: Billing, ...errors(401, 403, 404) } },
    handler: async (req) => billing.getBilling(deps, await authorize(req, req.params.orgId, 'billing:read')),
  });

  app.post('/organizations/:orgId/billing/checkout', {
    schema: {
      tags,
      security: bearerAuth,
      summary: 'Start a checkout for a plan price (billing:manage); URLs must be on APP_ORIGIN; 409 while a subscription is live (change it in the portal)',
      params: OrgParams,
      body: Body({ priceId: Type.String({ minLength: 1, maxLength: 255 }), successUrl: Url, cancelUrl: Url }),
      response: { 200: ok({ data: Type.Object({ sessionId: Type.String(), url: Type.String() }) }), ...errors(401, 403, 404, 409, 502) },
    },
    handler: async (req) => billing.createCheckout(deps, await authorize(req, req.params.orgId, 'billing:manage'), req.body),
  });

  app.get('/organizations/:orgId/billing/portal', {
    schema: {
      tags,
      security: bearerAuth,
      summary: 'A customer-portal session (billing:manage); return_url must be on APP_ORIGIN',
      params: OrgParams,
      querystring: Type.Object({ return_url: Url }),
      response: { 200: ok({ data: Type.Object({ url: Type.String() }) }), ...errors(401, 403, 404, 502) },
    },
    handler: async (req) => billing.createPortal(deps, await authorize(req, req.params.orgId, 'billing:manage'), req.query.return_url),
  });

  app.post('/organizations/:orgId/billing/cancel', {
    schema: {
      tags,
      security: bearerAuth,
      summary: 'Cancel the subscription at the end of the period (billing:manage)',
      params: OrgParams,
      response: { 200: ok({ data: Type.Object({ success: Type.Literal(true), cancelAt: Nullable(Timestamp) }) }), ...errors(401, 403, 404, 409, 502) },
    },
    handler: async (req) => billing.cancelSubscription(deps, await authorize(req, req.params.orgId, 'billing:manage')),
  });

  // Stripe signs the raw body: this route alone keeps it as a string.
  await app.register(async (raw) => {
    raw.removeContentTypeParser('application/json');
    raw.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    raw.post('/billing/webhook', {
      config: { auth: 'none' },
      schema: {
        tags,
        summary:
          'Inbound Stripe events (verified with Stripe-Signature, processed once per event id); 400 for a bad signature or an event of an unexpected shape; types not acted on are acknowledged',
        response: { 200: Type.Object({ received: Type.Boolean(), duplicate: Type.Boolean() }), ...errors(404, 502) },
      },
      handler: async (req) => billing.handleStripeWebhook(deps, typeof req.body === 'string' ? req.body : '', req.headers['stripe-signature'] as string | undefined),
    });
  });

  if (deps.payments.kind === 'test') await app.register(testCheckoutRoutes, { deps });
};

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The built-in test provider's checkout page: complete or cancel, as a person would at Stripe. */
const testCheckoutRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const test = deps.payments as unknown as TestProvider;
  const Params = Type.Object({ sessionId: Type.String({ maxLength: 128 }) });
  const open = { auth: 'none' as const };
  // The page's buttons are plain HTML forms; their (empty) bodies carry nothing we read.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, _body, done) => done(null, {}));

  app.get('/billing/test-checkout/:sessionId', {
    config: open,
    schema: {
      tags,
      summary: 'Test provider: the checkout page (no STRIPE_SECRET_KEY)',
      params: Params,
      produces: ['text/html'],
      response: { 200: Type.String({ description: 'HTML page' }), ...errors(404) },
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
      summary: 'Test provider: complete the payment (applies the subscription, then redirects to successUrl)',
      params: Params,
      response: { 303: Type.Null({ description: 'Redirect to successUrl' }), ...errors(404, 409) },
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
      summary: 'Test provider: abandon the checkout (redirects to cancelUrl)',
      params: Params,
      response: { 303: Type.Null({ description: 'Redirect to cancelUrl' }), ...errors(404) },
    },
    handler: async (req, reply) => {
      const c = test.checkout(req.params.sessionId);
      if (!c) throw notFound('Checkout not found');
      if (c.state === 'open') c.state = 'canceled';
      return reply.redirect(c.cancelUrl, 303);
    },
  });
};
