import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { and, eq, isNull } from 'drizzle-orm';
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import type { OrgAccess } from '../../platform/tenancy.js';
import { notFound, validationError } from '../../lib/errors.js';
import { errors, orgAccessErrors, type ErrorExample } from '../../http/errors-doc.js';
import { orgSecurity, ref, success } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import type { Permission } from '../../platform/permissions.js';
import * as hooks from './service.js';
import { webhookEndpoints } from '../../db/tables/webhooks.js';
import { orgAccess } from '../../http/access.js';
import { publishRoutes } from './publish.routes.js';
import { controlRoutes } from './controls.routes.js';
import {
  CreateBody,
  CreateFlatBody,
  DeliveryAttemptListResponse,
  DeliveryListResponse,
  DeliveryResponse,
  EndpointListResponse,
  EndpointResponse,
  EndpointSecretResponse,
  Id,
  PatchBody,
  SuccessMessage,
} from './schemas.js';

const tags = ['Webhooks'];
const security = orgSecurity('webhooks:manage');
const OrgParams = Type.Object({ orgId: { ...Id, description: 'The organization (`org_…`)' } });
const endpointId = { ...Id, description: 'The endpoint (`wh_…`)' };
const OrgHookParams = Type.Object({ orgId: OrgParams.properties.orgId, id: endpointId });
const HookParams = Type.Object({ id: endpointId });
const deliveryId = { ...Id, description: 'The delivery (`dlv_…`)' };
const OrgRetryParams = Type.Object({ orgId: OrgParams.properties.orgId, id: endpointId, deliveryId });
const RetryParams = Type.Object({ id: endpointId, deliveryId });
const DELIVERY_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', name: 'deliveryNotFound', message: 'Delivery not found' };
const ENDPOINT_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Webhook endpoint not found' };
const BAD_URL: ErrorExample = { code: 'VALIDATION_ERROR', message: 'Invalid webhook URL', details: 'url: blocked: destination not allowed' };
const SEATS: ErrorExample = { code: 'PLAN_LIMIT_EXCEEDED', message: 'Plan limit reached: 1 webhook endpoints', details: "Upgrade the organization's plan to add more webhook endpoints" };
const READ = 'Members, or an API key with read:webhooks.';
const MANAGE = 'Owners and admins, or an API key with write:webhooks.';
const readErrors = orgAccessErrors('webhooks:read');
const manageErrors = orgAccessErrors('webhooks:manage');

