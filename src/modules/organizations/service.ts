// Organizations (docs/api.md#organization-routes): create, read, update, delete, transfer, list mine.
import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import { isUniqueViolation } from '../../db/client.js';
import type { UserActor } from '../../platform/identity/actor.js';
import type { OrgAccess, RequestContext } from '../../platform/tenancy.js';
import { authorizationError, conflict, notFound, validationError } from '../../lib/errors.js';
import { pageInfo } from '../../platform/pagination.js';
import { newId } from '../../lib/ids.js';
import { apiKeys } from '../../db/tables/api-keys.js';
import { auditChange } from '../../platform/audit/record.js';
import { users } from '../../db/tables/users.js';
import { recordEvent } from '../../platform/outbox.js';
import {
  invitations,
  memberships,
  organizations,
  type MembershipRow,
  type OrganizationRow,
  type OrgSettings,
} from '../../db/tables/organizations.js';
import { cancelForDeletion } from '../../platform/subscriptions.js';
import { transaction } from '../../db/transaction.js';

export const presentOrg = (o: OrganizationRow) => ({
  id: o.id,
  name: o.name,
  slug: o.slug,
  description: o.description,
  logoUrl: o.logoUrl,
  settings: o.settings,
  createdBy: o.createdBy,
  createdAt: o.createdAt.toISOString(),
  updatedAt: o.updatedAt.toISOString(),
});

type MemberUser = { id: string; email: string; fullName: string | null; avatarUrl: string | null };

export const presentMember = (m: MembershipRow, u: MemberUser) => ({
  id: m.id,
  userId: m.userId,
  organizationId: m.organizationId,
  role: m.role,
  user: { id: u.id, email: u.email, fullName: u.fullName, avatarUrl: u.avatarUrl },
  joinedAt: m.joinedAt.toISOString(),
});

export const memberUserColumns = {
  id: users.id,
  email: users.email,
  fullName: users.fullName,
  avatarUrl: users.avatarUrl,
};

/** A member of this organization with its user, or 404: another tenant's member is not found. */
export async function loadMember(tx: Tx | Infra['db'], organizationId: string, memberId: string) {
  const [row] = await tx
    .select({ m: memberships, u: memberUserColumns })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.id, memberId)));
  if (!row) throw notFound('Member not found');
  return row;
}

export const memberEventData = (m: MembershipRow, email: string) => ({
  memberId: m.id,
  organizationId: m.organizationId,
  userId: m.userId,
  email,
  role: m.role,
});

/**
 * A logo is shown to every member, so it must be an absolute http(s) URL with a host, as a user's
 * avatarUrl: the `uri` format alone lets `javascript:`, `data:` and a bare `http://` through.
 */
function assertLogoUrl(value: string | null | undefined) {
  if (value === undefined || value === null) return;
  let ok = /^https?:\/\/[^/?#\s]/i.test(value);
  try {
    ok &&= new URL(value).hostname !== '';
  } catch {
    ok = false;
  }
  if (!ok) throw validationError('Invalid request body', 'logoUrl: must be an http or https URL');
}

const slugTaken = () => conflict('An organization with this slug already exists', 'slug: is already taken');

export async function createOrganization(
  deps: Pick<Infra, 'clock' | 'db'>,
  actor: UserActor,
  input: { name: string; slug: string; description?: string | null; logoUrl?: string | null },
  request: RequestContext,
) {
  const now = deps.clock.now();
  const org: OrganizationRow = {
    id: newId('org', now.getTime()),
    name: input.name.trim(),
    slug: input.slug,
    description: input.description ?? null,
    logoUrl: input.logoUrl ?? null,
    settings: {},
    plan: 'free',
    createdBy: actor.userId,
    createdAt: now,
    updatedAt: now,
  };
  if (!org.name) throw validationError('Invalid request body', 'name: must not be blank');
  assertLogoUrl(org.logoUrl);
  try {
    await transaction(deps.db, async (tx) => {
      await tx.insert(organizations).values(org);
      await tx.insert(memberships).values({
        organizationId: org.id,
        id: newId('mbr', now.getTime()),
        userId: actor.userId,
        role: 'owner',
        joinedAt: now,
        updatedAt: now,
      });
      // The organization's audit log starts with its creation (a change a user made in it).
      await auditChange(deps, tx, { organizationId: org.id, actor: { type: 'user', id: actor.userId }, request });
    });
  } catch (err) {
    // The unique index settles concurrent creation with the same slug: one wins, the others get 409.
    if (isUniqueViolation(err)) throw slugTaken();
    throw err;
  }
  return presentOrg(org);
}

async function loadOrg(tx: Tx | Infra['db'], organizationId: string) {
  const [org] = await tx.select().from(organizations).where(eq(organizations.id, organizationId));
  if (!org) throw notFound('Organization not found');
  return org;
}

export async function getOrganization(deps: Pick<Infra, 'db'>, access: OrgAccess) {
  return presentOrg(await loadOrg(deps.db, access.organizationId));
}

function mergeSettings(current: OrgSettings, patch: OrgSettings): OrgSettings {
  const out: OrgSettings = { ...current };
  for (const key of ['branding', 'features', 'billing'] as const) {
    if (patch[key] !== undefined) (out as Record<string, unknown>)[key] = { ...current[key], ...patch[key] };
  }
  return out;
}

export async function updateOrganization(
  deps: Pick<Infra, 'clock' | 'db'>,
  access: OrgAccess,
  input: { name?: string; description?: string | null; logoUrl?: string | null; settings?: OrgSettings },
) {
  if (input.name !== undefined && !input.name.trim())
    throw validationError('Invalid request body', 'name: must not be blank');
  assertLogoUrl(input.logoUrl);
  return transaction(deps.db, async (tx) => {
    const [org] = await tx
      .select()
      .from(organizations)
      .where(eq(organizations.id, access.organizationId))
      .for('update');
    if (!org) throw notFound('Organization not found');
    const [updated] = await tx
      .update(organizations)
      .set({
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.logoUrl !== undefined ? { logoUrl: input.logoUrl } : {}),
        ...(input.settings !== undefined ? { settings: mergeSettings(org.settings, input.settings) } : {}),
        updatedAt: deps.clock.now(),
      })
      .where(eq(organizations.id, access.organizationId))
      .returning();
    await auditChange(deps, tx, access);
    return presentOrg(updated!);
  });
}

