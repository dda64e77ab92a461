// The one authorization function of organization routes: the caller's access to an organization
// (its id, the actor, the permissions), or 404 for an unknown organization and 403 for a
// non-member or a missing permission. Services receive the access, never the request.
import { and, eq, sql } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { Db } from '../db/client.js';
import { type Permission, permissionsOfScopes, ROLE_PERMISSIONS, SCOPE_PERMISSIONS, SCOPES } from '../modules/organizations/permissions.js';
import { memberships, organizations, type Role } from '../modules/organizations/tables.js';
import { authenticationError, authorizationError, notFound } from './errors.js';

export interface RequestContext {
  method: string;
  /** The route pattern, e.g. `/api/v1/organizations/:orgId/projects`. */
  route: string;
  path: string;
  ipAddress: string | null;
  userAgent: string | null;
}

export type OrgActor =
  | { type: 'user'; id: string; email: string; role: Role; userId: string }
  // `userId` of a key is the user who created it: the person changes made with it are attributed to.
  | { type: 'api_key'; id: string; scopes: string[]; userId: string };

export interface OrgAccess {
  organizationId: string;
  actor: OrgActor;
  permissions: ReadonlySet<Permission>;
  request: RequestContext;
}

export function requestContext(request: FastifyRequest): RequestContext {
  return {
    method: request.method,
    route: request.routeOptions.url ?? request.url,
    path: request.url.split('?')[0]!,
    ipAddress: request.ip ?? null,
    userAgent: request.headers['user-agent']?.slice(0, 512) ?? null,
  };
}

export function createAuthorizer(db: Db) {
  // One round trip: the organization and the caller's membership in it.
  const lookup = db
    .select({ id: organizations.id, role: memberships.role })
    .from(organizations)
    .leftJoin(memberships, and(eq(memberships.organizationId, organizations.id), eq(memberships.userId, sql.placeholder('userId'))))
    .where(eq(organizations.id, sql.placeholder('orgId')))
    .prepare('org_access');

  return async function authorizeOrg(request: FastifyRequest, orgId: string, permission: Permission): Promise<OrgAccess> {
    const actor = request.actor;
    if (actor.kind === 'apiKey') {
      // A key reaches its own organization only, and only what its scopes map to (deny by default).
      if (actor.organizationId !== orgId) throw authorizationError('This API key belongs to another organization');
      const permissions = permissionsOfScopes(actor.scopes);
      if (!permissions.has(permission)) {
        const needed = SCOPES.filter((s) => (SCOPE_PERMISSIONS[s] as readonly Permission[]).includes(permission));
        throw authorizationError(
          'API key lacks the required scope',
          needed.length ? `Requires one of the scopes: ${needed.join(', ')}` : `${permission} cannot be granted to an API key`,
        );
      }
      return {
        organizationId: orgId,
        actor: { type: 'api_key', id: actor.keyId, scopes: actor.scopes, userId: actor.createdBy },
        permissions,
        request: requestContext(request),
      };
    }
    if (actor.kind !== 'user') throw authenticationError();
    const [row] = await lookup.execute({ orgId, userId: actor.userId });
    if (!row) throw notFound('Organization not found');
    if (!row.role) throw authorizationError('You are not a member of this organization');
    const permissions = ROLE_PERMISSIONS[row.role];
    if (!permissions.has(permission)) throw authorizationError(`Missing permission ${permission}`, `Your role (${row.role}) does not grant ${permission}`);
    return {
      organizationId: row.id,
      actor: { type: 'user', id: actor.userId, email: actor.email, role: row.role, userId: actor.userId },
      permissions,
      request: requestContext(request),
    };
  };
}

export type AuthorizeOrg = ReturnType<typeof createAuthorizer>;
