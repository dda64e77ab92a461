// buildApp(deps): core plugins, then the route table (src/routes.ts), mounted in one line.
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Infra } from './infra.js';
import { registerCors } from './http/cors.js';
import { frameworkError, registerErrorHandler, sendError } from './http/error-handler.js';
import { AppError, notFound } from './lib/errors.js';
import { registerPipeline } from './http/pipeline.js';
import { errors } from './http/errors-doc.js';
import { documentRoute, swaggerOptions } from './http/openapi.js';
import { components, named, publicRoute, ref } from './http/schemas.js';
import { createSerializerCompiler } from './http/serialization.js';
import { RequestLogController, serializeRequest } from './http/request-log.js';
import {
  createValidatorCompiler,
  jsonHasNul,
  jsonHasNulError,
  jsonNestingExceeds,
  jsonTooDeep,
  MAX_JSON_DEPTH,
} from './http/validation.js';
import { registerMetrics } from './http/metrics.js';
import { CSP_APP, isWebPath, registerWebApp, WEB_DIST } from './http/web.js';
import { routes } from './routes.js';
import { mountRoutes } from './http/mount.js';
import { JWKS_DESCRIPTION, JWKS_SUMMARY, sendJwks } from './modules/tokens/routes.js';
import { Jwks } from './modules/tokens/schemas.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

const Health = named('Health', Type.Object({ status: Type.String() }), { examples: [{ status: 'ok' }] });

const trustHops = (hops: number) => (_address: string, i: number) => i < hops;

// Content-Security-Policy by kind of response. Every one refuses framing. The docs UI loads its
// scripts and styles from this origin (no inline script), sets inline styles, shows data: and blob:
// images, and fetches the OpenAPI document and "Try it out" requests from this origin. The web app's
// pages (http/web.ts) get CSP_APP: scripts, styles and API calls from this origin only. Other HTML
// (the test checkout page) needs nothing but its inline style; its forms post here and are then
// redirected to APP_ORIGIN, so no form-action (browsers apply it to the redirect too). Anything else
// (JSON, files) is not a document: nothing at all.
const CSP_DOCS =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";
const CSP_PAGE =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'";
const CSP_OTHER = "default-src 'none'; frame-ancestors 'none'";
const HSTS = 'max-age=31536000; includeSubDomains';
const DOCS = /^\/docs(?:[/?]|$)/;
// The JWKS document is public and meant to be cached (modules/tokens/routes.ts).
const JWKS = /^(?:\/api\/v1)?\/\.well-known\/jwks\.json(?:\?|$)/;

/**
 * The security headers of every response, errors included: set from the first onSend hook (every
 * reply.send goes through it, the error handler's too) and from the framework-error handler (which
 * answers before any hook). Nothing but the docs UI and the web app's files (which set their own
 * Cache-Control) may be cached.
 */
function securityHeaders(https: boolean) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    if (https) reply.header('strict-transport-security', HSTS);
    const docs = DOCS.test(request.url);
    const web = isWebPath(request.url);
    const cacheable = (web || JWKS.test(request.url)) && reply.hasHeader('cache-control');
    if (!docs && !cacheable) reply.header('cache-control', 'no-store');
    const type = reply.getHeader('content-type');
    const html = typeof type === 'string' && type.trimStart().toLowerCase().startsWith('text/html');
    reply.header('content-security-policy', html ? (docs ? CSP_DOCS : web ? CSP_APP : CSP_PAGE) : CSP_OTHER);
  };
}

export interface AppOptions {
  /** The web app's build (web/dist/ unless told otherwise: tests point it elsewhere). */
  webDist?: string;
}

