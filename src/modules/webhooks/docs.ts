// The OpenAPI prose of the webhook routes (routes.ts, controls.routes.ts, publish.routes.ts), by
// operationId: each operation's summary, description and the error examples its services answer. The
// flat aliases' sentences are paths.ts's.
import { type ErrorExample, invalidBody, notFound } from '../../http/errors-doc.js';
import { TEST_EVENTS_PER_MINUTE } from './controls.js';
import { routeDocs } from '../../http/route.js';

const DELIVERY_NOT_FOUND = notFound('Delivery not found', 'deliveryNotFound');
const ENDPOINT_NOT_FOUND = notFound('Webhook endpoint not found');
const BAD_URL: ErrorExample = {
  code: 'VALIDATION_ERROR',
  message: 'Invalid webhook URL',
  details: 'url: blocked: destination not allowed',
};
const SEATS: ErrorExample = {
  code: 'PLAN_LIMIT_EXCEEDED',
  message: 'Plan limit reached: 1 webhook endpoints',
  details: "Upgrade the organization's plan to add more webhook endpoints",
};
export const ORG_REQUIRED = 'organizationId: is required when not using an API key';
const READ = 'Members, or an API key with read:webhooks.';
const MANAGE = 'Owners and admins, or an API key with write:webhooks.';
const CREATE =
  'The answer carries the signing `secret`, shown again only by rotate-secret. Endpoints are limited by the plan (402); private and loopback targets are refused (docs/api.md#webhook-url-rules).';
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
const BAD_GRACE = invalidBody('graceSeconds: must be <= 604800');
const FUTURE = invalidBody('since: must not be in the future');

export const docs = routeDocs(['Webhooks'], {
  publishEvent: {
    summary: 'Publish an event of your own to the endpoints subscribed to it (events:publish)',
    description:
      'Owners and admins, or an API key with write:events. `type` is a custom `a.b` name, not one of the service’s own types; the event is delivered, signed, ' +
      'to every active endpoint of the organization subscribed to it or to every event. With `Idempotency-Key`, a repeat within 24 h answers the first answer ' +
      '(with `Idempotent-Replayed: true`) and records nothing; the same key with another `type` or `data` answers 409. Every publish counts against the ' +
      'organization’s monthly apiRequests quota, with an access token as with an API key (429 QUOTA_EXCEEDED past it).',
    errors: [
      invalidBody(
        'type: "project.created" is an event type of the service; publish your own types, like "order.shipped"',
        'serviceType',
      ),
      {
        code: 'CONFLICT',
        name: 'idempotencyKeyReused',
        message: 'This Idempotency-Key was used for another request',
        details: 'It was first sent with another type or data; send a new key for a new event',
      },
    ],
  },
  getWebhookEndpoint: {
    summary: 'A webhook endpoint (webhooks:read)',
    description: `${READ} Without its secret.`,
    errors: [ENDPOINT_NOT_FOUND],
  },
  updateWebhookEndpoint: {
    summary: 'Update a webhook endpoint (webhooks:manage)',
    description: `${MANAGE} Any of \`url\`, \`description\`, \`events\`, \`isActive\`; \`isActive: false\` pauses it and cancels its queued deliveries when they come due.`,
    errors: [BAD_URL, ENDPOINT_NOT_FOUND],
  },
  deleteWebhookEndpoint: {
    summary: 'Delete a webhook endpoint; pending deliveries are canceled (webhooks:manage)',
    description: `${MANAGE} Its routes, the deliveries list included, answer 404 from then on: read the history first if you need it.`,
    errors: [ENDPOINT_NOT_FOUND],
  },
  listWebhookDeliveries: {
    summary: 'Deliveries, newest first (webhooks:read)',
    description: `${READ} Each delivery with its status, attempts and last answer (docs/api.md#deliveries).`,
    errors: [ENDPOINT_NOT_FOUND],
  },
  listWebhookDeliveryAttempts: {
    summary: "A delivery's attempts, oldest first (webhooks:read)",
    description: `${READ} Each attempt with its status code or error, duration and time; the newest 100 at most. A delivery of another endpoint or organization answers 404 (docs/api.md#deliveries).`,
    errors: [ENDPOINT_NOT_FOUND, DELIVERY_NOT_FOUND],
  },
  retryWebhookDelivery: {
    summary: 'Retry one delivery now (webhooks:manage)',
    description: `${MANAGE} Queues one more attempt now for a failed or pending delivery; a delivered or canceled one, or a paused endpoint, answers 409.`,
    errors: [
      ENDPOINT_NOT_FOUND,
      DELIVERY_NOT_FOUND,
      {
        code: 'CONFLICT',
        message: 'The delivery is delivered',
        details: 'Only a failed or pending delivery can be retried',
      },
    ],
  },
  listWebhookEndpoints: {
    summary: 'Webhook endpoints, without secrets (webhooks:read)',
    description: `${READ} Not paginated: an organization holds few endpoints.`,
  },
  createWebhookEndpoint: {
    summary: 'Register an endpoint (webhooks:manage); the signing secret is in this response',
    description: `${MANAGE} ${CREATE}`,
    errors: [BAD_URL, SEATS],
  },
  createWebhookEndpointFlat: {
    summary: 'Register an endpoint; the organization comes from the API key or from organizationId',
    description: `${MANAGE} With an access token, \`organizationId\` is required (400 otherwise). ${CREATE}`,
    errors: [
      {
        code: 'VALIDATION_ERROR',
        name: 'organizationRequired',
        message: 'Invalid request body',
        details: ORG_REQUIRED,
      },
      BAD_URL,
      SEATS,
    ],
  },
  sendWebhookTestEvent: {
    summary: 'Send a test event to this endpoint (webhooks:manage)',
    description: `${MANAGE} One \`test\` event to this endpoint only, whatever its \`events\`; a paused endpoint answers 409. At most ${TEST_EVENTS_PER_MINUTE} per endpoint in any 60 seconds: beyond, 429 with Retry-After (the seconds until one is a minute old) and nothing is queued.`,
    errors: [ENDPOINT_NOT_FOUND, disabled('send a test event'), TEST_LIMIT],
  },
  rotateWebhookSecret: {
    summary: 'New signing secret, the old one signing too during an optional grace (webhooks:manage)',
    description: `${MANAGE} Every delivery sent from now on, retries of older events included, is signed with the new secret; with \`graceSeconds\`, until then also with the old one (a second \`v1\`, after the new one's), so a receiver verifies with either. Without a body, or \`graceSeconds: 0\`, the old secret stops at once. Rotating during a grace makes the current secret the old one, with the new grace (docs/api.md#webhook-signatures).`,
    errors: [BAD_GRACE, ENDPOINT_NOT_FOUND],
  },
  recoverWebhookDeliveries: {
    summary: 'Queue again the failed deliveries since a time (webhooks:manage)',
    description: `${MANAGE} Every \`failed\` delivery of the endpoint created at or after \`since\` goes back to \`pending\`, due now, under the same delivery id: one more attempt each, as a manual retry makes (docs/api.md#deliveries). Answers how many were queued; \`since\` in the future answers 400, a paused endpoint 409.`,
    errors: [FUTURE, ENDPOINT_NOT_FOUND, disabled('recover deliveries')],
  },
});
