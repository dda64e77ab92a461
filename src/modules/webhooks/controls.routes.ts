// The controls of one endpoint, each with its flat alias (paths.ts): test events (at most 10 a
// minute), rotating the secret with an optional grace period, and recovering failed deliveries
// (docs/api.md#webhook-endpoints, #deliveries). The service is controls.ts.
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import type { ErrorExample } from '../../http/errors-doc.js';
import { route } from '../../http/route.js';
import { Body, named, ok, ref, success } from '../../http/schemas.js';
import { MAX_GRACE_S, recoverDeliveries, rotateSecret, sendTestEvent, TEST_EVENTS_PER_MINUTE } from './controls.js';
import { type FlatAlias, OrgHookParams } from './paths.js';
import { EndpointSecretResponse, TestEventResponse } from './schemas.js';

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

const tags = ['Webhooks'];
const MANAGE = 'Owners and admins, or an API key with write:webhooks.';
const manage = { org: 'orgId', permission: 'webhooks:manage' } as const;
const ENDPOINT_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Webhook endpoint not found' };
const disabled = (to: string): ErrorExample => ({
  code: 'CONFLICT',
  message: 'The endpoint is disabled',
  details: `Enable it (isActive: true) to ${to}`,
});
const TEST_LIMIT: ErrorExample = {
  code: 'RATE_LIMIT_EXCEEDED',
  name: 'testEventLimit',
  message: 'Too many test events for this endpoint',
  details: `Limit of ${TEST_EVENTS_PER_MINUTE} test events per endpoint per minute reached; retry in 42 seconds`,
};
const BAD_GRACE: ErrorExample = {
  code: 'VALIDATION_ERROR',
  message: 'Invalid request body',
  details: 'graceSeconds: must be <= 604800',
};
const FUTURE: ErrorExample = {
  code: 'VALIDATION_ERROR',
  message: 'Invalid request body',
  details: 'since: must not be in the future',
};

export function controlRoutes(deps: Infra, flat: FlatAlias) {
  return [
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks/:id/test',
      auth: manage,
      aliases: [flat('/webhooks/:id/test', 'sendWebhookTestEventFlat')],
      operationId: 'sendWebhookTestEvent',
      tags,
      summary: 'Send a test event to this endpoint (webhooks:manage)',
      description: `${MANAGE} One \`test\` event to this endpoint only, whatever its \`events\`; a paused endpoint answers 409. At most ${TEST_EVENTS_PER_MINUTE} per endpoint in any 60 seconds: beyond, 429 with Retry-After (the seconds until one is a minute old) and nothing is queued.`,
      schema: { params: OrgHookParams, response: { 200: ref(TestEventResponse, 'Queued') } },
      errors: [ENDPOINT_NOT_FOUND, disabled('send a test event'), TEST_LIMIT],
      handler: async (ctx, { params }) => success(await sendTestEvent(deps, ctx.access, params.id)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks/:id/rotate-secret',
      auth: manage,
      aliases: [flat('/webhooks/:id/rotate-secret', 'rotateWebhookSecretFlat')],
      operationId: 'rotateWebhookSecret',
      tags,
      summary: 'New signing secret, the old one signing too during an optional grace (webhooks:manage)',
      description: `${MANAGE} Every delivery sent from now on, retries of older events included, is signed with the new secret; with \`graceSeconds\`, until then also with the old one (a second \`v1\`, after the new one's), so a receiver verifies with either. Without a body, or \`graceSeconds: 0\`, the old secret stops at once. Rotating during a grace makes the current secret the old one, with the new grace (docs/api.md#webhook-signatures).`,
      schema: {
        params: OrgHookParams,
        body: ref(RotateSecretBody),
        response: { 200: ref(EndpointSecretResponse, 'The endpoint with its new secret') },
      },
      // The body may be left out: the document says so, and a missing one is {}.
      optionalBody: true,
      errors: [BAD_GRACE, ENDPOINT_NOT_FOUND],
      handler: async (ctx, { params, body }) =>
        success(await rotateSecret(deps, ctx.access, params.id, body.graceSeconds ?? 0)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks/:id/recover',
      auth: manage,
      aliases: [flat('/webhooks/:id/recover', 'recoverWebhookDeliveriesFlat')],
      operationId: 'recoverWebhookDeliveries',
      tags,
      summary: 'Queue again the failed deliveries since a time (webhooks:manage)',
      description: `${MANAGE} Every \`failed\` delivery of the endpoint created at or after \`since\` goes back to \`pending\`, due now, under the same delivery id: one more attempt each, as a manual retry makes (docs/api.md#deliveries). Answers how many were queued; \`since\` in the future answers 400, a paused endpoint 409.`,
      schema: { params: OrgHookParams, body: ref(RecoverBody), response: { 202: ref(RecoverResponse, 'Queued') } },
      errors: [FUTURE, ENDPOINT_NOT_FOUND, disabled('recover deliveries')],
      handler: async (ctx, { params, body }) =>
        success(await recoverDeliveries(deps, ctx.access, params.id, new Date(body.since))),
    }),
  ];
}
