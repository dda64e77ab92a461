// The webhook endpoints of an organization and their deliveries (docs/api.md#webhook-endpoints,
// #deliveries). Members read them, owners and admins manage them; an API key does either with
// read:webhooks or write:webhooks. Every route of one endpoint has a flat alias (paths.ts); the
// controls are controls.routes.ts, publishing events of one's own publish.routes.ts.
import type { FastifyRequest } from 'fastify';
import type { Infra } from '../../infra.js';
import { validationError } from '../../lib/errors.js';
import type { ErrorExample } from '../../http/errors-doc.js';
import { route } from '../../http/route.js';
import { ref, success } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import * as webhooks from './service.js';
import { publishRoutes } from './publish.routes.js';
import { controlRoutes } from './controls.routes.js';
import { flatAlias, OrgDeliveryParams, OrgHookParams, OrgParams } from './paths.js';
import {
  CreateBody,
  CreateFlatBody,
  DeliveryAttemptListResponse,
  DeliveryListResponse,
  DeliveryResponse,
  EndpointListResponse,
  EndpointResponse,
  EndpointSecretResponse,
  PatchBody,
  SuccessMessage,
} from './schemas.js';

const tags = ['Webhooks'];
const DELIVERY_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', name: 'deliveryNotFound', message: 'Delivery not found' };
const ENDPOINT_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Webhook endpoint not found' };
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
const ORG_REQUIRED = 'organizationId: is required when not using an API key';
const READ = 'Members, or an API key with read:webhooks.';
const MANAGE = 'Owners and admins, or an API key with write:webhooks.';
const CREATE =
  'The answer carries the signing `secret`, shown again only by rotate-secret. Endpoints are limited by the plan (402); private and loopback targets are refused (docs/api.md#webhook-url-rules).';
const read = { org: 'orgId', permission: 'webhooks:read' } as const;
const manage = { org: 'orgId', permission: 'webhooks:manage' } as const;

/** The flat create's organization: `organizationId` from the body, else the API key's (400 with neither). */
async function organizationOfCreate(_params: Record<string, string>, request: FastifyRequest): Promise<string> {
  const { organizationId } = request.body as { organizationId?: string };
  const orgId = organizationId ?? (request.actor.kind === 'api_key' ? request.actor.organizationId : undefined);
  if (!orgId) throw validationError('Invalid request body', ORG_REQUIRED);
  return orgId;
}

