import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../deps.js';
import { bearerOrKey, errors, Nullable, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';
import { OrgParams } from '../organizations/schemas.js';
import { listAuditLogs } from './list.service.js';

const AuditEntry = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  actorType: Type.Enum(['user', 'api_key']),
  actorId: Type.String(),
  action: Type.String(),
  method: Type.String(),
  path: Type.String(),
  statusCode: Type.Integer(),
  ipAddress: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  createdAt: Timestamp,
});

const AuditQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  actorType: Type.Optional(Type.Enum(['user', 'api_key'])),
  actorId: Type.Optional(Type.String({ maxLength: 64 })),
  action: Type.Optional(Type.String({ maxLength: 200, description: 'METHOD /route/pattern, e.g. GET /api/v1/organizations/:orgId/projects' })),
  from: Type.Optional(Type.String({ format: 'date-time' })),
  to: Type.Optional(Type.String({ format: 'date-time' })),
});

export const auditRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get('/organizations/:orgId/audit-logs', {
    schema: {
      tags: ['audit'],
      security: bearerOrKey,
      summary: 'Audit log, newest first (audit-logs:read; scope read:audit-logs)',
      params: OrgParams,
      querystring: AuditQuery,
      response: {
        200: Type.Object({ data: Type.Array(AuditEntry), ...PageFields }),
        ...errors(401, 403, 404),
      },
    },
    // The body comes from PostgreSQL as JSON text (list.service.ts): sent as is, not re-serialized.
    handler: async (req, reply) => {
      const access = await deps.authorizeOrg(req, req.params.orgId, 'audit-logs:read');
      const body = await listAuditLogs(deps, access, { ...req.query, page: req.query.page ?? 1, pageSize: req.query.pageSize ?? 20 });
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  });
};
