// The OpenAPI 3.1 document (/docs/json) is generated from the route schemas. This file holds what is
// not a route's own: the document's header (info, security schemes, tags grouped as the README's
// sections) and documentRoute, which every route passes through when it is declared. It refuses a
// route without an operationId, a description or (for a signed-in route) its security, and adds the
// error codes the request pipeline (pipeline.ts) answers on every route of the route's kind.
import type { SwaggerOptions } from '@fastify/swagger';
import type { RouteOptions } from 'fastify';
import type { ErrorCode } from '../lib/errors.js';
import { addError, type ErrorExample, withOwnErrors } from './errors-doc.js';
import { type OpenApiDocument, shareErrorResponses } from './openapi-share.js';

const TAGS: Array<{ group: string; tags: Array<[name: string, description: string]> }> = [
  { group: 'Users', tags: [['Users', 'The signed-in person: profile and password (docs/api.md#users)']] },
  {
    group: 'Sign-in methods',
    tags: [
      [
        'Email and password',
        'Register, verify the address, sign in, reset the password (docs/api.md#auth-and-sessions)',
      ],
      ['Two-factor', 'TOTP two-factor and backup codes (docs/api.md#two-factor-authentication)'],
      ['Magic link', 'Sign-in links by email (docs/api.md#magic-links)'],
      ['Social sign-in', 'Google and GitHub (docs/api.md#social-sign-in)'],
      ['Passkeys', 'WebAuthn passkeys: registration, the list, sign-in (docs/api.md#passkeys)'],
      ['Sessions', 'Token refresh, logout and the session list (docs/api.md#tokens-and-refresh)'],
      ['Tokens', "Access tokens your own services verify: the JWKS and the session's live view (docs/tokens.md)"],
    ],
  },
  {
    group: 'Organizations, members and projects',
    tags: [
      ['Organizations', 'Organizations, ownership (docs/api.md#organizations)'],
      ['Members', 'Members and their roles (docs/api.md#members)'],
      ['Roles', 'The permission catalogue, custom roles and permission checks (docs/api.md#custom-roles)'],
      ['Invitations', 'Invitations by email (docs/api.md#invitations)'],
      ['Projects', "An organization's projects (docs/api.md#projects)"],
    ],
  },
  {
    group: 'API keys and the audit log',
    tags: [
      ['API keys', 'Organization API keys, managed by people (docs/api.md#api-keys)'],
      ['Audit log', 'Every key request and every change made by a person (docs/api.md#audit-log)'],
    ],
  },
  {
    group: 'Webhooks',
    tags: [['Webhooks', 'Signed outbound webhooks: endpoints and deliveries (docs/api.md#webhooks)']],
  },
  {
    group: 'Billing',
    tags: [['Billing', 'Plans, Stripe checkout and portal, inbound Stripe events (docs/api.md#billing)']],
  },
  { group: 'Health', tags: [['Health', 'Liveness and readiness (docs/api.md#health-and-documentation)']] },
];

type OpenApiHeader = NonNullable<Extract<SwaggerOptions, { openapi?: unknown }>['openapi']>;

export const swaggerOptions: SwaggerOptions = {
  // x-tagGroups (Redoc's extension) is copied to the document as is; the type does not know it.
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Tenantry API',
      version: '1.0.0',
      description:
        'Multi-tenant backend: accounts and sessions, organizations, API keys, billing and signed webhooks. The rules behind each answer are in docs/api.md; every error is the envelope `ErrorResponse`, whose `error.code` is one of `ErrorCode`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This server; every API route is under /api/v1' }],
    tags: TAGS.flatMap((g) => g.tags.map(([name, description]) => ({ name, description }))),
    'x-tagGroups': TAGS.map((g) => ({ name: g.group, tags: g.tags.map(([name]) => name) })),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'An access token from a sign-in or a refresh (docs/api.md#bearer-access-tokens)',
        },
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description:
            'An organization API key (`svc_live_…`), sent as `X-API-Key`, or as `Authorization: Bearer <key>` (docs/api.md#api-key-authentication)',
        },
      },
    },
  } as OpenApiHeader,
  transformObject: (documents) =>
    usedSchemasOnly(
      optionalBodies(shareErrorResponses((documents as { openapiObject: OpenApiDocument }).openapiObject)),
    ) as never,
  // Named schemas (schemas.ts) keep their $id as their name under #/components/schemas.
  refResolver: {
    buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
  },
};

