// A person's role in an organization and what it grants, read in one query (the membership and, for
// a custom role, its row): for the tokens' org_* claims, GET /auth/session, the permission check, and
// the checks that run again inside a write. Route authorization reads the same join (tenancy.ts).
import { and, eq } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { memberships, organizationRoles, type Role } from '../db/tables/organizations.js';
import type { PermissionCatalogue } from './permissions.js';

export interface MemberRole {
  role: Role;
  permissions: ReadonlySet<string>;
}

/** `userId`'s role in the organization and its permissions; null for a non-member. */
export async function memberRole(db: Db | Tx, catalogue: PermissionCatalogue, organizationId: string, userId: string): Promise<MemberRole | null> {
  const [row] = await db
    .select({ role: memberships.role, custom: organizationRoles.permissions })
    .from(memberships)
    .leftJoin(organizationRoles, and(eq(organizationRoles.organizationId, memberships.organizationId), eq(organizationRoles.key, memberships.role)))
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  if (!row) return null;
  return { role: row.role, permissions: catalogue.grants(row.role, row.custom) };
}

/** A role as the tokens carry it: its key and its permissions, in catalogue order. */
export function claimsOf(catalogue: PermissionCatalogue, organizationId: string, m: MemberRole) {
  return { id: organizationId, role: m.role, permissions: catalogue.list().map((p) => p.key).filter((k) => m.permissions.has(k)) };
}
