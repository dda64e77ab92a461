import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { and, eq, isNull } from 'drizzle-orm';
import { Type } from 'typebox';
import type { Deps } from '../../deps.js';
import type { OrgAccess } from '../../platform/tenancy.js';
import { notFound, validationError } from '../../http/errors.js';
import { Body, bearerOrKey, errors, Nullable, Timestamp } from '../../http/schemas.js';
import { PageFields, PageQuery } from '../../platform/pagination.js';
import type { Permission } from '../../platform/permissions.js';
import * as hooks from './service.js';
import { webhookEndpoints } from './tables.js';

const tags = ['webhooks'];
const security = bearerOrKey;
const Id = Type.String({ minLength: 1, maxLength: 64 });

const Endpoint = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  url: Type.String(),
  description: Nullable(Type.String()),
  events: Type.Array(Type.String()),
  isActive: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const EndpointWithSecret = Type.Object({ ...Endpoint.properties, secret: Type.String({ description: 'whsec_ + 64 hex: shown at creation and rotation only' }) });
const Delivery = Type.Object({
  id: Type.String({ description: 'Sent as X-Webhook-Delivery-ID' }),
  endpointId: Type.String(),
  eventType: Type.String(),
  payload: Type.Object({ type: Type.String(), timestamp: Type.String(), data: Type.Record(Type.String(), Type.Unknown()) }),
  status: Type.Enum(['pending', 'delivered', 'failed', 'canceled']),
  attempts: Type.Integer(),
  responseStatus: Nullable(Type.Integer()),
  responseBody: Nullable(Type.String()),
  lastError: Nullable(Type.String()),
  deliveredAt: Nullable(Timestamp),
  nextRetryAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const ok = <T extends Parameters<typeof Type.Object>[0]>(props: T) => Type.Object({ success: Type.Literal(true), ...props });

const EndpointFields = {
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  events: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
};
const CreateBody = Body(EndpointFields);
const CreateFlatBody = Body({ ...EndpointFields, organizationId: Type.Optional(Id) });
const PatchBody = Body({
  url: Type.Optional(EndpointFields.url),
  description: EndpointFields.description,
  events: EndpointFields.events,
  isActive: Type.Optional(Type.Boolean()),
});
const OrgParams = Type.Object({ orgId: Id });
const OrgHookParams = Type.Object({ orgId: Id, id: Id });
const HookParams = Type.Object({ id: Id });
const OrgRetryParams = Type.Object({ orgId: Id, id: Id, deliveryId: Id });
const RetryParams = Type.Object({ id: Id, deliveryId: Id });
const DeliveryList = ok({ data: Type.Array(Delivery), ...PageFields });
const Deleted = ok({ message: Type.String() });
const Tested = ok({ data: Type.Object({ eventId: Type.String(), deliveryId: Type.String() }) });
const errs = errors(401, 403, 404);

export const webhookRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  // The flat paths of the spec find the organization from the endpoint (DECISIONS §5).
  async function accessFor(req: FastifyRequest, id: string, permission: Permission): Promise<OrgAccess> {
    const [e] = await deps.db
      .select({ org: webhookEndpoints.organizationId })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.deletedAt)));
    if (!e) throw notFound('Webhook endpoint not found');
    return deps.authorizeOrg(req, e.org, permission);
  }
  const org = (req: FastifyRequest, p: Permission) => deps.authorizeOrg(req, (req.params as { orgId: string }).orgId, p);

  // Both path shapes share one set of handlers: `scope` resolves the access either way.
  for (const flat of [false, true]) {
    const base = flat ? '/webhooks' : '/organizations/:orgId/webhooks';
    const one = `${base}/:id`;
    // Handlers read only `id` (and `deliveryId`); `scope` reads orgId on the organization path.
    const Params = (flat ? HookParams : OrgHookParams) as typeof HookParams;
    const scope = (req: FastifyRequest, p: Permission) =>
      flat ? accessFor(req, (req.params as { id: string }).id, p) : org(req, p);
    const alias = flat ? ' (alias of the organization path)' : '';

    app.get(one, {
      schema: { tags, security, summary: `A webhook endpoint (webhooks:read)${alias}`, params: Params, response: { 200: ok({ data: Endpoint }), ...errs } },
      handler: async (req) => hooks.getEndpoint(deps, await scope(req, 'webhooks:read'), req.params.id),
    });
    app.patch(one, {
      schema: { tags, security, summary: `Update a webhook endpoint (webhooks:manage)${alias}`, params: Params, body: PatchBody, response: { 200: ok({ data: Endpoint }), ...errs } },
      handler: async (req) => hooks.updateEndpoint(deps, await scope(req, 'webhooks:manage'), req.params.id, req.body),
    });
    app.delete(one, {
      schema: { tags, security, summary: `Delete a webhook endpoint; pending deliveries are canceled (webhooks:manage)${alias}`, params: Params, response: { 200: Deleted, ...errs } },
      handler: async (req) => hooks.deleteEndpoint(deps, await scope(req, 'webhooks:manage'), req.params.id),
    });
    app.get(`${one}/deliveries`, {
      schema: { tags, security, summary: `Deliveries, newest first (webhooks:read)${alias}`, params: Params, querystring: PageQuery, response: { 200: DeliveryList, ...errs } },
      handler: async (req) => hooks.listDeliveries(deps, await scope(req, 'webhooks:read'), req.params.id, req.query.page ?? 1, req.query.pageSize ?? 20),
    });
    app.post(`${one}/test`, {
      schema: { tags, security, summary: `Send a test event to this endpoint (webhooks:manage)${alias}`, params: Params, response: { 200: Tested, ...errors(401, 403, 404, 409) } },
      handler: async (req) => hooks.sendTestEvent(deps, await scope(req, 'webhooks:manage'), req.params.id),
    });
    app.post(`${one}/rotate-secret`, {
      schema: { tags, security, summary: `New signing secret; the old one stops at once (webhooks:manage)${alias}`, params: Params, response: { 200: ok({ data: EndpointWithSecret }), ...errs } },
      handler: async (req) => hooks.rotateSecret(deps, await scope(req, 'webhooks:manage'), req.params.id),
    });
    app.post(`${one}/deliveries/:deliveryId/retry`, {
      schema: {
        tags,
        security,
        summary: `Retry one delivery now (webhooks:manage)${alias}`,
        params: (flat ? RetryParams : OrgRetryParams) as typeof RetryParams,
        response: { 200: ok({ data: Delivery }), ...errors(401, 403, 404, 409) },
      },
      handler: async (req) => hooks.retryDelivery(deps, await scope(req, 'webhooks:manage'), req.params.id, req.params.deliveryId),
    });
  }

  app.get('/organizations/:orgId/webhooks', {
    schema: { tags, security, summary: 'Webhook endpoints, without secrets (webhooks:read)', params: OrgParams, response: { 200: ok({ data: Type.Array(Endpoint) }), ...errs } },
    handler: async (req) => hooks.listEndpoints(deps, await org(req, 'webhooks:read')),
  });

  app.post('/organizations/:orgId/webhooks', {
    schema: {
      tags,
      security,
      summary: 'Register an endpoint (webhooks:manage); the signing secret is in this response',
      params: OrgParams,
      body: CreateBody,
      response: { 201: ok({ data: EndpointWithSecret }), ...errors(401, 402, 403, 404) },
    },
    handler: async (req, reply) => reply.status(201).send(await hooks.createEndpoint(deps, await org(req, 'webhooks:manage'), req.body)),
  });

  app.post('/webhooks', {
    schema: {
      tags,
      security,
      summary: 'Register an endpoint; the organization comes from the API key or from organizationId',
      body: CreateFlatBody,
      response: { 201: ok({ data: EndpointWithSecret }), ...errors(401, 402, 403, 404) },
    },
    handler: async (req, reply) => {
      const { organizationId, ...input } = req.body;
      const orgId = organizationId ?? (req.actor.kind === 'apiKey' ? req.actor.organizationId : undefined);
      if (!orgId) throw validationError('Invalid request body', 'organizationId: is required when not using an API key');
      return reply.status(201).send(await hooks.createEndpoint(deps, await deps.authorizeOrg(req, orgId, 'webhooks:manage'), input));
    },
  });
};