const OPTIONAL_BODY_KEY = 'x-optional-body';
/**
 * Spread into a route's schema whose body may be left out (the route's preValidation makes a missing
 * one {}): its request body is documented as optional, where @fastify/swagger marks every body required.
 */
export const OPTIONAL_BODY = { [OPTIONAL_BODY_KEY]: true } as const;

function optionalBodies(doc: OpenApiDocument): OpenApiDocument {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item) as Array<Record<string, unknown>>) {
      if (op[OPTIONAL_BODY_KEY] !== true) continue;
      delete op[OPTIONAL_BODY_KEY];
      const body = op.requestBody as { required?: boolean } | undefined;
      if (body) body.required = false;
    }
  }
  return doc;
}

const SCHEMA_REF = '#/components/schemas/';

/**
 * Leaves out the named schemas that nothing in the document refers to. Every named schema is
 * registered with the app whatever is routed (schemas.ts registers them as their modules load), but a
 * route behind a switch that is off (a sign-in method, social sign-in without a provider) is neither
 * routed nor documented: its request and answer schemas would otherwise stay as components nothing
 * uses, which a client generator turns into types of routes that do not exist. The document of the
 * full configuration uses them all, so it is unchanged.
 */
function usedSchemasOnly(doc: OpenApiDocument): OpenApiDocument {
  const schemas = doc.components?.schemas as Record<string, unknown> | undefined;
  if (!schemas) return doc;
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) {
        const name = value.slice(SCHEMA_REF.length);
        if (!used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
      } else visit(value);
    }
  };
  // Everything but the schemas themselves refers to them (operations, shared responses); a schema
  // counts once something used refers to it.
  visit({ ...doc, components: { ...doc.components, schemas: {} } });
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
  return doc;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const hasApiKey = (security: unknown) =>
  Array.isArray(security) && security.some((s) => typeof s === 'object' && s !== null && 'apiKey' in s);

const KEY_REFUSED: ErrorExample = {
  code: 'AUTHORIZATION_ERROR',
  name: 'apiKeyRefused',
  message: 'API keys cannot use this route',
  details: 'Sign in as a user and send an access token',
};
const KEY_SCOPE: ErrorExample = {
  code: 'AUTHORIZATION_ERROR',
  name: 'missingScope',
  message: 'API key lacks the required scope',
  details: 'Needs one of: read:projects, write:projects',
};
const DONE = Symbol('documented');

/** The codes the pipeline and the framework answer on a route, whatever its handler does. */
function pipelineCodes(route: RouteOptions): Array<ErrorCode | ErrorExample> {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const auth = route.config?.auth ?? 'user';
  const codes: Array<ErrorCode | ErrorExample> = ['VALIDATION_ERROR'];
  if (methods.some((m) => BODY_METHODS.has(m))) codes.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (auth !== 'none') codes.push('AUTHENTICATION_ERROR');
  // A signed-in route asks requireUser or orgAccess: an API key gets 403 where no scope reaches.
  if (auth === 'user') codes.push(hasApiKey(route.schema?.security) ? KEY_SCOPE : KEY_REFUSED);
  if (hasApiKey(route.schema?.security)) codes.push('QUOTA_EXCEEDED');
  codes.push('RATE_LIMIT_EXCEEDED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE');
  return codes;
}

/** onRoute: checks the route's documentation and completes its error responses (see the file comment). */
export function documentRoute(route: RouteOptions): void {
  const schema = route.schema as (Record<string, unknown> & { [DONE]?: true }) | undefined;
  if (route.method === 'HEAD' || !schema || schema.hide || schema[DONE]) return;
  const where = `${String(route.method)} ${route.url}`;
  if (typeof schema.operationId !== 'string') throw new Error(`${where}: the route schema needs an operationId`);
  if (typeof schema.description !== 'string' || typeof schema.summary !== 'string')
    throw new Error(`${where}: the route schema needs a summary and a description`);
  const auth = route.config?.auth ?? 'user';
  if (auth === 'user' && !Array.isArray(schema.security))
    throw new Error(`${where}: a signed-in route must declare its security (bearerAuth or bearerOrKey)`);
  if (auth !== 'user' && schema.security === undefined) schema.security = [];
  if (route.url.startsWith('/api/')) {
    const response = withOwnErrors((schema.response ?? {}) as Record<string, unknown>);
    for (const code of pipelineCodes(route)) addError(response, code, true);
    schema.response = response;
  }
  schema[DONE] = true;
}
