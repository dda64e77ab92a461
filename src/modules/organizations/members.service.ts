// Members of an organization (docs/api.md#members).
import { and, asc, count, eq, inArray, ne } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import {
  assertKeyMayGrant,
  assertKeyMayManage,
  KEY_MANAGED_ROLES,
  keyManageRefusal,
  type OrgAccess,
} from '../../platform/tenancy.js';
import { authorizationError, notFound, validationError } from '../../lib/errors.js';
import { pageInfo } from '../../platform/pagination.js';
import { revokeKeysOfCreator } from '../../platform/member-keys.js';
import { transaction } from '../../db/transaction.js';
import { auditChange } from '../../platform/audit/record.js';
import { users } from '../../db/tables/users.js';
import { recordEvent } from '../../platform/outbox.js';
import { loadMember, memberEventData, memberUserColumns, presentMember } from './service.js';
import { memberships } from '../../db/tables/organizations.js';
import { assertWithinCeiling, assignableRole, roleGrants } from '../../platform/roles.js';

/** What a change of a member's place uses (their keys go with it). */
type MemberChangeDeps = Pick<Infra, 'clock' | 'db' | 'permissions' | 'apiKeys'>;

/**
 * Why a guarded change of a membership found no row: it is gone (404), it became the owner's (400),
 * or, for an API key, the member became an admin meanwhile (403).
 */
async function memberGone(tx: Tx, access: OrgAccess, memberId: string) {
  const [row] = await tx
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.id, memberId)));
  if (!row) return notFound('Member not found');
  // Through a key the guard failed on an admin's or the owner's row: the key's refusal.
  if (access.actor.type === 'api_key') return keyManageRefusal(row.role);
  return validationError("The owner's membership cannot be changed this way", 'memberId: is the owner');
}

/**
 * The guard of a role change or removal: never the owner's row; through an API key, only a member's
 * or a viewer's (the role may have changed since it was read).
 */
const changeable = (access: OrgAccess) =>
  access.actor.type === 'api_key' ? inArray(memberships.role, [...KEY_MANAGED_ROLES]) : ne(memberships.role, 'owner');

/** 400 for the owner role, which only a transfer gives (checked before anything else, as the schema once did). */
export function assertNotOwnerRole(role: string) {
  if (role === 'owner')
    throw validationError('Invalid request body', 'role: owner is given only by transferring ownership');
}

export async function listMembers(deps: Pick<Infra, 'db'>, access: OrgAccess, page: number, pageSize: number) {
  const inOrg = eq(memberships.organizationId, access.organizationId);
  const rows = await deps.db
    .select({ m: memberships, u: memberUserColumns })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(inOrg)
    .orderBy(asc(memberships.joinedAt), asc(memberships.id))
    .limit(pageSize)
    .offset((page - 1) * pageSize);
  const [totals] = await deps.db.select({ total: count() }).from(memberships).where(inOrg);
  const total = totals?.total ?? 0;
  return { members: rows.map((r) => presentMember(r.m, r.u)), ...pageInfo(total, page, pageSize) };
}

/**
 * The owner's role and the caller's own role cannot be changed; nobody becomes owner this
 * way. The role is admin, member, viewer or a custom role of this organization (400 otherwise). A
 * person gives, and changes the role of, only roles within their own permissions (the privilege
 * ceiling: 403); an API key gives only member or viewer, to a member or a viewer. A role that cannot
 * make API keys revokes the keys the person made here, in the same transaction.
 */
