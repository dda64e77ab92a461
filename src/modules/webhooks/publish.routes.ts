// POST /organizations/{orgId}/events: the adopting product publishes its own event types to its
// customers' endpoints (docs/api.md#publishing-your-own-events).
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Body, named, ok, OrgParams, ref } from '../../http/schemas.js';
import { publishEvent } from './publish.js';

const EXAMPLE = { type: 'order.shipped', data: { orderId: 'ord_1042', carrier: 'UPS' } };

export const PublishEventBody = named(
  'PublishEventRequest',
  Body({
    type: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'A custom `a.b` type (e.g. `order.shipped`), not one of the service’s own (docs/api.md#event-types)',
    }),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Any JSON object: the `data` of the delivered body',
    }),
  }),
  { examples: [EXAMPLE] },
);

export const PublishEventResponse = named(
  'PublishEventResponse',
  ok({
    data: Type.Object({
      id: Type.String({ description: 'The event (`evt_…`): the `id` of every delivery’s body' }),
      type: Type.String(),
      deliveries: Type.Integer({
        description: 'Deliveries queued: the active endpoints subscribed to this type or to every event',
      }),
    }),
  }),
  { examples: [{ success: true, data: { id: 'evt_01jq3cd2f4h6k8m0p2r4t6w8y0', type: EXAMPLE.type, deliveries: 2 } }] },
);

const Headers = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Repeated within 24 h in this organization: the first answer again, nothing recorded (docs/api.md#publishing-your-own-events)',
    }),
  ),
});

export function publishRoutes(deps: Infra) {
  return [
    route({
      method: 'POST',
      url: '/organizations/:orgId/events',
      auth: { org: 'orgId', permission: 'events:publish' },
      operationId: 'publishEvent',
      tags: ['Webhooks'],
      summary: 'Publish an event of your own to the endpoints subscribed to it (events:publish)',
      description:
        'Owners and admins, or an API key with write:events. `type` is a custom `a.b` name, not one of the service’s own types; the event is delivered, signed, ' +
        'to every active endpoint of the organization subscribed to it or to every event. With `Idempotency-Key`, a repeat within 24 h answers the first answer ' +
        '(with `Idempotent-Replayed: true`) and records nothing; the same key with another `type` or `data` answers 409. Every publish counts against the ' +
        'organization’s monthly apiRequests quota, with an access token as with an API key (429 QUOTA_EXCEEDED past it).',
      schema: {
        params: OrgParams,
        headers: Headers,
        body: ref(PublishEventBody),
        response: { 201: ref(PublishEventResponse, 'Recorded, and its deliveries queued') },
      },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          name: 'serviceType',
          message: 'Invalid request body',
          details:
            'type: "project.created" is an event type of the service; publish your own types, like "order.shipped"',
        },
        {
          code: 'CONFLICT',
          name: 'idempotencyKeyReused',
          message: 'This Idempotency-Key was used for another request',
          details: 'It was first sent with another type or data; send a new key for a new event',
        },
      ],
      handler: async (ctx, { body }) => {
        // The headers schema let through one string at most.
        const key = ctx.request.headers['idempotency-key'] as string | undefined;
        // What a publish stores counts against the monthly quota, whoever sends it: an API key's request
        // was counted by the pipeline already; a person's is counted here, once their access is known
        // (a caller refused by the guard takes nothing from the organization's quota).
        if (ctx.access.actor.type === 'user') await deps.quota.take(ctx.access.organizationId);
        const answer = await publishEvent(deps, ctx.access, body, key);
        // A replay answers the first answer: its status and body, marked as replayed.
        if (answer.replayed) ctx.reply.header('idempotent-replayed', 'true');
        ctx.reply.status(answer.status);
        return answer.body;
      },
    }),
  ];
}
