// Billing (docs/api.md#billing): the plan and usage, checkout, portal and cancellation for people,
// the inbound Stripe events, and the built-in test provider's checkout page.
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import { conflict, notFound } from '../../lib/errors.js';
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
import { docs } from './docs.js';

const manage = { org: 'orgId', permission: 'billing:manage' } as const;

export function billingRoutes(deps: Infra) {
  return [
    route({
      method: 'GET',
      url: '/organizations/:orgId/billing',
      auth: { org: 'orgId', permission: 'billing:read' },
      doc: docs.getBilling,
      schema: { params: OrgParams, response: { 200: ref(BillingResponse, 'The billing state') } },
      handler: async (ctx) => success(await billing.getBilling(deps, ctx.access)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/billing/checkout',
      auth: manage,
      doc: docs.createCheckout,
      schema: {
        params: OrgParams,
        body: ref(CheckoutBody),
        response: { 200: ref(CheckoutResponse, 'The checkout session') },
      },
      handler: async (ctx, { body }) => success(await billing.createCheckout(deps, ctx.access, body)),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/billing/portal',
      auth: manage,
      doc: docs.createBillingPortalSession,
      schema: {
        params: OrgParams,
        querystring: Type.Object({
          return_url: Type.String({ minLength: 1, maxLength: 2048, description: 'On the origin of APP_ORIGIN' }),
        }),
        response: { 200: ref(PortalResponse, 'The portal session') },
      },
      handler: async (ctx, { query }) => success(await billing.createPortal(deps, ctx.access, query.return_url)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/billing/cancel',
      auth: manage,
      doc: docs.cancelSubscription,
      schema: { params: OrgParams, response: { 200: ref(CancelResponse, 'Cancellation scheduled') } },
      // data.success: kept for v1 clients (docs/decisions.md#renamed-and-unnested-fields).
      handler: async (ctx) =>
        success({ ...(await billing.cancelSubscription(deps, ctx.access)), success: true as const }),
    }),
    route({
      method: 'POST',
      url: '/billing/webhook',
      auth: 'none',
      doc: docs.receiveStripeEvent,
      schema: { response: { 200: ref(StripeAck, 'Received') } },
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
      doc: docs.showTestCheckout,
      schema: { params: Params, produces: ['text/html'], response: { 200: Type.String({ description: 'HTML page' }) } },
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
      doc: docs.completeTestCheckout,
      schema: { params: Params, response: { 303: Type.Null({ description: 'Redirect to successUrl' }) } },
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
      doc: docs.cancelTestCheckout,
      schema: { params: Params, response: { 303: Type.Null({ description: 'Redirect to cancelUrl' }) } },
      handler: (ctx, { params }) => {
        const c = test.checkout(params.sessionId);
        if (!c) throw notFound('Checkout not found');
        if (c.state === 'open') c.state = 'canceled';
        return ctx.reply.redirect(c.cancelUrl, 303);
      },
    }),
  ];
}
