// An organization's API keys (docs/api.md#api-keys), managed by people only: no scope reaches these
// permissions. The flat paths find the organization from the body (create) or from the key.
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { OrgParams, ref } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import {
  CreateKeyBody,
  CreateKeyFlatBody,
  CreatedKey,
  KeyList,
  KeyParams,
  KeyUsage,
  OrgKeyParams,
  RevokedKey,
} from './schemas.js';
import * as keys from './service.js';
import { docs } from './docs.js';

export function apiKeyRoutes(deps: Infra) {
  // The flat paths: the organization of the key in the path (404 for an unknown key, before access).
  const keyOrg = {
    org: (params: Record<string, string>) => keys.organizationOfKey(deps, params.keyId!),
    permission: 'api-keys:manage',
  } as const;
  return [
    route({
      method: 'POST',
      url: '/organizations/:orgId/api-keys',
      auth: { org: 'orgId', permission: 'api-keys:create' },
      doc: docs.createApiKey,
      schema: {
        params: OrgParams,
        body: ref(CreateKeyBody),
        response: { 201: ref(CreatedKey, 'The key and its secret') },
      },
      handler: (ctx, { body }) => keys.createApiKey(deps, ctx.access, body),
    }),
    route({
      method: 'POST',
      url: '/api-keys',
      // The body, validated before the guard runs, names the organization.
      auth: {
        org: async (_params, request) => (request.body as { organizationId: string }).organizationId,
        permission: 'api-keys:create',
      },
      doc: docs.createOrganizationApiKey,
      schema: { body: ref(CreateKeyFlatBody), response: { 201: ref(CreatedKey, 'The key and its secret') } },
      handler: (ctx, { body }) => {
        const { organizationId: _org, ...input } = body;
        return keys.createApiKey(deps, ctx.access, input);
      },
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/api-keys',
      auth: { org: 'orgId', permission: 'api-keys:manage' },
      doc: docs.listApiKeys,
      schema: { params: OrgParams, querystring: PageQuery, response: { 200: ref(KeyList, 'A page of keys') } },
      handler: (ctx, { query }) => keys.listApiKeys(deps, ctx.access, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/api-keys/:keyId',
      auth: { org: 'orgId', permission: 'api-keys:manage' },
      doc: docs.revokeApiKey,
      schema: { params: OrgKeyParams, response: { 200: ref(RevokedKey, 'Revoked') } },
      handler: async (ctx, { params }) => ({
        message: 'API key revoked',
        apiKey: await keys.revokeApiKey(deps, ctx.access, params.keyId),
      }),
    }),
    route({
      method: 'DELETE',
      url: '/api-keys/:keyId',
      auth: keyOrg,
      doc: docs.revokeApiKeyById,
      schema: { params: KeyParams, response: { 200: ref(RevokedKey, 'Revoked') } },
      handler: async (ctx, { params }) => ({
        message: 'API key revoked',
        apiKey: await keys.revokeApiKey(deps, ctx.access, params.keyId),
      }),
    }),
    route({
      method: 'GET',
      url: '/api-keys/:keyId/usage',
      auth: keyOrg,
      doc: docs.getApiKeyUsage,
      schema: { params: KeyParams, response: { 200: ref(KeyUsage, 'The key and its usage') } },
      handler: (ctx, { params }) => keys.keyUsage(deps, ctx.access, params.keyId),
    }),
  ];
}
