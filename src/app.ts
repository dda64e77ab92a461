// buildApp(deps): core plugins, then the route table, one line per module.
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from './deps.js';
import { registerActor } from './http/actor.js';
import { registerCors } from './http/cors.js';
import { frameworkError, registerErrorHandler, sendError } from './http/error-handler.js';
import { AppError, notFound } from './http/errors.js';
import { registerRateLimit } from './http/rate-limit.js';
import { ErrorBody, errors } from './http/schemas.js';
import { jsonNestingExceeds, jsonTooDeep, MAX_JSON_DEPTH, validatorCompiler } from './http/validation.js';
import { apiKeyRoutes } from './modules/api-keys/routes.js';
import { auditRoutes } from './modules/audit/routes.js';
import { authRoutes } from './modules/auth/routes.js';
import { billingRoutes } from './modules/billing/routes.js';
import { organizationRoutes } from './modules/organizations/routes.js';
import { projectRoutes } from './modules/projects/routes.js';
import { userRoutes } from './modules/users/routes.js';
import { webhookRoutes } from './modules/webhooks/routes.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

const trustHops = (hops: number) => (_address: string, i: number) => i < hops;

// Content-Security-Policy by kind of response. Every one refuses framing. The docs UI loads its
// scripts and styles from this origin (no inline script), sets inline styles, shows data: and blob:
// images, and fetches the OpenAPI document and "Try it out" requests from this origin. Other HTML
// (the test checkout page) needs nothing but its inline style; its forms post here and are then
// redirected to APP_ORIGIN, so no form-action (browsers apply it to the redirect too). Anything else
// (JSON, files) is not a document: nothing at all.
const CSP_DOCS =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";
const CSP_PAGE = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'";
const CSP_OTHER = "default-src 'none'; frame-ancestors 'none'";
const HSTS = 'max-age=31536000; includeSubDomains';
const DOCS = /^\/docs(?:[/?]|$)/;

/**
 * The security headers of every response, errors included: set from the first onSend hook (every
 * reply.send goes through it, the error handler's too) and from the framework-error handler (which
 * answers before any hook). Nothing but the docs UI and its assets may be cached.
 */
function securityHeaders(https: boolean) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    if (https) reply.header('strict-transport-security', HSTS);
    const docs = DOCS.test(request.url);
    if (!docs) reply.header('cache-control', 'no-store');
    const type = reply.getHeader('content-type');
    const html = typeof type === 'string' && type.trimStart().toLowerCase().startsWith('text/html');
    reply.header('content-security-policy', html ? (docs ? CSP_DOCS : CSP_PAGE) : CSP_OTHER);
  };
}

export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const secure = securityHeaders(deps.config.publicApiUrl.startsWith('https:'));
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // A number means "trust that many hops". Fastify 5 treats a bare number as trusting nothing,
    // so it becomes proxy-addr's function form: address i (0 = the socket peer) is a trusted hop.
    trustProxy: typeof deps.config.trustProxy === 'number' ? trustHops(deps.config.trustProxy) : deps.config.trustProxy,
    bodyLimit: deps.config.bodyLimitBytes,
    forceCloseConnections: 'idle',
    // A request arriving on a kept-alive connection while closing is served (with Connection: close)
    // rather than answered by Fastify's own 503 body, which is not the error envelope.
    return503OnClosing: false,
    // false: Fastify would otherwise take the header as is and never call genReqId to check it.
    requestIdHeader: false,
    // An incoming X-Request-Id is kept when it is sane, so logs correlate across services.
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false } },
    frameworkErrors: (err, request, reply) => {
      secure(request, reply);
      return frameworkError(err, request, reply);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Only JSON bodies are accepted: other content types answer 415.
  app.removeContentTypeParser(['text/plain']);
  // An empty body sent as JSON (many clients do so on a bodiless POST such as logout) is no body;
  // a route that needs one still answers 400 from its schema. A body nested deeper than
  // MAX_JSON_DEPTH answers 400 before it is parsed, on every route (see jsonNestingExceeds).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (text === '' || text.trim() === '') return done(null, undefined);
    if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) return done(jsonTooDeep(), undefined);
    return parseJson(req, text, done);
  });
  // On close, responses still in flight say `Connection: close`: otherwise a keep-alive client
  // (a browser, a proxy's pool) holds its socket open and the graceful shutdown never ends.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    secure(request, reply);
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
    return payload;
  });
  registerErrorHandler(app);
  registerCors(app, deps.config.appOrigin);
  app.addSchema(ErrorBody);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tenantry API',
        version: '1.0.0',
        description: 'Multi-tenant backend: accounts and sessions, organizations, API keys, billing and signed webhooks.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });

  const Health = Type.Object({ status: Type.String() });
  app.get('/health', { schema: { tags: ['health'], summary: 'The process is up', response: { 200: Health } } }, async () => ({ status: 'ok' }));
  app.get(
    '/ready',
    { schema: { tags: ['health'], summary: 'The database answers', response: { 200: Health, ...errors(503) } } },
    async (_req, reply) => {
      try {
        await deps.dbHandle.ping();
        return { status: 'ready' };
      } catch {
        return sendError(reply, new AppError(503, 'SERVICE_UNAVAILABLE', 'Database unreachable', '', { 'Retry-After': '1' }));
      }
    },
  );

  await app.register(
    async (api) => {
      // Order matters: the rate limiter's preParsing hook must precede the auth guard's.
      await registerRateLimit(api, deps);
      registerActor(api, deps);
      api.setNotFoundHandler({ preHandler: api.rateLimit() }, async (request) => {
        throw notFound('Route not found', `${request.method} ${request.url.split('?')[0]} does not exist`);
      });
      // The route table.
      await api.register(authRoutes, { deps });
      await api.register(userRoutes, { deps });
      await api.register(organizationRoutes, { deps });
      await api.register(projectRoutes, { deps });
      await api.register(apiKeyRoutes, { deps });
      await api.register(auditRoutes, { deps });
      await api.register(webhookRoutes, { deps });
      await api.register(billingRoutes, { deps });
    },
    { prefix: '/api/v1' },
  );

  app.setNotFoundHandler(async (request) => {
    throw notFound('Route not found', `${request.method} ${request.url.split('?')[0]} does not exist`);
  });

  return app;
}
