import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Infra } from '../../infra.js';
import { errors, orgAccessErrors, type ErrorExample } from '../../http/errors-doc.js';
import { bearerAuth as security, OrgParams, ref } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import { CreateKeyBody, CreateKeyFlatBody, CreatedKey, KeyList, KeyParams, KeyUsage, OrgKeyParams, RevokedKey } from './schemas.js';
import * as keys from './service.js';
import { orgAccess } from '../../http/access.js';

const tags = ['API keys'];
const PEOPLE = 'Owners and admins only: an API key gets 403.';
const NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'API key not found' };
const REVOKED: ErrorExample = { code: 'CONFLICT', message: 'API key is already revoked' };
const createErrors = errors(
  { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'expiresAt: must be in the future' },
  { code: 'PLAN_LIMIT_EXCEEDED', message: 'Plan limit reached: 1 active API keys', details: "Upgrade the organization's plan to add more active API keys" },
  ...orgAccessErrors('api-keys:create'),
);
const CREATE =
  'The full key (`plainKey`) is in this response only; only its hash is stored. Active keys are limited by the plan (402). Sends api_key.created (docs/api.md#api-key-routes).';

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const authorize = orgAccess(deps);

  app.post('/organizations/:orgId/api-keys', {
    schema: {
      tags,
      security,
      operationId: 'createApiKey',
      summary: 'Create an API key (api-keys:create); the full key is in this response only',
      description: `${PEOPLE} ${CREATE}`,
      params: OrgParams,
      body: ref(CreateKeyBody),
      response: { 201: ref(CreatedKey, 'The key and its secret'), ...createErrors },
    },
    handler: async (req, reply) => reply.status(201).send(await keys.createApiKey(deps, await authorize(req, req.params.orgId, 'api-keys:create'), req.body)),
  });

  app.post('/api-keys', {
    schema: {
      tags,
      security,
      operationId: 'createOrganizationApiKey',
      summary: 'Create an API key; the organization is given in the body (alias of the organization path)',
      description: `${PEOPLE} The same as POST /organizations/{orgId}/api-keys with \`organizationId\` in the body. ${CREATE}`,
      body: ref(CreateKeyFlatBody),
      response: { 201: ref(CreatedKey, 'The key and its secret'), ...createErrors },
    },
    handler: async (req, reply) => {
      const { organizationId, ...input } = req.body;
      return reply.status(201).send(await keys.createApiKey(deps, await authorize(req, organizationId, 'api-keys:create'), input));
    },
  });

  app.get('/organizations/:orgId/api-keys', {
    schema: {
      tags,
      security,
      operationId: 'listApiKeys',
      summary: 'API keys, newest first, without secrets (api-keys:manage)',
      description: `${PEOPLE} Revoked keys are listed too; \`lastUsedAt\` is the time of the key's newest audit entry.`,
      params: OrgParams,
      querystring: PageQuery,
      response: { 200: ref(KeyList, 'A page of keys'), ...errors(...orgAccessErrors('api-keys:manage')) },
    },
    handler: async (req) => keys.listApiKeys(deps, await authorize(req, req.params.orgId, 'api-keys:manage'), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  const REVOKE = `${PEOPLE} The key is refused on its next request, on every instance (401 API key is inactive). Revoking a revoked key: 409. Sends api_key.revoked.`;
  app.delete('/organizations/:orgId/api-keys/:keyId', {
    schema: {
      tags,
      security,
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key at once (api-keys:manage)',
      description: REVOKE,
      params: OrgKeyParams,
      response: { 200: ref(RevokedKey, 'Revoked'), ...errors(...orgAccessErrors('api-keys:manage'), NOT_FOUND, REVOKED) },
    },
    handler: async (req) => ({ message: 'API key revoked', apiKey: await keys.revokeApiKey(deps, await authorize(req, req.params.orgId, 'api-keys:manage'), req.params.keyId) }),
  });

  app.delete('/api-keys/:keyId', {
    schema: {
      tags,
      security,
      operationId: 'revokeApiKeyById',
      summary: 'Revoke an API key at once (api-keys:manage)',
      description: `${REVOKE} The organization is found from the key: an unknown key id answers 404.`,
      params: KeyParams,
      response: { 200: ref(RevokedKey, 'Revoked'), ...errors(...orgAccessErrors('api-keys:manage'), NOT_FOUND, REVOKED) },
    },
    handler: async (req) => {
      const orgId = await keys.organizationOfKey(deps, req.params.keyId);
      return { message: 'API key revoked', apiKey: await keys.revokeApiKey(deps, await authorize(req, orgId, 'api-keys:manage'), req.params.keyId) };
    },
  });

  app.get('/api-keys/:keyId/usage', {
    schema: {
      tags,
      security,
      operationId: 'getApiKeyUsage',
      summary: 'Requests made with a key and its effective rate limit (api-keys:manage)',
      description: `${PEOPLE} \`usage.requests\` counts every request made with the key, refused ones included; \`usage.rateLimit\` is the key's limit, else the default.`,
      params: KeyParams,
      response: { 200: ref(KeyUsage, 'The key and its usage'), ...errors(...orgAccessErrors('api-keys:manage'), NOT_FOUND) },
    },
    handler: async (req) => {
      const orgId = await keys.organizationOfKey(deps, req.params.keyId);
      return keys.keyUsage(deps, await authorize(req, orgId, 'api-keys:manage'), req.params.keyId);
    },
  });
};
