// An organization's API keys (docs/api.md#api-keys), managed by people only: no scope reaches these
// permissions. The flat paths find the organization from the body (create) or from the key.
import type { Infra } from '../../infra.js';
import type { ErrorExample } from '../../http/errors-doc.js';
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

const tags = ['API keys'];
const PEOPLE = 'Owners and admins only: an API key gets 403.';
const NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'API key not found' };
const REVOKED: ErrorExample = { code: 'CONFLICT', message: 'API key is already revoked' };
const CREATE_ERRORS: ErrorExample[] = [
  { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'expiresAt: must be in the future' },
  {
    code: 'PLAN_LIMIT_EXCEEDED',
    message: 'Plan limit reached: 1 active API keys',
    details: "Upgrade the organization's plan to add more active API keys",
  },
];
const CREATE =
  'The full key (`plainKey`) is in this response only; only its hash is stored. Active keys are limited by the plan (402). Sends api_key.created (docs/api.md#api-key-routes).';
const REVOKE = `${PEOPLE} The key is refused on its next request, on every instance (401 API key is inactive). Revoking a revoked key: 409. Sends api_key.revoked.`;

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
      operationId: 'createApiKey',
      tags,
      summary: 'Create an API key (api-keys:create); the full key is in this response only',
      description: `${PEOPLE} ${CREATE}`,
      schema: {
        params: OrgParams,
        body: ref(CreateKeyBody),
        response: { 201: ref(CreatedKey, 'The key and its secret') },
      },
      errors: CREATE_ERRORS,
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
      operationId: 'createOrganizationApiKey',
      tags,
      summary: 'Create an API key; the organization is given in the body (alias of the organization path)',
      description: `${PEOPLE} The same as POST /organizations/{orgId}/api-keys with \`organizationId\` in the body. ${CREATE}`,
      schema: { body: ref(CreateKeyFlatBody), response: { 201: ref(CreatedKey, 'The key and its secret') } },
      errors: CREATE_ERRORS,
      handler: (ctx, { body }) => {
        const { organizationId: _org, ...input } = body;
        return keys.createApiKey(deps, ctx.access, input);
      },
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/api-keys',
      auth: { org: 'orgId', permission: 'api-keys:manage' },
      operationId: 'listApiKeys',
      tags,
      summary: 'API keys, newest first, without secrets (api-keys:manage)',
      description: `${PEOPLE} Revoked keys are listed too; \`lastUsedAt\` is the time of the key's newest audit entry.`,
      schema: { params: OrgParams, querystring: PageQuery, response: { 200: ref(KeyList, 'A page of keys') } },
      handler: (ctx, { query }) => keys.listApiKeys(deps, ctx.access, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/api-keys/:keyId',
      auth: { org: 'orgId', permission: 'api-keys:manage' },
      operationId: 'revokeApiKey',
      tags,
      summary: 'Revoke an API key at once (api-keys:manage)',
      description: REVOKE,
      schema: { params: OrgKeyParams, response: { 200: ref(RevokedKey, 'Revoked') } },
      errors: [NOT_FOUND, REVOKED],
      handler: async (ctx, { params }) => ({
        message: 'API key revoked',
        apiKey: await keys.revokeApiKey(deps, ctx.access, params.keyId),
      }),
    }),
    route({
      method: 'DELETE',
      url: '/api-keys/:keyId',
      auth: keyOrg,
      operationId: 'revokeApiKeyById',
      tags,
      summary: 'Revoke an API key at once (api-keys:manage)',
      description: `${REVOKE} The organization is found from the key: an unknown key id answers 404.`,
      schema: { params: KeyParams, response: { 200: ref(RevokedKey, 'Revoked') } },
      errors: [NOT_FOUND, REVOKED],
      handler: async (ctx, { params }) => ({
        message: 'API key revoked',
        apiKey: await keys.revokeApiKey(deps, ctx.access, params.keyId),
      }),
    }),
    route({
      method: 'GET',
      url: '/api-keys/:keyId/usage',
      auth: keyOrg,
      operationId: 'getApiKeyUsage',
      tags,
      summary: 'Requests made with a key and its effective rate limit (api-keys:manage)',
      description: `${PEOPLE} \`usage.requests\` counts every request made with the key, refused ones included; \`usage.rateLimit\` is the key's limit, else the default.`,
      schema: { params: KeyParams, response: { 200: ref(KeyUsage, 'The key and its usage') } },
      errors: [NOT_FOUND],
      handler: (ctx, { params }) => keys.keyUsage(deps, ctx.access, params.keyId),
    }),
  ];
}
