// Custom roles (docs/api.md#custom-roles): per organization, granting catalogue permissions other
// than the owner's own, never more than the person making or changing them holds; unchangeable
// built-ins; not deleted while a member or a pending invitation holds them. And the permission check
// another service asks (POST …/permissions/check).
import { and, asc, count, eq } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import { isUniqueViolation } from '../../db/client.js';
import { transaction } from '../../db/transaction.js';
import {
  invitations,
  memberships,
  organizationRoles,
  organizations,
  type OrganizationRoleRow,
} from '../../db/tables/organizations.js';
import { authorizationError, conflict, notFound, validationError } from '../../lib/errors.js';
import { auditChange } from '../../platform/audit/record.js';
import { revokeKeysOfCreator } from '../../platform/member-keys.js';
import { recordEvent } from '../../platform/outbox.js';
import {
  BUILT_IN_ROLE_TEXT,
  BUILT_IN_ROLES,
  isBuiltInRole,
  OWNER_ONLY,
  type PermissionCatalogue,
} from '../../platform/permissions.js';
import { beyondCeiling, memberRole } from '../../platform/roles.js';
import type { OrgAccess } from '../../platform/tenancy.js';

/** What a write of a custom role uses. */
type RoleWriteDeps = Pick<Infra, 'clock' | 'db' | 'permissions'>;

/** The most custom roles one organization may have. */
export const MAX_CUSTOM_ROLES = 50;

const inCatalogueOrder = (catalogue: PermissionCatalogue, permissions: Iterable<string>) => {
  const set = new Set(permissions);
  return catalogue
    .list()
    .map((p) => p.key)
    .filter((k) => set.has(k));
};

const present = (catalogue: PermissionCatalogue, r: OrganizationRoleRow, memberCount: number) => ({
  key: r.key,
  name: r.name,
  description: r.description,
  permissions: inCatalogueOrder(catalogue, catalogue.grants(r.key, r.permissions)),
  builtIn: false,
  memberCount,
});

const eventData = (catalogue: PermissionCatalogue, r: OrganizationRoleRow) => ({
  organizationId: r.organizationId,
  key: r.key,
  name: r.name,
  description: r.description,
  permissions: inCatalogueOrder(catalogue, catalogue.grants(r.key, r.permissions)),
});

async function holders(tx: Tx | Infra['db'], organizationId: string, key: string): Promise<number> {
  const [m] = await tx
    .select({ n: count() })
    .from(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.role, key)));
  return m?.n ?? 0;
}

/**
 * 400 for a permission outside the catalogue or one only the owner holds; 403 for one the caller
 * lacks. Answers the list, deduplicated.
 */
function checkPermissions(deps: Pick<Infra, 'permissions'>, access: OrgAccess, permissions: string[]): string[] {
  for (const p of permissions) {
    if (!deps.permissions.has(p))
      throw validationError(
        'Invalid request body',
        `permissions: "${p}" is not in the permission catalogue (GET /permissions)`,
      );
    if ((OWNER_ONLY as readonly string[]).includes(p))
      throw validationError(
        'Invalid request body',
        `permissions: ${p} belongs to the owner alone and cannot be granted by a role`,
      );
  }
  const lacking = beyondCeiling(access, permissions);
  if (lacking.length > 0)
    throw authorizationError(`You cannot grant ${lacking[0]}`, 'A role can grant only permissions your own role holds');
  return [...new Set(permissions)];
}

/** 400 for a built-in role: they cannot be changed or deleted. */
function assertCustom(key: string) {
  if (isBuiltInRole(key)) throw validationError('Built-in roles cannot be changed', `key: ${key} is a built-in role`);
}

/** The custom role, locked for the change; 404 when the organization has none of this key. */
async function lockRole(tx: Tx, access: OrgAccess, key: string): Promise<OrganizationRoleRow> {
  const [row] = await tx
    .select()
    .from(organizationRoles)
    .where(and(eq(organizationRoles.organizationId, access.organizationId), eq(organizationRoles.key, key)))
    .for('update');
  if (!row) throw notFound('Role not found');
  return row;
}

