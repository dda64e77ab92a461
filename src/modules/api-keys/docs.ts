// The OpenAPI prose of the API-key routes (routes.ts), by operationId: each operation's summary,
// description and the error examples its service answers. The declarations name them (`doc: docs.createApiKey`).
import { type ErrorExample, invalidBody, notFound } from '../../http/errors-doc.js';
import { routeDocs } from '../../http/route.js';

const PEOPLE = 'Owners and admins only: an API key gets 403.';
const NOT_FOUND = notFound('API key not found');
const REVOKED: ErrorExample = { code: 'CONFLICT', message: 'API key is already revoked' };
const CREATE_ERRORS: ErrorExample[] = [
  invalidBody('expiresAt: must be in the future'),
  {
    code: 'PLAN_LIMIT_EXCEEDED',
    message: 'Plan limit reached: 1 active API keys',
    details: "Upgrade the organization's plan to add more active API keys",
  },
];
const CREATE =
  'The full key (`plainKey`) is in this response only; only its hash is stored. Active keys are limited by the plan (402). Sends api_key.created (docs/api.md#api-key-routes).';
const REVOKE = `${PEOPLE} The key is refused on its next request, on every instance (401 API key is inactive). Revoking a revoked key: 409. Sends api_key.revoked.`;

export const docs = routeDocs(['API keys'], {
  createApiKey: {
    summary: 'Create an API key (api-keys:create); the full key is in this response only',
    description: `${PEOPLE} ${CREATE}`,
    errors: CREATE_ERRORS,
  },
  createOrganizationApiKey: {
    summary: 'Create an API key; the organization is given in the body (alias of the organization path)',
    description: `${PEOPLE} The same as POST /organizations/{orgId}/api-keys with \`organizationId\` in the body. ${CREATE}`,
    errors: CREATE_ERRORS,
  },
  listApiKeys: {
    summary: 'API keys, newest first, without secrets (api-keys:manage)',
    description: `${PEOPLE} Revoked keys are listed too; \`lastUsedAt\` is the time of the key's newest audit entry.`,
  },
  revokeApiKey: {
    summary: 'Revoke an API key at once (api-keys:manage)',
    description: REVOKE,
    errors: [NOT_FOUND, REVOKED],
  },
  revokeApiKeyById: {
    summary: 'Revoke an API key at once (api-keys:manage)',
    description: `${REVOKE} The organization is found from the key: an unknown key id answers 404.`,
    errors: [NOT_FOUND, REVOKED],
  },
  getApiKeyUsage: {
    summary: 'Requests made with a key and its effective rate limit (api-keys:manage)',
    description: `${PEOPLE} \`usage.requests\` counts every request made with the key, refused ones included; \`usage.rateLimit\` is the key's limit, else the default.`,
    errors: [NOT_FOUND],
  },
});
