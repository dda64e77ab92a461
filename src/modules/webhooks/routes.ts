// The webhook endpoints of an organization and their deliveries (docs/api.md#webhook-endpoints,
// #deliveries). Members read them, owners and admins manage them; an API key does either with
// read:webhooks or write:webhooks. Every route of one endpoint has a flat alias (paths.ts); the
// controls are controls.routes.ts, publishing events of one's own publish.routes.ts.
import type { FastifyRequest } from 'fastify';
import type { Infra } from '../../infra.js';
import { validationError } from '../../lib/errors.js';
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
import { ORG_REQUIRED, docs } from './docs.js';

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
      doc: docs.getWebhookEndpoint,
      schema: { params: OrgHookParams, response: { 200: ref(EndpointResponse, 'The endpoint') } },
      handler: async (ctx, { params }) => success(await webhooks.getEndpoint(deps, ctx.access, params.id)),
    }),
    route({
      method: 'PATCH',
      url: '/organizations/:orgId/webhooks/:id',
      auth: manage,
      aliases: [flat('/webhooks/:id', 'updateWebhookEndpointFlat')],
      doc: docs.updateWebhookEndpoint,
      schema: {
        params: OrgHookParams,
        body: ref(PatchBody),
        response: { 200: ref(EndpointResponse, 'The updated endpoint') },
      },
      handler: async (ctx, { params, body }) =>
        success(await webhooks.updateEndpoint(deps, ctx.access, params.id, body)),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/webhooks/:id',
      auth: manage,
      aliases: [flat('/webhooks/:id', 'deleteWebhookEndpointFlat')],
      doc: docs.deleteWebhookEndpoint,
      schema: { params: OrgHookParams, response: { 200: ref(SuccessMessage, 'Deleted') } },
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
      doc: docs.listWebhookDeliveries,
      schema: {
        params: OrgHookParams,
        querystring: PageQuery,
        response: { 200: ref(DeliveryListResponse, 'A page of deliveries') },
      },
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
      doc: docs.listWebhookDeliveryAttempts,
      schema: {
        params: OrgDeliveryParams,
        response: { 200: ref(DeliveryAttemptListResponse, "The delivery's attempts") },
      },
      handler: async (ctx, { params }) =>
        success(await webhooks.listAttempts(deps, ctx.access, params.id, params.deliveryId)),
    }),
    ...controlRoutes(deps, flat),
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks/:id/deliveries/:deliveryId/retry',
      auth: manage,
      aliases: [flat('/webhooks/:id/deliveries/:deliveryId/retry', 'retryWebhookDeliveryFlat')],
      doc: docs.retryWebhookDelivery,
      schema: { params: OrgDeliveryParams, response: { 200: ref(DeliveryResponse, 'The delivery, queued again') } },
      handler: async (ctx, { params }) =>
        success(await webhooks.retryDelivery(deps, ctx.access, params.id, params.deliveryId)),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/webhooks',
      auth: read,
      doc: docs.listWebhookEndpoints,
      schema: { params: OrgParams, response: { 200: ref(EndpointListResponse, 'The endpoints') } },
      handler: async (ctx) => success(await webhooks.listEndpoints(deps, ctx.access)),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/webhooks',
      auth: manage,
      doc: docs.createWebhookEndpoint,
      schema: {
        params: OrgParams,
        body: ref(CreateBody),
        response: { 201: ref(EndpointSecretResponse, 'The endpoint and its secret') },
      },
      handler: async (ctx, { body }) => success(await webhooks.createEndpoint(deps, ctx.access, body)),
    }),
    // Not an alias: its body names the organization (or the API key does), so its schema is its own.
    route({
      method: 'POST',
      url: '/webhooks',
      auth: { org: organizationOfCreate, permission: 'webhooks:manage' },
      doc: docs.createWebhookEndpointFlat,
      schema: {
        body: ref(CreateFlatBody),
        response: { 201: ref(EndpointSecretResponse, 'The endpoint and its secret') },
      },
      handler: async (ctx, { body }) => {
        const { organizationId: _, ...input } = body;
        return success(await webhooks.createEndpoint(deps, ctx.access, input));
      },
    }),
  ];
}