/** 403 when the role already holds a permission the caller lacks: it is beyond what they may manage. */
function assertManageable(deps: Pick<Infra, 'permissions'>, access: OrgAccess, row: OrganizationRoleRow) {
  const lacking = beyondCeiling(access, deps.permissions.grants(row.key, row.permissions));
  if (lacking.length > 0)
    throw authorizationError(
      `You cannot change the ${row.key} role`,
      `It grants ${lacking[0]}, which your own role does not`,
    );
}

export async function listRoles(deps: Pick<Infra, 'db' | 'permissions'>, access: OrgAccess) {
  const counts = await deps.db
    .select({ role: memberships.role, n: count() })
    .from(memberships)
    .where(eq(memberships.organizationId, access.organizationId))
    .groupBy(memberships.role);
  const held = new Map(counts.map((c) => [c.role, c.n]));
  const custom = await deps.db
    .select()
    .from(organizationRoles)
    .where(eq(organizationRoles.organizationId, access.organizationId))
    .orderBy(asc(organizationRoles.createdAt), asc(organizationRoles.key));
  return {
    roles: [
      ...BUILT_IN_ROLES.map((key) => ({
        key,
        name: BUILT_IN_ROLE_TEXT[key][0],
        description: BUILT_IN_ROLE_TEXT[key][1],
        permissions: inCatalogueOrder(deps.permissions, deps.permissions.grants(key, null)),
        builtIn: true,
        memberCount: held.get(key) ?? 0,
      })),
      ...custom.map((r) => present(deps.permissions, r, held.get(r.key) ?? 0)),
    ],
  };
}

