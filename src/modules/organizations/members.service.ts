// Members of an organization (spec §4.4, DECISIONS §3).
import { and, asc, count, eq, ne } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import type { OrgAccess } from '../../http/authorize.js';
import { authorizationError, notFound, validationError } from '../../http/errors.js';
import { pageInfo } from '../../http/schemas.js';
import { auditChange } from '../audit/service.js';
import { users } from '../users/tables.js';
import { recordEvent } from '../webhooks/outbox.js';
import { loadMember, memberEventData, memberUserColumns, presentMember } from './service.js';
import { memberships, type Role } from './tables.js';

/** Why a guarded change of a membership found no row: it became the owner's (400), or it is gone (404). */
async function memberGone(tx: Tx, organizationId: string, memberId: string) {
  const [row] = await tx
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.id, memberId)));
  return row ? validationError("The owner's membership cannot be changed this way", 'memberId: is the owner') : notFound('Member not found');
}

export async function listMembers(deps: Deps, access: OrgAccess, page: number, pageSize: number) {
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

/** Spec §4.4: the owner's role and the caller's own role cannot be changed; nobody becomes owner this way. */
export async function updateMemberRole(deps: Deps, access: OrgAccess, memberId: string, role: Exclude<Role, 'owner'>) {
  return deps.db.transaction(async (tx) => {
    const target = await loadMember(tx, access.organizationId, memberId);
    if (target.m.role === 'owner') throw validationError("The owner's role cannot be changed", 'memberId: is the owner; transfer ownership instead');
    if (target.m.userId === access.actor.id) throw validationError('You cannot change your own role', 'memberId: is your own membership');
    // Guarded: a concurrent transfer may have made the target owner, or a removal taken it away,
    // since it was read; the owner's role never changes here.
    const [updated] = await tx
      .update(memberships)
      .set({ role, updatedAt: deps.clock.now() })
      .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.id, memberId), ne(memberships.role, 'owner')))
      .returning();
    if (!updated) throw await memberGone(tx, access.organizationId, memberId);
    if (target.m.role !== role) {
      await recordEvent(deps, tx, access.organizationId, 'member.updated', { ...memberEventData(updated, target.u.email), previousRole: target.m.role });
    }
    await auditChange(deps, tx, access, 200);
    return presentMember(updated, target.u);
  });
}

export async function removeMember(deps: Deps, access: OrgAccess, memberId: string) {
  await deps.db.transaction(async (tx) => {
    const target = await loadMember(tx, access.organizationId, memberId);
    if (target.m.role === 'owner') throw validationError('The owner cannot be removed', 'memberId: is the owner; transfer ownership first');
    // Guarded and counted: of concurrent removals (or a removal and a leave) one deletes and records
    // member.removed; and a member who became owner meanwhile stays.
    const [removed] = await tx
      .delete(memberships)
      .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.id, memberId), ne(memberships.role, 'owner')))
      .returning();
    if (!removed) throw await memberGone(tx, access.organizationId, memberId);
    await recordEvent(deps, tx, access.organizationId, 'member.removed', memberEventData(removed, target.u.email));
    await auditChange(deps, tx, access, 200);
  });
  return { message: 'Member removed' };
}

export async function leaveOrganization(deps: Deps, access: OrgAccess) {
  await deps.db.transaction(async (tx) => {
    const [mine] = await tx
      .select({ m: memberships, u: memberUserColumns })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.userId, access.actor.id)));
    // Removed between the authorization and here (a concurrent removal): not a member any more.
    if (!mine) throw authorizationError('You are not a member of this organization');
    if (mine.m.role === 'owner') throw validationError('The owner cannot leave the organization', 'Transfer ownership first, or delete the organization');
    // Guarded as in removeMember: a concurrent removal, or ownership handed over meanwhile.
    const [left] = await tx
      .delete(memberships)
      .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.id, mine.m.id), ne(memberships.role, 'owner')))
      .returning();
    if (!left) throw await memberGone(tx, access.organizationId, mine.m.id);
    await recordEvent(deps, tx, access.organizationId, 'member.removed', memberEventData(left, mine.u.email));
    await auditChange(deps, tx, access, 200);
  });
  return { message: 'You have left the organization' };
}
