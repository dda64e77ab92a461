// A person's role in an organization and what it grants, read in one query (the membership and, for
// a custom role, its row): for the tokens' org_* claims, GET /auth/session, the permission check, and
// the checks that run again inside a write. Route authorization reads the same join (tenancy.ts).
//
// The privilege ceiling (docs/api.md#custom-roles): a person gives, changes or takes away only roles
// whose every permission they hold themselves, so no role can be used to climb above its holder's
// own (an admin's ceiling is an admin's; a custom role with members:update cannot make admins). API
// keys are bounded by KEY_MANAGED_ROLES instead (tenancy.ts).
import { and, eq } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { memberships, organizationRoles, type Role } from '../db/tables/organizations.js';
import { authorizationError, validationError } from '../lib/errors.js';
import { isBuiltInRole, type PermissionCatalogue } from './permissions.js';
import type { OrgAccess } from './tenancy.js';

export interface MemberRole {
  role: Role;
  permissions: ReadonlySet<string>;
}

/** `userId`'s role in the organization and its permissions; null for a non-member. */
export async function memberRole(
  db: Db | Tx,
  catalogue: PermissionCatalogue,
  organizationId: string,
  userId: string,
): Promise<MemberRole | null> {
  const [row] = await db
    .select({ role: memberships.role, custom: organizationRoles.permissions })
    .from(memberships)
    .leftJoin(
      organizationRoles,
      and(
        eq(organizationRoles.organizationId, memberships.organizationId),
        eq(organizationRoles.key, memberships.role),
      ),
    )
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  if (!row) return null;
  return { role: row.role, permissions: catalogue.grants(row.role, row.custom) };
}

/** A role as the tokens carry it: its key and its permissions, in catalogue order. */
export function claimsOf(catalogue: PermissionCatalogue, organizationId: string, m: MemberRole) {
  return {
    id: organizationId,
    role: m.role,
    permissions: catalogue
      .list()
      .map((p) => p.key)
      .filter((k) => m.permissions.has(k)),
  };
}

/** What `role` grants in the organization (a custom role no longer there grants nothing). */
export async function roleGrants(
  tx: Tx | Db,
  catalogue: PermissionCatalogue,
  organizationId: string,
  role: Role,
): Promise<MemberRole> {
  if (isBuiltInRole(role)) return { role, permissions: catalogue.grants(role, null) };
  const [row] = await tx
    .select({ permissions: organizationRoles.permissions })
    .from(organizationRoles)
    .where(and(eq(organizationRoles.organizationId, organizationId), eq(organizationRoles.key, role)));
  return { role, permissions: catalogue.grants(role, row?.permissions ?? null) };
}

/**
 * The role a member change or an invitation gives: admin, member, viewer, or a custom role of this
 * organization, read under a share lock so that it cannot be deleted (or its permissions changed)
 * before the change that gives it commits. 400 for owner or a key the organization has no role of.
 */
export async function assignableRole(
  tx: Tx,
  catalogue: PermissionCatalogue,
  organizationId: string,
  role: string,
): Promise<MemberRole> {
  if (role === 'owner')
    throw validationError('Invalid request body', 'role: owner is given only by transferring ownership');
  if (isBuiltInRole(role)) return { role, permissions: catalogue.grants(role, null) };
  const [row] = await tx
    .select({ permissions: organizationRoles.permissions })
    .from(organizationRoles)
    .where(and(eq(organizationRoles.organizationId, organizationId), eq(organizationRoles.key, role)))
    .for('share');
  if (!row) throw validationError('Invalid request body', `role: "${role}" is not a role of this organization`);
  return { role, permissions: catalogue.grants(role, row.permissions) };
}

/** The permissions of `permissions` the caller lacks (none for an API key: KEY_MANAGED_ROLES bounds it). */
export function beyondCeiling(access: OrgAccess, permissions: Iterable<string>): string[] {
  if (access.actor.type !== 'user') return [];
  return [...permissions].filter((p) => !access.permissions.has(p));
}

/** 403 when a person would give, change or take away `role` while lacking one of its permissions. */
export function assertWithinCeiling(access: OrgAccess, role: MemberRole, doing: 'give' | 'manage'): void {
  const lacking = beyondCeiling(access, role.permissions);
  if (lacking.length === 0) return;
  throw authorizationError(
    doing === 'give'
      ? `You cannot give the ${role.role} role`
      : `You cannot change or remove a member with the ${role.role} role`,
    `It grants ${lacking[0]}, which your own role does not`,
  );
}