export async function createRole(
  deps: RoleWriteDeps,
  access: OrgAccess,
  input: { key: string; name: string; description?: string | null; permissions: string[] },
) {
  const permissions = checkPermissions(deps, access, input.permissions);
  if (isBuiltInRole(input.key)) throw conflict('A role with this key exists', `key: ${input.key} is a built-in role`);
  const name = input.name.trim();
  if (!name) throw validationError('Invalid request body', 'name: must not be blank');
  const now = deps.clock.now();
  try {
    return await transaction(deps.db, async (tx) => {
      // The organization's row lock serializes the count and the insert of concurrent creations.
      await tx
        .select({ id: organizations.id })
        .from(organizations)
        .where(eq(organizations.id, access.organizationId))
        .for('no key update');
      const [existing] = await tx
        .select({ n: count() })
        .from(organizationRoles)
        .where(eq(organizationRoles.organizationId, access.organizationId));
      if ((existing?.n ?? 0) >= MAX_CUSTOM_ROLES)
        throw conflict(
          'Too many custom roles',
          `An organization has at most ${MAX_CUSTOM_ROLES} custom roles; delete one first`,
        );
      const [row] = await tx
        .insert(organizationRoles)
        .values({
          organizationId: access.organizationId,
          key: input.key,
          name,
          description: input.description ?? null,
          permissions,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      await recordEvent(deps, tx, access.organizationId, 'role.created', eventData(deps.permissions, row!));
      await auditChange(deps, tx, access);
      return present(deps.permissions, row!, 0);
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw conflict('A role with this key exists', `key: ${input.key} is taken in this organization`);
    throw err;
  }
}

export async function updateRole(
  deps: Pick<Infra, 'clock' | 'db' | 'permissions' | 'apiKeys'>,
  access: OrgAccess,
  key: string,
  input: { name?: string; description?: string | null; permissions?: string[] },
) {
  assertCustom(key);
  const permissions = input.permissions === undefined ? undefined : checkPermissions(deps, access, input.permissions);
  const name = input.name?.trim();
  if (name === '') throw validationError('Invalid request body', 'name: must not be blank');
  return transaction(deps.db, async (tx, afterCommit) => {
    const before = await lockRole(tx, access, key);
    assertManageable(deps, access, before);
    const [row] = await tx
      .update(organizationRoles)
      .set({
        ...(name !== undefined ? { name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(permissions !== undefined ? { permissions } : {}),
        updatedAt: deps.clock.now(),
      })
      .where(and(eq(organizationRoles.organizationId, access.organizationId), eq(organizationRoles.key, key)))
      .returning();
    const was = deps.permissions.grants(key, before.permissions);
    const now = deps.permissions.grants(key, row!.permissions);
    // Keys live as long as their maker may make them, and reach no further than the maker's role: a
    // role that loses api-keys:create takes its holders' keys, one that loses a permission takes the
    // keys whose scopes reach it.
    if (was.has('api-keys:create') && [...was].some((p) => !now.has(p))) {
      const held = await tx
        .select({ userId: memberships.userId })
        .from(memberships)
        .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.role, key)))
        .orderBy(asc(memberships.userId));
      const within = now.has('api-keys:create') ? now : undefined;
      for (const h of held) await revokeKeysOfCreator(deps, tx, afterCommit, access, h.userId, 'role_changed', within);
    }
    const changed =
      row!.name !== before.name ||
      row!.description !== before.description ||
      [...was].sort().join() !== [...now].sort().join();
    if (changed) {
      await recordEvent(deps, tx, access.organizationId, 'role.updated', {
        ...eventData(deps.permissions, row!),
        previousPermissions: inCatalogueOrder(deps.permissions, was),
      });
    }
    await auditChange(deps, tx, access);
    return present(deps.permissions, row!, await holders(tx, access.organizationId, key));
  });
}

export async function deleteRole(deps: RoleWriteDeps, access: OrgAccess, key: string): Promise<void> {
  assertCustom(key);
  await transaction(deps.db, async (tx) => {
    const row = await lockRole(tx, access, key);
    assertManageable(deps, access, row);
    await tx
      .delete(organizationRoles)
      .where(and(eq(organizationRoles.organizationId, access.organizationId), eq(organizationRoles.key, key)));
    // Counted after the delete: an assignment that read the role (under its share lock) has committed
    // by now and is counted; a later one finds no role (role changes and invitations: 400).
    const members = await holders(tx, access.organizationId, key);
    const [inv] = await tx
      .select({ n: count() })
      .from(invitations)
      .where(
        and(
          eq(invitations.organizationId, access.organizationId),
          eq(invitations.role, key),
          eq(invitations.status, 'pending'),
        ),
      );
    const pending = inv?.n ?? 0;
    if (members + pending > 0) {
      throw conflict(
        'The role is in use',
        `key: ${key} is held by ${members} member(s) and ${pending} pending invitation(s); give them another role first`,
      );
    }
    await recordEvent(deps, tx, access.organizationId, 'role.deleted', eventData(deps.permissions, row));
    await auditChange(deps, tx, access);
  });
}

/** What `userId`'s role here grants of `permissions`: all false for a non-member. 400 for a key outside the catalogue. */
export async function checkMemberPermissions(
  deps: Pick<Infra, 'db' | 'permissions'>,
  access: OrgAccess,
  input: { userId: string; permissions: string[] },
) {
  for (const p of input.permissions) {
    if (!deps.permissions.has(p))
      throw validationError(
        'Invalid request body',
        `permissions: "${p}" is not in the permission catalogue (GET /permissions)`,
      );
  }
  const m = await memberRole(deps.db, deps.permissions, access.organizationId, input.userId);
  return {
    userId: input.userId,
    role: m?.role ?? null,
    allowed: Object.fromEntries(input.permissions.map((p) => [p, m ? m.permissions.has(p) : false])),
  };
}

export const catalogue = (deps: Pick<Infra, 'permissions'>) => ({
  permissions: deps.permissions.list().map((p) => ({ key: p.key, builtIn: p.builtIn })),
});
