// The audit log of an organization (docs/api.md#audit-log): owners and admins, or a key with
// read:audit-logs.
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { named, Nullable, OrgParams, ref, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';
import { listAuditLogs } from './list.service.js';
import { docs } from './docs.js';

const ENTRY = {
  id: 'aud_01jq3c8m0p2r4t6v8x0z2b4d6f',
  organizationId: 'org_01jq3bz8n6m4k2j0h8g6f4d2c0',
  actorType: 'api_key',
  actorId: 'key_01jq3c6r8t0v2x4z6b8d0f2h4k',
  action: 'GET /api/v1/organizations/:orgId/projects',
  method: 'GET',
  path: '/api/v1/organizations/org_01jq3bz8n6m4k2j0h8g6f4d2c0/projects',
  statusCode: 200,
  ipAddress: '203.0.113.7',
  userAgent: 'ci-runner/1.0',
  createdAt: '2026-03-01T12:13:00.000Z',
};

const AuditEntry = named(
  'AuditEntry',
  Type.Object({
    id: Type.String(),
    organizationId: Type.String(),
    actorType: Type.Enum(['user', 'api_key']),
    actorId: Type.String({ description: "The key's id or the user's id" }),
    action: Type.String({ description: '`METHOD route pattern`' }),
    method: Type.String(),
    path: Type.String({ description: 'The actual path of the request' }),
    statusCode: Type.Integer(),
    ipAddress: Nullable(Type.String()),
    userAgent: Nullable(Type.String()),
    createdAt: Timestamp,
  }),
  { description: 'docs/api.md#audit-log', examples: [ENTRY] },
);

const AuditLogList = named('AuditLogList', Type.Object({ data: Type.Array(ref(AuditEntry)), ...PageFields }), {
  description: 'A page of audit entries, newest first',
  examples: [{ data: [ENTRY], total: 1, page: 1, pageSize: 20, hasMore: false }],
});

const AuditQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  actorType: Type.Optional(Type.Enum(['user', 'api_key'])),
  actorId: Type.Optional(Type.String({ maxLength: 64 })),
  action: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'METHOD /route/pattern, e.g. GET /api/v1/organizations/:orgId/projects',
    }),
  ),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive' })),
});

export function auditRoutes(deps: Infra) {
  return [
    route({
      method: 'GET',
      url: '/organizations/:orgId/audit-logs',
      auth: { org: 'orgId', permission: 'audit-logs:read' },
      doc: docs.listAuditLogs,
      schema: { params: OrgParams, querystring: AuditQuery, response: { 200: ref(AuditLogList, 'A page of entries') } },
      // The body comes from PostgreSQL as JSON text (list.service.ts): sent as is, not re-serialized.
      handler: async (ctx, { query }) => {
        const body = await listAuditLogs(deps, ctx.access, {
          ...query,
          page: query.page ?? 1,
          pageSize: query.pageSize ?? 20,
        });
        return ctx.reply.type('application/json; charset=utf-8').send(body as never);
      },
    }),
  ];
}
