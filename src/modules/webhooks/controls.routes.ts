// The controls of one endpoint, each with its flat alias (paths.ts): test events (at most 10 a
// minute), rotating the secret with an optional grace period, and recovering failed deliveries
// (docs/api.md#webhook-endpoints, #deliveries). The service is controls.ts.
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Body, named, ok, ref, success } from '../../http/schemas.js';
import { MAX_GRACE_S, recoverDeliveries, rotateSecret, sendTestEvent } from './controls.js';
import { type FlatAlias, OrgHookParams } from './paths.js';
import { EndpointSecretResponse, TestEventResponse } from './schemas.js';
import { docs } from './docs.js';

export const RotateSecretBody = named(
  'RotateWebhookSecretRequest',
  Body({
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_S,
        description:
          'How long the old secret keeps signing too, in seconds (at most 7 days); 0 (the default): it stops at once',
      }),
    ),
  }),
  { description: 'Optional: an empty body (or none) rotates with no grace', examples: [{ graceSeconds: 86_400 }] },
);
export const RecoverBody = named(
  'RecoverWebhookDeliveriesRequest',
  Body({
    since: Type.String({
      format: 'date-time',
      description: 'The failed deliveries created at or after this time are queued again; not in the future',
    }),
  }),
  { examples: [{ since: '2026-03-01T00:00:00.000Z' }] },
);
export const RecoverResponse = named(
  'WebhookRecoverResponse',
  ok({ data: Type.Object({ queued: Type.Integer({ description: 'Failed deliveries queued again' }) }) }),
  {
    examples: [{ success: true, data: { queued: 12 } }],
  },
);

const manage = { org: 'orgId', permission: 'webhooks:manage' } as const;

export function controlRoutes(deps: Infra, flat: FlatAlias) {
  return [
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks/:id/test',
      auth: manage,
      aliases: [flat('/webhooks/:id/test', 'sendWebhookTestEventFlat')],
      doc: docs.sendWebhookTestEvent,
      schema: { params: OrgHookParams, response: { 200: ref(TestEventResponse, 'Queued') } },
      handler: async (ctx, { params }) => success(await sendTestEvent(deps, ctx.access, params.id)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks/:id/rotate-secret',
      auth: manage,
      aliases: [flat('/webhooks/:id/rotate-secret', 'rotateWebhookSecretFlat')],
      doc: docs.rotateWebhookSecret,
      schema: {
        params: OrgHookParams,
        body: ref(RotateSecretBody),
        response: { 200: ref(EndpointSecretResponse, 'The endpoint with its new secret') },
      },
      // The body may be left out: the document says so, and a missing one is {}.
      optionalBody: true,
      handler: async (ctx, { params, body }) =>
        success(await rotateSecret(deps, ctx.access, params.id, body.graceSeconds ?? 0)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks/:id/recover',
      auth: manage,
      aliases: [flat('/webhooks/:id/recover', 'recoverWebhookDeliveriesFlat')],
      doc: docs.recoverWebhookDeliveries,
      schema: { params: OrgHookParams, body: ref(RecoverBody), response: { 202: ref(RecoverResponse, 'Queued') } },
      handler: async (ctx, { params, body }) =>
        success(await recoverDeliveries(deps, ctx.access, params.id, new Date(body.since))),
    }),
  ];
}