/**
 * Deletes the organization and, through the foreign keys, everything it owns, its subscription ended
 * at the provider first. The locks come in the order the organization's other writers take theirs,
 * so a race waits instead of deadlocking (a 500 on either side):
 *   1. its pending invitations, by id: accepting one locks the invitation, then (its membership's
 *      foreign key) the organization;
 *   2. its memberships, the caller's first, then the others by id: an ownership transfer locks the
 *      owner's membership, then the heir's; a role change, removal or departure locks one membership,
 *      then the organization (its event and audit entry).
 * Under them the deletion is decided (the organization is still there, the caller still its owner),
 * and only then is the subscription canceled, still holding them: a join or a transfer arriving
 * meanwhile waits and then finds the organization gone; one that came first leaves the deletion
 * refused with the subscription untouched. The provider call holds these locks for its duration.
 */
export async function deleteOrganization(
  deps: Pick<Infra, 'db' | 'apiKeys' | 'payments'>,
  access: OrgAccess,
): Promise<void> {
  const orgId = access.organizationId;
  await transaction(deps.db, async (tx, afterCommit) => {
    await tx
      .select({ id: invitations.id })
      .from(invitations)
      .where(and(eq(invitations.organizationId, orgId), eq(invitations.status, 'pending')))
      .orderBy(invitations.id)
      .for('update');
    const members = await tx
      .select({ userId: memberships.userId, role: memberships.role })
      .from(memberships)
      .where(eq(memberships.organizationId, orgId))
      .orderBy(desc(sql`${memberships.userId} = ${access.actor.id}`), memberships.id)
      .for('update');
    await loadOrg(tx, orgId);
    // Read before the locks (tenancy.ts); an ownership transfer may have committed since.
    if (!members.some((m) => m.userId === access.actor.id && m.role === 'owner')) {
      throw authorizationError('Missing permission org:delete', 'You are no longer the owner of this organization');
    }
    await cancelForDeletion(deps, tx, orgId);
    const keys = await tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.organizationId, orgId));
    await tx.delete(organizations).where(eq(organizations.id, orgId));
    // Its keys are gone with it: cached lookups on every instance forget them too.
    afterCommit(async () => {
      for (const k of keys) await deps.apiKeys.revoked(k.id);
    });
  });
}

export async function transferOwnership(deps: Pick<Infra, 'clock' | 'db'>, access: OrgAccess, memberId: string) {
  return transaction(deps.db, async (tx) => {
    const target = await loadMember(tx, access.organizationId, memberId);
    if (target.m.userId === access.actor.id)
      throw validationError('You already own this organization', 'memberId: is your own membership');
    const [current] = await tx
      .select({ m: memberships, u: memberUserColumns })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(
        and(
          eq(memberships.organizationId, access.organizationId),
          eq(memberships.userId, access.actor.id),
          eq(memberships.role, 'owner'),
        ),
      )
      .for('update', { of: memberships });
    if (!current) throw validationError('Only the owner can transfer ownership');
    const now = deps.clock.now();
    // Demote first: the one-owner index holds at every statement. The old owner becomes admin, who
    // still manages API keys: their keys stay (a later demotion below admin revokes them).
    const [oldOwner] = await tx
      .update(memberships)
      .set({ role: 'admin', updatedAt: now })
      .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.id, current.m.id)))
      .returning();
    const [newOwner] = await tx
      .update(memberships)
      .set({ role: 'owner', updatedAt: now })
      .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.id, target.m.id)))
      .returning();
    // Removed since it was read (a concurrent removal or leave): the demotion above rolls back.
    if (!newOwner) throw notFound('Member not found');
    await recordEvent(deps, tx, access.organizationId, 'member.updated', {
      ...memberEventData(oldOwner!, current.u.email),
      previousRole: 'owner',
    });
    await recordEvent(deps, tx, access.organizationId, 'member.updated', {
      ...memberEventData(newOwner, target.u.email),
      previousRole: target.m.role,
    });
    await auditChange(deps, tx, access);
    return { owner: presentMember(newOwner, target.u), previousOwner: presentMember(oldOwner!, current.u) };
  });
}

export async function listMyOrganizations(deps: Pick<Infra, 'db'>, actor: UserActor, page: number, pageSize: number) {
  const mine = eq(memberships.userId, actor.userId);
  const rows = await deps.db
    .select({ o: organizations, m: memberships })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(mine)
    .orderBy(desc(memberships.joinedAt), desc(memberships.id))
    .limit(pageSize)
    .offset((page - 1) * pageSize);
  const [totals] = await deps.db.select({ total: count() }).from(memberships).where(mine);
  const total = totals?.total ?? 0;
  return {
    organizations: rows.map(({ o, m }) => ({
      id: o.id,
      name: o.name,
      slug: o.slug,
      logoUrl: o.logoUrl,
      role: m.role,
      membershipId: m.id,
      joinedAt: m.joinedAt.toISOString(),
    })),
    ...pageInfo(total, page, pageSize),
  };
}