export async function buildApp(deps: Infra, options: AppOptions = {}): Promise<FastifyInstance> {
  const secure = securityHeaders(deps.config.publicApiUrl.startsWith('https:'));
  const app = Fastify({
    // Request log lines never carry a mailed token or a provider's code from the URL (request-log.ts).
    loggerInstance: deps.logger.child({}, { serializers: { req: serializeRequest } }) as FastifyBaseLogger,
    // Request log lines (request-log.ts): none for probes and static files; one per request in pretty.
    logController: new RequestLogController(deps.config.logFormat === 'pretty'),
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

  // Named schemas first: routes refer to them (validation, serialization and the document).
  const shared = components();
  for (const schema of shared) app.addSchema(schema);
  app.setValidatorCompiler(
    createValidatorCompiler(Object.fromEntries(shared.map((s) => [(s as { $id: string }).$id, s]))),
  );
  app.setSerializerCompiler(createSerializerCompiler(shared));
  app.addHook('onRoute', documentRoute);
  // Only JSON bodies are accepted: other content types answer 415.
  app.removeContentTypeParser(['text/plain']);
  // An empty body sent as JSON (many clients do so on a bodiless POST such as logout) is no body;
  // a route that needs one still answers 400 from its schema. A body nested deeper than
  // MAX_JSON_DEPTH answers 400 before it is parsed, on every route (see jsonNestingExceeds), and one
  // whose strings hold a NUL character answers 400 once parsed.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (text === '' || text.trim() === '') return done(null, undefined);
    if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) return done(jsonTooDeep(), undefined);
    return parseJson(req, text, (err, value) => {
      if (err) return done(err, undefined);
      // A NUL in any string, key or value, answers 400 here, once for every route (jsonHasNul).
      if (jsonHasNul(text)) return done(jsonHasNulError(), undefined);
      return done(null, value);
    });
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

  await app.register(swagger, swaggerOptions);
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });

  const health = { tags: ['Health'], security: publicRoute };
  app.get(
    '/health',
    {
      schema: {
        ...health,
        operationId: 'getHealth',
        summary: 'The process is up',
        description: 'Answers 200 while the process runs, whatever the database does; not rate limited.',
        response: { 200: ref(Health, 'The process is up') },
      },
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/ready',
    {
      schema: {
        ...health,
        operationId: 'getReadiness',
        summary: 'The database answers',
        description:
          'Answers 200 `{status: "ready"}` while the database answers a query, else 503 SERVICE_UNAVAILABLE with Retry-After; not rate limited.',
        response: {
          200: ref(Health, 'The database answers'),
          ...errors({ code: 'SERVICE_UNAVAILABLE', message: 'Database unreachable' }),
        },
      },
    },
    async (_req, reply) => {
      try {
        await deps.dbHandle.ping();
        return { status: 'ready' };
      } catch {
        return sendError(
          reply,
          new AppError('SERVICE_UNAVAILABLE', 'Database unreachable', '', { 'Retry-After': '1' }),
        );
      }
    },
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['Tokens'],
        security: publicRoute,
        operationId: 'getWellKnownJwks',
        summary: JWKS_SUMMARY,
        description: JWKS_DESCRIPTION.replace(
          'Also at `/.well-known/jwks.json`',
          'Also at `/api/v1/.well-known/jwks.json`',
        ),
        response: { 200: ref(Jwks, 'The published public keys') },
      },
    },
    async (_req, reply) => {
      await sendJwks(deps, reply as FastifyReply);
    },
  );

  // GET /metrics, and the request-duration hook every route below inherits (http/metrics.ts).
  registerMetrics(app, deps);

  await app.register(
    async (api) => {
      // Credential, rate limit, guard, quota, request audit: the order is pipeline.ts's.
      await registerPipeline(api, deps);
      api.setNotFoundHandler({ preHandler: api.rateLimit() }, async (request) => {
        throw notFound('Route not found', `${request.method} ${request.url.split('?')[0]} does not exist`);
      });
      // The route table.
      await mountRoutes(api, deps, routes(deps));
    },
    { prefix: '/api/v1' },
  );

  // Every other path is the web app's, or a 404 (docs/web.md).
  const auth = deps.config.auth;
  registerWebApp(app, {
    dist: options.webDist ?? WEB_DIST,
    config: {
      signIn: {
        password: auth.methods.password,
        magicLink: auth.methods.magicLink,
        google: auth.oauth.google !== null,
        github: auth.oauth.github !== null,
      },
      brand: {
        name: deps.config.branding.appName,
        logoUrl: deps.config.branding.logoUrl,
        primaryColor: deps.config.branding.primaryColor,
        supportEmail: deps.config.branding.supportEmail,
      },
    },
  });

  return app;
}