export function webhookRoutes(deps: Infra) {
  const flat = flatAlias(deps);
  return [
    ...publishRoutes(deps),
    route({
      method: 'GET',
      url: '/organizations/:orgId/webhooks/:id',
      auth: read,
      aliases: [flat('/webhooks/:id', 'getWebhookEndpointFlat')],
      operationId: 'getWebhookEndpoint',
      tags,
      summary: 'A webhook endpoint (webhooks:read)',
      description: `${READ} Without its secret.`,
      schema: { params: OrgHookParams, response: { 200: ref(EndpointResponse, 'The endpoint') } },
      errors: [ENDPOINT_NOT_FOUND],
      handler: async (ctx, { params }) => success(await webhooks.getEndpoint(deps, ctx.access, params.id)),
    }),
    route({
      method: 'PATCH',
      url: '/organizations/:orgId/webhooks/:id',
      auth: manage,
      aliases: [flat('/webhooks/:id', 'updateWebhookEndpointFlat')],
      operationId: 'updateWebhookEndpoint',
      tags,
      summary: 'Update a webhook endpoint (webhooks:manage)',
      description: `${MANAGE} Any of \`url\`, \`description\`, \`events\`, \`isActive\`; \`isActive: false\` pauses it and cancels its queued deliveries when they come due.`,
      schema: {
        params: OrgHookParams,
        body: ref(PatchBody),
        response: { 200: ref(EndpointResponse, 'The updated endpoint') },
      },
      errors: [BAD_URL, ENDPOINT_NOT_FOUND],
      handler: async (ctx, { params, body }) =>
        success(await webhooks.updateEndpoint(deps, ctx.access, params.id, body)),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/webhooks/:id',
      auth: manage,
      aliases: [flat('/webhooks/:id', 'deleteWebhookEndpointFlat')],
      operationId: 'deleteWebhookEndpoint',
      tags,
      summary: 'Delete a webhook endpoint; pending deliveries are canceled (webhooks:manage)',
      description: `${MANAGE} Its routes, the deliveries list included, answer 404 from then on: read the history first if you need it.`,
      schema: { params: OrgHookParams, response: { 200: ref(SuccessMessage, 'Deleted') } },
      errors: [ENDPOINT_NOT_FOUND],
      handler: async (ctx, { params }) => {
        await webhooks.deleteEndpoint(deps, ctx.access, params.id);
        return { success: true as const, message: 'Webhook endpoint deleted' };
      },
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/webhooks/:id/deliveries',
      auth: read,
      aliases: [flat('/webhooks/:id/deliveries', 'listWebhookDeliveriesFlat')],
      operationId: 'listWebhookDeliveries',
      tags,
      summary: 'Deliveries, newest first (webhooks:read)',
      description: `${READ} Each delivery with its status, attempts and last answer (docs/api.md#deliveries).`,
      schema: {
        params: OrgHookParams,
        querystring: PageQuery,
        response: { 200: ref(DeliveryListResponse, 'A page of deliveries') },
      },
      errors: [ENDPOINT_NOT_FOUND],
      handler: async (ctx, { params, query }) => ({
        success: true as const,
        ...(await webhooks.listDeliveries(deps, ctx.access, params.id, query.page ?? 1, query.pageSize ?? 20)),
      }),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/webhooks/:id/deliveries/:deliveryId/attempts',
      auth: read,
      aliases: [flat('/webhooks/:id/deliveries/:deliveryId/attempts', 'listWebhookDeliveryAttemptsFlat')],
      operationId: 'listWebhookDeliveryAttempts',
      tags,
      summary: "A delivery's attempts, oldest first (webhooks:read)",
      description: `${READ} Each attempt with its status code or error, duration and time; the newest 100 at most. A delivery of another endpoint or organization answers 404 (docs/api.md#deliveries).`,
      schema: {
        params: OrgDeliveryParams,
        response: { 200: ref(DeliveryAttemptListResponse, "The delivery's attempts") },
      },
      errors: [ENDPOINT_NOT_FOUND, DELIVERY_NOT_FOUND],
      handler: async (ctx, { params }) =>
        success(await webhooks.listAttempts(deps, ctx.access, params.id, params.deliveryId)),
    }),
    ...controlRoutes(deps, flat),
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks/:id/deliveries/:deliveryId/retry',
      auth: manage,
      aliases: [flat('/webhooks/:id/deliveries/:deliveryId/retry', 'retryWebhookDeliveryFlat')],
      operationId: 'retryWebhookDelivery',
      tags,
      summary: 'Retry one delivery now (webhooks:manage)',
      description: `${MANAGE} Queues one more attempt now for a failed or pending delivery; a delivered or canceled one, or a paused endpoint, answers 409.`,
      schema: { params: OrgDeliveryParams, response: { 200: ref(DeliveryResponse, 'The delivery, queued again') } },
      errors: [
        ENDPOINT_NOT_FOUND,
        DELIVERY_NOT_FOUND,
        {
          code: 'CONFLICT',
          message: 'The delivery is delivered',
          details: 'Only a failed or pending delivery can be retried',
        },
      ],
      handler: async (ctx, { params }) =>
        success(await webhooks.retryDelivery(deps, ctx.access, params.id, params.deliveryId)),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/webhooks',
      auth: read,
      operationId: 'listWebhookEndpoints',
      tags,
      summary: 'Webhook endpoints, without secrets (webhooks:read)',
      description: `${READ} Not paginated: an organization holds few endpoints.`,
      schema: { params: OrgParams, response: { 200: ref(EndpointListResponse, 'The endpoints') } },
      handler: async (ctx) => success(await webhooks.listEndpoints(deps, ctx.access)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks',
      auth: manage,
      operationId: 'createWebhookEndpoint',
      tags,
      summary: 'Register an endpoint (webhooks:manage); the signing secret is in this response',
      description: `${MANAGE} ${CREATE}`,
      schema: {
        params: OrgParams,
        body: ref(CreateBody),
        response: { 201: ref(EndpointSecretResponse, 'The endpoint and its secret') },
      },
      errors: [BAD_URL, SEATS],
      handler: async (ctx, { body }) => success(await webhooks.createEndpoint(deps, ctx.access, body)),
    }),
    // Not an alias: its body names the organization (or the API key does), so its schema is its own.
    route({
      method: 'POST',
      url: '/webhooks',
      auth: { org: organizationOfCreate, permission: 'webhooks:manage' },
      operationId: 'createWebhookEndpointFlat',
      tags,
      summary: 'Register an endpoint; the organization comes from the API key or from organizationId',
      description: `${MANAGE} With an access token, \`organizationId\` is required (400 otherwise). ${CREATE}`,
      schema: {
        body: ref(CreateFlatBody),
        response: { 201: ref(EndpointSecretResponse, 'The endpoint and its secret') },
      },
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
      handler: async (ctx, { body }) => {
        const { organizationId: _, ...input } = body;
        return success(await webhooks.createEndpoint(deps, ctx.access, input));
      },
    }),
  ];
}