export async function updateMemberRole(deps: MemberChangeDeps, access: OrgAccess, memberId: string, role: string) {
  assertNotOwnerRole(role);
  assertKeyMayGrant(access, role);
  return transaction(deps.db, async (tx, afterCommit) => {
    const target = await loadMember(tx, access.organizationId, memberId);
    assertKeyMayManage(access, target.m.role);
    if (target.m.role === 'owner')
      throw validationError("The owner's role cannot be changed", 'memberId: is the owner; transfer ownership instead');
    if (target.m.userId === access.actor.id)
      throw validationError('You cannot change your own role', 'memberId: is your own membership');
    const next = await assignableRole(tx, deps.permissions, access.organizationId, role);
    assertWithinCeiling(access, await roleGrants(tx, deps.permissions, access.organizationId, target.m.role), 'manage');
    assertWithinCeiling(access, next, 'give');
    // Guarded: a concurrent transfer may have made the target owner, a promotion made it admin (for
    // a key), or a removal taken it away, since it was read.
    const [updated] = await tx
      .update(memberships)
      .set({ role, updatedAt: deps.clock.now() })
      .where(
        and(eq(memberships.organizationId, access.organizationId), eq(memberships.id, memberId), changeable(access)),
      )
      .returning();
    if (!updated) throw await memberGone(tx, access, memberId);
    if (target.m.role !== role) {
      await recordEvent(deps, tx, access.organizationId, 'member.updated', {
        ...memberEventData(updated, target.u.email),
        previousRole: target.m.role,
      });
    }
    // Keys live as long as their maker may make them, and reach no further than the maker's role.
    const within = next.permissions.has('api-keys:create') ? next.permissions : undefined;
    await revokeKeysOfCreator(deps, tx, afterCommit, access, updated.userId, 'member_demoted', within);
    await auditChange(deps, tx, access);
    return presentMember(updated, target.u);
  });
}

/**
 * Not the owner; through an API key, only a member or a viewer; for a person, only a member whose
 * role is within their own permissions. The person's API keys here are revoked with the membership.
 */
export async function removeMember(deps: MemberChangeDeps, access: OrgAccess, memberId: string): Promise<void> {
  await transaction(deps.db, async (tx, afterCommit) => {
    const target = await loadMember(tx, access.organizationId, memberId);
    assertKeyMayManage(access, target.m.role);
    if (target.m.role === 'owner')
      throw validationError('The owner cannot be removed', 'memberId: is the owner; transfer ownership first');
    assertWithinCeiling(access, await roleGrants(tx, deps.permissions, access.organizationId, target.m.role), 'manage');
    // Guarded and counted: of concurrent removals (or a removal and a leave) one deletes and records
    // member.removed; and a member who became owner (or, for a key, admin) meanwhile stays.
    const [removed] = await tx
      .delete(memberships)
      .where(
        and(eq(memberships.organizationId, access.organizationId), eq(memberships.id, memberId), changeable(access)),
      )
      .returning();
    if (!removed) throw await memberGone(tx, access, memberId);
    await recordEvent(deps, tx, access.organizationId, 'member.removed', memberEventData(removed, target.u.email));
    await revokeKeysOfCreator(deps, tx, afterCommit, access, removed.userId, 'member_removed');
    await auditChange(deps, tx, access);
  });
}

/** Not the owner. The person's API keys here are revoked with the membership. */
export async function leaveOrganization(
  deps: Pick<Infra, 'clock' | 'db' | 'apiKeys'>,
  access: OrgAccess,
): Promise<void> {
  await transaction(deps.db, async (tx, afterCommit) => {
    const [mine] = await tx
      .select({ m: memberships, u: memberUserColumns })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.userId, access.actor.id)));
    // Removed between the authorization and here (a concurrent removal): not a member any more.
    if (!mine) throw authorizationError('You are not a member of this organization');
    if (mine.m.role === 'owner')
      throw validationError(
        'The owner cannot leave the organization',
        'Transfer ownership first, or delete the organization',
      );
    // Guarded as in removeMember: a concurrent removal, or ownership handed over meanwhile.
    const [left] = await tx
      .delete(memberships)
      .where(
        and(
          eq(memberships.organizationId, access.organizationId),
          eq(memberships.id, mine.m.id),
          ne(memberships.role, 'owner'),
        ),
      )
      .returning();
    if (!left) throw await memberGone(tx, access, mine.m.id);
    await recordEvent(deps, tx, access.organizationId, 'member.removed', memberEventData(left, mine.u.email));
    await revokeKeysOfCreator(deps, tx, afterCommit, access, left.userId, 'member_left');
    await auditChange(deps, tx, access);
  });
}
