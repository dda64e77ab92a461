import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import { bearerAuth as security, errors } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import { OrgParams } from '../organizations/schemas.js';
import { Type } from 'typebox';
import { ApiKey, CreateKeyBody, CreateKeyFlatBody, CreatedKey, KeyList, KeyParams, KeyUsage, OrgKeyParams } from './schemas.js';
import * as keys from './service.js';

const tags = ['api-keys'];
const Revoked = Type.Object({ message: Type.String(), apiKey: ApiKey });

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const authorize = deps.authorizeOrg;

  app.post('/organizations/:orgId/api-keys', {
    schema: {
      tags,
      security,
      summary: 'Create an API key (api-keys:create); the full key is in this response only',
      params: OrgParams,
      body: CreateKeyBody,
      response: { 201: CreatedKey, ...errors(401, 402, 403, 404) },
    },
    handler: async (req, reply) => reply.status(201).send(await keys.createApiKey(deps, await authorize(req, req.params.orgId, 'api-keys:create'), req.body)),
  });

  app.post('/api-keys', {
    schema: {
      tags,
      security,
      summary: 'Create an API key; the organization is given in the body (alias of the organization path)',
      body: CreateKeyFlatBody,
      response: { 201: CreatedKey, ...errors(401, 402, 403, 404) },
    },
    handler: async (req, reply) => {
      const { organizationId, ...input } = req.body;
      return reply.status(201).send(await keys.createApiKey(deps, await authorize(req, organizationId, 'api-keys:create'), input));
    },
  });

  app.get('/organizations/:orgId/api-keys', {
    schema: { tags, security, summary: 'API keys, newest first, without secrets (api-keys:manage)', params: OrgParams, querystring: PageQuery, response: { 200: KeyList, ...errors(401, 403, 404) } },
    handler: async (req) => keys.listApiKeys(deps, await authorize(req, req.params.orgId, 'api-keys:manage'), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  app.delete('/organizations/:orgId/api-keys/:keyId', {
    schema: { tags, security, summary: 'Revoke an API key at once (api-keys:manage)', params: OrgKeyParams, response: { 200: Revoked, ...errors(401, 403, 404, 409) } },
    handler: async (req) => keys.revokeApiKey(deps, await authorize(req, req.params.orgId, 'api-keys:manage'), req.params.keyId),
  });

  app.delete('/api-keys/:keyId', {
    schema: { tags, security, summary: 'Revoke an API key at once (api-keys:manage)', params: KeyParams, response: { 200: Revoked, ...errors(401, 403, 404, 409) } },
    handler: async (req) => {
      const orgId = await keys.organizationOfKey(deps, req.params.keyId);
      return keys.revokeApiKey(deps, await authorize(req, orgId, 'api-keys:manage'), req.params.keyId);
    },
  });

  app.get('/api-keys/:keyId/usage', {
    schema: { tags, security, summary: 'Requests made with a key and its effective rate limit (api-keys:manage)', params: KeyParams, response: { 200: KeyUsage, ...errors(401, 403, 404) } },
    handler: async (req) => {
      const orgId = await keys.organizationOfKey(deps, req.params.keyId);
      return keys.keyUsage(deps, await authorize(req, orgId, 'api-keys:manage'), req.params.keyId);
    },
  });
};
