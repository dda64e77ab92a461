// Registers the route table (src/routes.ts) with Fastify: each entry becomes a route whose pipeline
// config, OpenAPI security and guard errors come from its declared `auth`, and whose handler is
// called with the caller already checked (route.ts). The pipeline itself is pipeline.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import type { Infra } from '../infra.js';
import type { Permission } from '../platform/permissions.js';
import { orgAccess, requestContext, requireUser } from './access.js';
import { errors, orgAccessErrors } from './errors-doc.js';
import { OPTIONAL_BODY } from './openapi.js';
import type { AuthMode } from './pipeline.js';
import { type Alias, type Guard, isOrgGuard, type OrgLocator, type Route } from './route.js';
import { bearerAuth, orgSecurity, publicRoute } from './schemas.js';

/**
 * The pipeline's guard (pipeline.ts) of a declared one: an organization route needs a caller; an
 * `optionalUser` route lets anyone in, and its caller is checked here (callerOf).
 */
const pipelineAuth = (g: Guard): AuthMode => (isOrgGuard(g) ? 'user' : g === 'optionalUser' ? 'optional' : g);

/**
 * The document's security requirement of a guard: a key too where a scope reaches the permission; a
 * bearer token, or none, where a signed-in person is optional.
 */
function securityOf(g: Guard) {
  if (isOrgGuard(g)) return orgSecurity(g.permission);
  if (g === 'optionalUser') return [...bearerAuth, {}];
  return g === 'user' ? bearerAuth : publicRoute;
}

const firstSuccess = (response: Record<number, TSchema>) =>
  Object.keys(response)
    .map(Number)
    .filter((s) => s >= 200 && s < 300)
    .sort((a, b) => a - b)[0] ?? 200;

const emptyBodyIsEmpty = async (request: FastifyRequest) => {
  if (request.body === undefined) request.body = {};
};

type Caller = (request: FastifyRequest) => Promise<Record<string, unknown>>;

/** What the handler receives of the caller, checked: 401/403/404 are thrown from here. */
function callerOf(deps: Pick<Infra, 'authorizeOrg'>, guard: Guard, locator: OrgLocator | undefined): Caller {
  if (guard === 'none') return async () => ({});
  if (guard === 'optional') return async (request) => ({ actor: request.actor });
  if (guard === 'user') return async (request) => ({ user: requireUser(request) });
  if (guard === 'optionalUser')
    return async (request) => ({ user: request.actor.kind === 'anonymous' ? null : requireUser(request) });
  const authorize = orgAccess(deps);
  const permission: Permission = guard.permission;
  const where = locator ?? guard.org;
  const orgOf =
    typeof where === 'string'
      ? async (request: FastifyRequest) => (request.params as Record<string, string>)[where]!
      : async (request: FastifyRequest) => where(request.params as Record<string, string>, request);
  return async (request) => ({ access: await authorize(request, await orgOf(request), permission) });
}

function toFastify(deps: Pick<Infra, 'authorizeOrg'>, r: Route, alias?: Alias): RouteOptions {
  const guard = r.auth;
  const { response, ...schemas } = r.schema;
  const guardErrors = isOrgGuard(guard) ? (guard.errors ?? orgAccessErrors(guard.permission)) : [];
  const status = firstSuccess(response);
  const caller = callerOf(deps, guard, alias?.org);
  const handler = r.handler as unknown as (
    ctx: Record<string, unknown>,
    input: Record<string, unknown>,
  ) => Promise<unknown>;
  return {
    method: r.method,
    url: alias?.url ?? r.url,
    config: { auth: pipelineAuth(guard), ...(r.bucket ? { bucket: r.bucket } : {}) },
    schema: {
      tags: r.tags,
      security: securityOf(guard),
      operationId: alias?.operationId ?? r.operationId,
      summary: (alias?.ownSummary ?? r.summary) + (alias?.summary ?? ''),
      description: r.description + (alias?.description ?? ''),
      ...schemas,
      ...(alias?.params ? { params: alias.params } : {}),
      ...(r.optionalBody ? OPTIONAL_BODY : {}),
      response: { ...response, ...errors(...guardErrors, ...(r.errors ?? [])) },
    },
    ...(r.optionalBody ? { preValidation: emptyBodyIsEmpty } : {}),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const ctx = { request, reply, context: requestContext(request), ...(await caller(request)) };
      reply.code(status);
      const out = await handler(ctx, { params: request.params, query: request.query, body: request.body });
      return out === reply || reply.sent ? reply : out;
    },
  };
}

/**
 * A route with parsers of its own: a content type parser belongs to a Fastify instance, so the route
 * gets a plugin of its own, where the parsers apply to it alone (encapsulation).
 */
async function withParsers(
  app: FastifyInstance,
  parsers: NonNullable<Route['parsers']>,
  options: RouteOptions[],
): Promise<void> {
  await app.register(async (own) => {
    for (const [type, parse] of Object.entries(parsers)) {
      if (own.hasContentTypeParser(type)) own.removeContentTypeParser(type);
      own.addContentTypeParser(type, { parseAs: 'string' }, (_request, body, done) => {
        try {
          done(null, parse(body as string));
        } catch (err) {
          done(err as Error, undefined);
        }
      });
    }
    for (const o of options) own.route(o);
  });
}

/** Every route of the table that is switched on, with its aliases, in the table's order. */
export async function mountRoutes(
  app: FastifyInstance,
  deps: Pick<Infra, 'config' | 'authorizeOrg'>,
  table: Route[],
): Promise<void> {
  for (const r of table) {
    if (r.enabled && !r.enabled(deps.config)) continue;
    const options = [toFastify(deps, r), ...(r.aliases ?? []).map((alias) => toFastify(deps, r, alias))];
    if (r.parsers) await withParsers(app, r.parsers, options);
    else for (const o of options) app.route(o);
  }
}
