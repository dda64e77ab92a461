// POST /organizations/{orgId}/events: the adopting product publishes its own event types to its
// customers' endpoints (docs/api.md#publishing-your-own-events).
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Body, named, ok, OrgParams, ref } from '../../http/schemas.js';
import { publishEvent } from './publish.js';
import { docs } from './docs.js';

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
      doc: docs.publishEvent,
      schema: {
        params: OrgParams,
        headers: Headers,
        body: ref(PublishEventBody),
        response: { 201: ref(PublishEventResponse, 'Recorded, and its deliveries queued') },
      },
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