export const webhookRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const authorize = orgAccess(deps);
  await app.register(publishRoutes, { deps });
  // The flat paths find the organization from the endpoint (docs/api.md#flat-webhook-paths).
  async function accessFor(req: FastifyRequest, id: string, permission: Permission): Promise<OrgAccess> {
    const [e] = await deps.db
      .select({ org: webhookEndpoints.organizationId })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.deletedAt)));
    if (!e) throw notFound('Webhook endpoint not found');
    return authorize(req, e.org, permission);
  }
  const org = (req: FastifyRequest, p: Permission) => authorize(req, (req.params as { orgId: string }).orgId, p);

  // Both path shapes share one set of handlers: `scope` resolves the access either way.
  for (const flat of [false, true]) {
    const base = flat ? '/webhooks' : '/organizations/:orgId/webhooks';
    const one = `${base}/:id`;
    // Handlers read only `id` (and `deliveryId`); `scope` reads orgId on the organization path.
    const Params = (flat ? HookParams : OrgHookParams) as typeof HookParams;
    const scope = (req: FastifyRequest, p: Permission) =>
      flat ? accessFor(req, (req.params as { id: string }).id, p) : org(req, p);
    const alias = flat ? ' (alias of the organization path)' : '';
    const note = flat ? ' The organization is found from the endpoint: an unknown id answers 404 (docs/api.md#flat-webhook-paths).' : '';

    const id = (name: string) => (flat ? `${name}Flat` : name);

    app.get(one, {
      schema: {
        tags,
        security: orgSecurity('webhooks:read'),
        operationId: id('getWebhookEndpoint'),
        summary: `A webhook endpoint (webhooks:read)${alias}`,
        description: `${READ} Without its secret.${note}`,
        params: Params,
        response: { 200: ref(EndpointResponse, 'The endpoint'), ...errors(...readErrors, ENDPOINT_NOT_FOUND) },
      },
      handler: async (req) => success(await hooks.getEndpoint(deps, await scope(req, 'webhooks:read'), req.params.id)),
    });
    app.patch(one, {
      schema: {
        tags,
        security,
        operationId: id('updateWebhookEndpoint'),
        summary: `Update a webhook endpoint (webhooks:manage)${alias}`,
        description: `${MANAGE} Any of \`url\`, \`description\`, \`events\`, \`isActive\`; \`isActive: false\` pauses it and cancels its queued deliveries when they come due.${note}`,
        params: Params,
        body: ref(PatchBody),
        response: { 200: ref(EndpointResponse, 'The updated endpoint'), ...errors(BAD_URL, ...manageErrors, ENDPOINT_NOT_FOUND) },
      },
      handler: async (req) => success(await hooks.updateEndpoint(deps, await scope(req, 'webhooks:manage'), req.params.id, req.body)),
    });
    app.delete(one, {
      schema: {
        tags,
        security,
        operationId: id('deleteWebhookEndpoint'),
        summary: `Delete a webhook endpoint; pending deliveries are canceled (webhooks:manage)${alias}`,
        description: `${MANAGE} Its routes, the deliveries list included, answer 404 from then on: read the history first if you need it.${note}`,
        params: Params,
        response: { 200: ref(SuccessMessage, 'Deleted'), ...errors(...manageErrors, ENDPOINT_NOT_FOUND) },
      },
      handler: async (req) => {
        await hooks.deleteEndpoint(deps, await scope(req, 'webhooks:manage'), req.params.id);
        return { success: true as const, message: 'Webhook endpoint deleted' };
      },
    });
    app.get(`${one}/deliveries`, {
      schema: {
        tags,
        security: orgSecurity('webhooks:read'),
        operationId: id('listWebhookDeliveries'),
        summary: `Deliveries, newest first (webhooks:read)${alias}`,
        description: `${READ} Each delivery with its status, attempts and last answer (docs/api.md#deliveries).${note}`,
        params: Params,
        querystring: PageQuery,
        response: { 200: ref(DeliveryListResponse, 'A page of deliveries'), ...errors(...readErrors, ENDPOINT_NOT_FOUND) },
      },
      handler: async (req) => ({ success: true as const, ...(await hooks.listDeliveries(deps, await scope(req, 'webhooks:read'), req.params.id, req.query.page ?? 1, req.query.pageSize ?? 20)) }),
    });
    app.get(`${one}/deliveries/:deliveryId/attempts`, {
      schema: {
        tags,
        security: orgSecurity('webhooks:read'),
        operationId: id('listWebhookDeliveryAttempts'),
        summary: `A delivery's attempts, oldest first (webhooks:read)${alias}`,
        description: `${READ} Each attempt with its status code or error, duration and time; the newest 100 at most. A delivery of another endpoint or organization answers 404 (docs/api.md#deliveries).${note}`,
        params: (flat ? RetryParams : OrgRetryParams) as typeof RetryParams,
        response: { 200: ref(DeliveryAttemptListResponse, "The delivery's attempts"), ...errors(...readErrors, ENDPOINT_NOT_FOUND, DELIVERY_NOT_FOUND) },
      },
      handler: async (req) => success(await hooks.listAttempts(deps, await scope(req, 'webhooks:read'), req.params.id, req.params.deliveryId)),
    });
    // Test events, rotate-secret and recover (controls.routes.ts).
    controlRoutes(app, deps, { one, Params, scope, id, alias, note });
    app.post(`${one}/deliveries/:deliveryId/retry`, {
      schema: {
        tags,
        security,
        operationId: id('retryWebhookDelivery'),
        summary: `Retry one delivery now (webhooks:manage)${alias}`,
        description: `${MANAGE} Queues one more attempt now for a failed or pending delivery; a delivered or canceled one, or a paused endpoint, answers 409.${note}`,
        params: (flat ? RetryParams : OrgRetryParams) as typeof RetryParams,
        response: {
          200: ref(DeliveryResponse, 'The delivery, queued again'),
          ...errors(
            ...manageErrors,
            ENDPOINT_NOT_FOUND,
            DELIVERY_NOT_FOUND,
            { code: 'CONFLICT', message: 'The delivery is delivered', details: 'Only a failed or pending delivery can be retried' },
          ),
        },
      },
      handler: async (req) => success(await hooks.retryDelivery(deps, await scope(req, 'webhooks:manage'), req.params.id, req.params.deliveryId)),
    });
  }

  app.get('/organizations/:orgId/webhooks', {
    schema: {
      tags,
      security: orgSecurity('webhooks:read'),
      operationId: 'listWebhookEndpoints',
      summary: 'Webhook endpoints, without secrets (webhooks:read)',
      description: `${READ} Not paginated: an organization holds few endpoints.`,
      params: OrgParams,
      response: { 200: ref(EndpointListResponse, 'The endpoints'), ...errors(...readErrors) },
    },
    handler: async (req) => success(await hooks.listEndpoints(deps, await org(req, 'webhooks:read'))),
  });

  const CREATE = 'The answer carries the signing `secret`, shown again only by rotate-secret. Endpoints are limited by the plan (402); private and loopback targets are refused (docs/api.md#webhook-url-rules).';
  app.post('/organizations/:orgId/webhooks', {
    schema: {
      tags,
      security,
      operationId: 'createWebhookEndpoint',
      summary: 'Register an endpoint (webhooks:manage); the signing secret is in this response',
      description: `${MANAGE} ${CREATE}`,
      params: OrgParams,
      body: ref(CreateBody),
      response: { 201: ref(EndpointSecretResponse, 'The endpoint and its secret'), ...errors(BAD_URL, SEATS, ...manageErrors) },
    },
    handler: async (req, reply) => reply.status(201).send(success(await hooks.createEndpoint(deps, await org(req, 'webhooks:manage'), req.body))),
  });

  app.post('/webhooks', {
    schema: {
      tags,
      security,
      operationId: 'createWebhookEndpointFlat',
      summary: 'Register an endpoint; the organization comes from the API key or from organizationId',
      description: `${MANAGE} With an access token, \`organizationId\` is required (400 otherwise). ${CREATE}`,
      body: ref(CreateFlatBody),
      response: {
        201: ref(EndpointSecretResponse, 'The endpoint and its secret'),
        ...errors({ code: 'VALIDATION_ERROR', name: 'organizationRequired', message: 'Invalid request body', details: 'organizationId: is required when not using an API key' }, BAD_URL, SEATS, ...manageErrors),
      },
    },
    handler: async (req, reply) => {
      const { organizationId, ...input } = req.body;
      const orgId = organizationId ?? (req.actor.kind === 'apiKey' ? req.actor.organizationId : undefined);
      if (!orgId) throw validationError('Invalid request body', 'organizationId: is required when not using an API key');
      return reply.status(201).send(success(await hooks.createEndpoint(deps, await authorize(req, orgId, 'webhooks:manage'), input)));
    },
  });
};
