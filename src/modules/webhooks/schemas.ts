import { Type } from 'typebox';
import { Body, named, Nullable, ok, ref, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';

export const Id = Type.String({ minLength: 1, maxLength: 64 });
const ORG_ID = 'org_01jq3bz8n6m4k2j0h8g6f4d2c0';
const ENDPOINT = {
  id: 'wh_01jq3cab2d4f6h8k0m2p4r6t8v',
  organizationId: ORG_ID,
  url: 'https://hooks.example.com/tenantry',
  description: 'Production receiver',
  events: ['project.created', 'member.added'],
  isActive: true,
  disabledReason: null,
  createdAt: '2026-03-01T12:15:00.000Z',
  updatedAt: '2026-03-01T12:15:00.000Z',
};
const SECRET = 'whsec_5f0c2a9d8e7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d';
const EVENT = {
  id: 'evt_01jq3c4e6y8w2s0m9k7h5f3d1c',
  type: 'project.created',
  timestamp: '2026-03-01T12:16:00.000Z',
  data: { projectId: 'prj_01jq3c4e6y8w2s0m9k7h5f3d1b', organizationId: ORG_ID, name: 'Website' },
};
const DELIVERY = {
  id: 'dlv_01jq3cc0e2g4j6m8p0r2t4w6y8',
  endpointId: ENDPOINT.id,
  eventType: 'project.created',
  payload: EVENT,
  status: 'delivered',
  attempts: 1,
  responseStatus: 200,
  responseBody: 'ok',
  lastError: null,
  deliveredAt: '2026-03-01T12:16:01.000Z',
  nextRetryAt: null,
  createdAt: '2026-03-01T12:16:00.000Z',
  updatedAt: '2026-03-01T12:16:01.000Z',
};

const endpointFields = {
  id: Type.String(),
  organizationId: Type.String(),
  url: Type.String(),
  description: Nullable(Type.String()),
  events: Type.Array(Type.String(), { description: 'Empty: every event' }),
  isActive: Type.Boolean({ description: 'false: paused, no new deliveries' }),
  // failing: turned off by the service after WEBHOOK_DISABLE_AFTER_H hours of failed attempts;
  // null when active or turned off by a person. Setting isActive clears it (docs/api.md#auto-disable).
  disabledReason: Type.Union([Type.Literal('failing'), Type.Null()], {
    description:
      'failing: turned off by the service after every attempt failed for WEBHOOK_DISABLE_AFTER_H hours (docs/api.md#auto-disable); null otherwise',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
export const Endpoint = named('WebhookEndpoint', Type.Object(endpointFields), {
  description: 'docs/api.md#webhook-endpoints',
  examples: [ENDPOINT],
});
export const EndpointWithSecret = named(
  'WebhookEndpointWithSecret',
  Type.Object({
    ...endpointFields,
    secret: Type.String({ description: 'whsec_ + 64 hex: shown at creation and rotation only' }),
  }),
  { examples: [{ ...ENDPOINT, secret: SECRET }] },
);
export const WebhookEvent = named(
  'WebhookEvent',
  Type.Object({
    id: Type.String({
      description: "The event's id: the same in every endpoint's delivery of the event and on every attempt",
    }),
    type: Type.String({ description: 'The event type (docs/api.md#event-types)' }),
    timestamp: Type.String({ description: 'When the event was recorded' }),
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'By type: docs/api.md#event-payloads' }),
  }),
  {
    description: 'The body of every delivery, signed with X-Webhook-Signature (docs/api.md#webhook-signatures)',
    examples: [EVENT],
  },
);
export const Delivery = named(
  'WebhookDelivery',
  Type.Object({
    id: Type.String({ description: 'Sent as X-Webhook-Delivery-ID' }),
    endpointId: Type.String(),
    eventType: Type.String(),
    payload: ref(WebhookEvent),
    status: Type.Enum(['pending', 'delivered', 'failed', 'canceled']),
    attempts: Type.Integer(),
    responseStatus: Nullable(Type.Integer()),
    responseBody: Nullable(Type.String({ description: 'The first 500 characters of the last answer' })),
    lastError: Nullable(Type.String()),
    deliveredAt: Nullable(Timestamp),
    nextRetryAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  { description: 'docs/api.md#deliveries', examples: [DELIVERY] },
);

const fields = {
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'http or https, to an allowed destination (docs/api.md#webhook-url-rules)',
  }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  events: Type.Optional(
    Type.Array(Type.String({ maxLength: 100 }), {
      maxItems: 100,
      description: 'Event types, aliases or custom a.b names; empty or omitted: every event',
    }),
  ),
};
export const CreateBody = named('CreateWebhookEndpointRequest', Body(fields), {
  examples: [{ url: ENDPOINT.url, description: ENDPOINT.description, events: ENDPOINT.events }],
});
export const CreateFlatBody = named(
  'CreateWebhookEndpointFlatRequest',
  Body({
    ...fields,
    organizationId: Type.Optional({
      ...Id,
      description: 'Required with an access token; with an API key, its organization',
    }),
  }),
);
export const PatchBody = named(
  'UpdateWebhookEndpointRequest',
  Body({
    url: Type.Optional(fields.url),
    description: fields.description,
    events: fields.events,
    isActive: Type.Optional(Type.Boolean()),
  }),
  { examples: [{ isActive: false }] },
);

export const EndpointResponse = named('WebhookEndpointResponse', ok({ data: ref(Endpoint) }));
export const EndpointSecretResponse = named(
  'WebhookEndpointWithSecretResponse',
  ok({ data: ref(EndpointWithSecret) }),
  {
    examples: [{ success: true, data: { ...ENDPOINT, secret: SECRET } }],
  },
);
export const EndpointListResponse = named('WebhookEndpointListResponse', ok({ data: Type.Array(ref(Endpoint)) }), {
  description: 'Not paginated: an organization holds few endpoints',
});
export const DeliveryResponse = named('WebhookDeliveryResponse', ok({ data: ref(Delivery) }));
export const DeliveryListResponse = named(
  'WebhookDeliveryListResponse',
  ok({ data: Type.Array(ref(Delivery)), ...PageFields }),
  {
    description: 'A page of deliveries, newest first',
    examples: [{ success: true, data: [DELIVERY], total: 1, page: 1, pageSize: 20, hasMore: false }],
  },
);
const ATTEMPTS = [
  {
    attempt: 1,
    responseStatus: 500,
    responseBody: 'boom',
    error: null,
    durationMs: 42,
    createdAt: '2026-03-01T12:16:00.000Z',
  },
  {
    attempt: 2,
    responseStatus: null,
    responseBody: null,
    error: 'connect ECONNREFUSED',
    durationMs: 3,
    createdAt: '2026-03-01T12:17:00.000Z',
  },
  {
    attempt: 3,
    responseStatus: 200,
    responseBody: 'ok',
    error: null,
    durationMs: 38,
    createdAt: '2026-03-01T12:22:00.000Z',
  },
];
export const DeliveryAttempt = named(
  'WebhookDeliveryAttempt',
  Type.Object({
    attempt: Type.Integer({ description: 'The attempt number, from 1' }),
    responseStatus: Nullable(Type.Integer({ description: 'The HTTP status answered; null when there was no answer' })),
    responseBody: Nullable(Type.String({ description: 'The first 500 characters of the answer' })),
    error: Nullable(
      Type.String({
        description:
          'Why it failed without an answer (a timeout, a refused connection, a blocked destination) or the redirect not followed; null for any other answer',
      }),
    ),
    durationMs: Type.Integer({ description: 'How long the attempt took, in milliseconds' }),
    createdAt: Timestamp,
  }),
  { description: 'One attempt of a delivery (docs/api.md#deliveries)', examples: [ATTEMPTS[0]] },
);
export const DeliveryAttemptListResponse = named(
  'WebhookDeliveryAttemptListResponse',
  ok({ data: Type.Array(ref(DeliveryAttempt)) }),
  {
    description: "The delivery's attempts, oldest first (the newest 100 at most)",
    examples: [{ success: true, data: ATTEMPTS }],
  },
);
export const SuccessMessage = named('SuccessMessage', ok({ message: Type.String() }), {
  examples: [{ success: true, message: 'Webhook endpoint deleted' }],
});
export const TestEventResponse = named(
  'WebhookTestResponse',
  ok({ data: Type.Object({ eventId: Type.String(), deliveryId: Type.String() }) }),
  {
    examples: [
      {
        success: true,
        data: { eventId: 'evt_01jq3cd2f4h6k8m0p2r4t6w8y0', deliveryId: 'dlv_01jq3cd2g6j8m0p2r4t6w8y0a2' },
      },
    ],
  },
);
