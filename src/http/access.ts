// What a route handler asks of the request once the pipeline (pipeline.ts) has let it through: the
// signed-in person, or the caller's access to an organization (platform/tenancy.ts), and the request
// context that audit entries record.
import type { FastifyRequest } from 'fastify';
import type { Infra } from '../infra.js';
import { authenticationError, authorizationError } from '../lib/errors.js';
import type { UserActor } from '../platform/identity/actor.js';
import type { Permission } from '../platform/permissions.js';
import { AccountDeactivatedError, type OrgAccess, type RequestContext } from '../platform/tenancy.js';

export function requestContext(request: FastifyRequest): RequestContext {
  return {
    method: request.method,
    route: request.routeOptions.url ?? request.url,
    path: request.url.split('?')[0]!,
    ipAddress: request.ip ?? null,
    userAgent: request.headers['user-agent']?.slice(0, 512) ?? null,
    status: request.routeOptions.config.successStatus ?? 200,
  };
}

/** The signed-in person: 403 for an API key, 401 for nobody. */
export function requireUser(request: FastifyRequest): UserActor {
  if (request.actor.kind === 'api_key')
    throw authorizationError('API keys cannot use this route', 'Sign in as a user and send an access token');
  if (request.actor.kind !== 'user') throw authenticationError();
  return request.actor;
}

export type AuthorizeRequest = (request: FastifyRequest, orgId: string, permission: Permission) => Promise<OrgAccess>;

/** The caller's access to an organization, for `permission` (404/403/401 otherwise). */
export function orgAccess(deps: Pick<Infra, 'authorizeOrg'>): AuthorizeRequest {
  return async (request, orgId, permission) => {
    try {
      return await deps.authorizeOrg(request.actor, orgId, permission, requestContext(request));
    } catch (err) {
      // The pipeline finishes the job before the 401 leaves: the account's sessions are revoked.
      if (err instanceof AccountDeactivatedError) request.deactivatedUser = err.userId;
      throw err;
    }
  };
}
