// The one authorization function of organization routes: the caller's access to an organization
// (its id, the actor, the permissions), or 404 for an unknown organization and 403 for a
// non-member or a missing permission. Services receive the access, never the request; the HTTP
// layer (http/access.ts) turns a request into the actor and context this takes.
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import type { Actor } from './identity/actor.js';
import {
  type Permission,
  type PermissionCatalogue,
  permissionsOfScopes,
  SCOPE_PERMISSIONS,
  SCOPES,
} from './permissions.js';
import { memberships, organizationRoles, organizations, type Role } from '../db/tables/organizations.js';
import { users } from '../db/tables/users.js';
import { AppError, authenticationError, authorizationError, notFound } from '../lib/errors.js';

export interface RequestContext {
  method: string;
  /** The route pattern, e.g. `/api/v1/organizations/:orgId/projects`. */
  route: string;
  path: string;
  ipAddress: string | null;
  userAgent: string | null;
  /** The status the route answers on success, which the audit entry of a change records. */
  status: number;
}

/**
 * 401 for an account deactivated behind a live session: the request pipeline, seeing it, revokes
 * the account's sessions before the answer leaves (http/pipeline.ts).
 */
export class AccountDeactivatedError extends AppError {
  constructor(readonly userId: string) {
    super('AUTHENTICATION_ERROR', 'This account is no longer active', '');
  }
}

export type OrgActor =
  | { type: 'user'; id: string; email: string; role: Role; userId: string }
  // `userId` of a key is the user who created it: the person changes made with it are attributed to.
  | { type: 'api_key'; id: string; scopes: string[]; userId: string };

export interface OrgAccess {
  organizationId: string;
  actor: OrgActor;
  /** What the caller may do here: its role's permissions (built-in and the product's own), or its key's. */
  permissions: ReadonlySet<string>;
  request: RequestContext;
}

/**
 * The roles an API key may give (by a role change or an invitation) and the only roles of members it
 * may change or remove: never admin or owner, whatever its scopes and whoever made it. A key holder
 * must not be able to make admins, nor unseat one (including the person who could revoke the key).
 */
export const KEY_MANAGED_ROLES: readonly Role[] = ['member', 'viewer'];

/** 403 when an API key would give `role` (a role change, an invitation or its renewal). */
export function assertKeyMayGrant(access: OrgAccess, role: Role): void {
  if (access.actor.type === 'api_key' && !KEY_MANAGED_ROLES.includes(role)) {
    throw authorizationError(
      `An API key cannot give the ${role} role`,
      'API keys give only the member and viewer roles; a person with the admin role must do this',
    );
  }
}

/** The 403 of an API key that would change or remove a member whose role is `role`. */
export const keyManageRefusal = (role: Role) =>
  authorizationError(
    `An API key cannot change or remove ${role === 'owner' ? 'the owner' : role === 'admin' ? 'an admin' : `a member with the ${role} role`}`,
    'API keys manage only members and viewers; a person with the admin role must do this',
  );

/** 403 when an API key would change or remove a member whose role is `role` (an admin or the owner). */
export function assertKeyMayManage(access: OrgAccess, role: Role): void {
  if (access.actor.type === 'api_key' && !KEY_MANAGED_ROLES.includes(role)) throw keyManageRefusal(role);
}

export function createAuthorizer(db: Db, catalogue: PermissionCatalogue) {
  // One round trip: whether the caller's account is active, the organization, the caller's
  // membership in it and, for a custom role, what it grants (read with the membership, so a custom
  // role costs no query of its own and a change to it holds at the next request, on every instance).
  // The account's flag is read here, where a round trip is made anyway, so an account deactivated by
  // any means is refused at once even while a cache still holds it active.
  const lookup = db
    .select({
      active: users.isActive,
      id: organizations.id,
      role: memberships.role,
      custom: organizationRoles.permissions,
    })
    .from(users)
    .leftJoin(organizations, eq(organizations.id, sql.placeholder('orgId')))
    .leftJoin(memberships, and(eq(memberships.organizationId, organizations.id), eq(memberships.userId, users.id)))
    .leftJoin(
      organizationRoles,
      and(
        eq(organizationRoles.organizationId, memberships.organizationId),
        eq(organizationRoles.key, memberships.role),
      ),
    )
    .where(eq(users.id, sql.placeholder('userId')))
    .prepare('org_access');

  return async function authorizeOrg(
    actor: Actor,
    orgId: string,
    permission: Permission,
    request: RequestContext,
  ): Promise<OrgAccess> {
    if (actor.kind === 'api_key') {
      // A key reaches its own organization only, and only what its scopes map to (deny by default).
      if (actor.organizationId !== orgId) throw authorizationError('This API key belongs to another organization');
      const permissions: ReadonlySet<string> = permissionsOfScopes(actor.scopes);
      if (!permissions.has(permission)) {
        const needed = SCOPES.filter((s) => (SCOPE_PERMISSIONS[s] as readonly Permission[]).includes(permission));
        throw authorizationError(
          'API key lacks the required scope',
          needed.length
            ? `Requires one of the scopes: ${needed.join(', ')}`
            : `${permission} cannot be granted to an API key`,
        );
      }
      return {
        organizationId: orgId,
        actor: { type: 'api_key', id: actor.keyId, scopes: actor.scopes, userId: actor.createdBy },
        permissions,
        request,
      };
    }
    if (actor.kind !== 'user') throw authenticationError();
    const [row] = await lookup.execute({ orgId, userId: actor.userId });
    // Deactivated since the guard let the request in (its cache had the account active).
    if (!row?.active) throw new AccountDeactivatedError(actor.userId);
    if (!row.id) throw notFound('Organization not found');
    if (!row.role) throw authorizationError('You are not a member of this organization');
    const permissions = catalogue.grants(row.role, row.custom);
    if (!permissions.has(permission))
      throw authorizationError(
        `Missing permission ${permission}`,
        `Your role (${row.role}) does not grant ${permission}`,
      );
    return {
      organizationId: row.id,
      actor: { type: 'user', id: actor.userId, email: actor.email, role: row.role, userId: actor.userId },
      permissions,
      request,
    };
  };
}

export type AuthorizeOrg = ReturnType<typeof createAuthorizer>;
