// Invitations (docs/api.md#invitations): 7 days, token stored hashed, statuses pending, accepted,
// declined, revoked and expired (a pending one past its time). Members plus pending invitations
// count against the plan's member limit, checked under the organization's row lock.
import { and, count, desc, eq, gt, lte, ne, sql, type SQL } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import type { UserActor } from '../../platform/identity/actor.js';
import { assertKeyMayGrant, type OrgAccess, type RequestContext } from '../../platform/tenancy.js';
import { AppError, authorizationError, conflict, notFound, validationError } from '../../lib/errors.js';
import { pageInfo } from '../../platform/pagination.js';
import { newId } from '../../lib/ids.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { sendCapped } from '../../platform/mail-cap.js';
import { invitationMail } from '../../providers/mail/templates.js';
import { auditChange } from '../../platform/audit/record.js';
import { assertWithinLimit, lockPlanLimits, type PlanLimits } from '../../platform/plans.js';
import { users } from '../../db/tables/users.js';
import { recordEvent } from '../../platform/outbox.js';
import { memberEventData, presentMember } from './service.js';
import {
  invitations,
  memberships,
  organizationRoles,
  organizations,
  type InvitationRow,
  type InvitationStatus,
} from '../../db/tables/organizations.js';
import { BUILT_IN_ROLE_TEXT, isBuiltInRole } from '../../platform/permissions.js';
import { assertWithinCeiling, assignableRole, roleGrants } from '../../platform/roles.js';
import { assertNotOwnerRole } from './members.service.js';
import { transaction } from '../../db/transaction.js';

/** What an invitation that is mailed uses. */
type InvitationMailDeps = Pick<
  Infra,
  'config' | 'logger' | 'clock' | 'db' | 'mailer' | 'mailCap' | 'permissions' | 'metrics'
>;

const VALIDITY_MS = 7 * 24 * 60 * 60 * 1000;

type Inviter = { id: string; email: string; fullName: string | null };

function statusOf(inv: InvitationRow, now: Date): InvitationStatus {
  return inv.status === 'pending' && inv.expiresAt <= now ? 'expired' : inv.status;
}

const present = (inv: InvitationRow, by: Inviter, now: Date) => ({
  id: inv.id,
  organizationId: inv.organizationId,
  email: inv.email,
  role: inv.role,
  invitedBy: { id: by.id, email: by.email, fullName: by.fullName },
  expiresAt: inv.expiresAt.toISOString(),
  createdAt: inv.createdAt.toISOString(),
  status: statusOf(inv, now),
});

const inviterColumns = { id: users.id, email: users.email, fullName: users.fullName };
const inviteUrl = (deps: Pick<Infra, 'config'>, token: string) =>
  `${deps.config.appOrigin}/invitations/accept?token=${encodeURIComponent(token)}`;

/**
 * Members plus live pending invitations must stay under the plan's limit. Call after
 * lockPlanLimits: the organization's row lock serializes every check-then-insert of a seat.
 */
async function assertSeatAvailable(tx: Tx, organizationId: string, now: Date, limits: PlanLimits) {
  const [m] = await tx.select({ n: count() }).from(memberships).where(eq(memberships.organizationId, organizationId));
  const [i] = await tx
    .select({ n: count() })
    .from(invitations)
    .where(
      and(
        eq(invitations.organizationId, organizationId),
        eq(invitations.status, 'pending'),
        gt(invitations.expiresAt, now),
      ),
    );
  assertWithinLimit(limits.members, (m?.n ?? 0) + (i?.n ?? 0), 'members (members plus pending invitations)');
}

/** docs/api.md#invitations: not to an existing member, not to an email with a live pending invitation (other than `exceptId`). */
async function assertInvitable(tx: Tx, organizationId: string, email: string, now: Date, exceptId?: string) {
  const [member] = await tx
    .select({ id: memberships.id })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.organizationId, organizationId), sql`lower(${users.email}) = ${email}`));
  if (member) throw conflict('This person is already a member', 'email: belongs to a member of this organization');
  const [pending] = await tx
    .select({ id: invitations.id })
    .from(invitations)
    .where(
      and(
        eq(invitations.organizationId, organizationId),
        eq(invitations.email, email),
        eq(invitations.status, 'pending'),
        gt(invitations.expiresAt, now),
        exceptId ? ne(invitations.id, exceptId) : undefined,
      ),
    );
  if (pending) throw conflict('An invitation is already pending for this email', 'email: has a pending invitation');
}

async function mailInvitation(
  deps: Pick<Infra, 'config'>,
  tx: Tx,
  inv: InvitationRow,
  inviter: Inviter,
  token: string,
) {
  // The role as people read it: a custom role by its name, a built-in one by its own.
  const [org] = await tx
    .select({ name: organizations.name, roleName: organizationRoles.name })
    .from(organizations)
    .leftJoin(
      organizationRoles,
      and(eq(organizationRoles.organizationId, organizations.id), eq(organizationRoles.key, inv.role)),
    )
    .where(eq(organizations.id, inv.organizationId));
  return invitationMail(
    deps.config.branding,
    inv.email,
    org?.name ?? 'an organization',
    inviter.fullName ?? inviter.email,
    org?.roleName ?? inv.role,
    inviteUrl(deps, token),
  );
}

export async function createInvitation(
  deps: InvitationMailDeps,
  access: OrgAccess,
  input: { email: string; role: string },
) {
  assertNotOwnerRole(input.role);
  // An API key invites members and viewers only (403 before anything is written).
  assertKeyMayGrant(access, input.role);
  const email = input.email.trim().toLowerCase();
  const now = deps.clock.now();
  const token = randomToken(32);
  const result = await transaction(deps.db, async (tx) => {
    // Conflicts first (a 409 says more than a 402), all under the organization's row lock.
    const limits = await lockPlanLimits(tx, access.organizationId);
    // A custom role of this organization (400 otherwise), within the inviter's own permissions (403).
    assertWithinCeiling(access, await assignableRole(tx, deps.permissions, access.organizationId, input.role), 'give');
    await assertInvitable(tx, access.organizationId, email, now);
    await assertSeatAvailable(tx, access.organizationId, now, limits);
    const [inv] = await tx
      .insert(invitations)
      .values({
        organizationId: access.organizationId,
        id: newId('inv', now.getTime()),
        email,
        role: input.role,
        tokenHash: sha256(token),
        status: 'pending',
        invitedBy: access.actor.userId,
        expiresAt: new Date(now.getTime() + VALIDITY_MS),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const [inviter] = await tx.select(inviterColumns).from(users).where(eq(users.id, access.actor.userId));
    await auditChange(deps, tx, access);
    return { inv: inv!, inviter: inviter!, mail: await mailInvitation(deps, tx, inv!, inviter!, token) };
  });
  sendCapped(deps, 'invitation', result.mail);
  return { invitation: present(result.inv, result.inviter, now), inviteUrl: inviteUrl(deps, token) };
}

export async function listInvitations(
  deps: Pick<Infra, 'clock' | 'db'>,
  access: OrgAccess,
  query: { page: number; pageSize: number; status?: InvitationStatus },
) {
  const now = deps.clock.now();
  const filters: SQL[] = [eq(invitations.organizationId, access.organizationId)];
  if (query.status === 'pending') filters.push(eq(invitations.status, 'pending'), gt(invitations.expiresAt, now));
  else if (query.status === 'expired') filters.push(eq(invitations.status, 'pending'), lte(invitations.expiresAt, now));
  else if (query.status) filters.push(eq(invitations.status, query.status));
  const where = and(...filters);
  const rows = await deps.db
    .select({ inv: invitations, by: inviterColumns })
    .from(invitations)
    .innerJoin(users, eq(users.id, invitations.invitedBy))
    .where(where)
    .orderBy(desc(invitations.createdAt), desc(invitations.id))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  const [totals] = await deps.db.select({ n: count() }).from(invitations).where(where);
  const total = totals?.n ?? 0;
  return { data: rows.map((r) => present(r.inv, r.by, now)), ...pageInfo(total, query.page, query.pageSize) };
}

async function loadInvitation(tx: Tx, organizationId: string, invitationId: string) {
  const [row] = await tx
    .select({ inv: invitations, by: inviterColumns })
    .from(invitations)
    .innerJoin(users, eq(users.id, invitations.invitedBy))
    .where(and(eq(invitations.organizationId, organizationId), eq(invitations.id, invitationId)))
    .for('update', { of: invitations });
  if (!row) throw notFound('Invitation not found');
  return row;
}

const notPending = (status: InvitationStatus) =>
  conflict(`The invitation is ${status}`, 'Only a pending invitation can be changed this way');

export async function revokeInvitation(deps: Pick<Infra, 'clock' | 'db'>, access: OrgAccess, invitationId: string) {
  const now = deps.clock.now();
  return transaction(deps.db, async (tx) => {
    const { inv, by } = await loadInvitation(tx, access.organizationId, invitationId);
    if (inv.status !== 'pending') throw notPending(statusOf(inv, now));
    const [updated] = await tx
      .update(invitations)
      .set({ status: 'revoked', updatedAt: now })
      .where(and(eq(invitations.organizationId, access.organizationId), eq(invitations.id, invitationId)))
      .returning();
    await auditChange(deps, tx, access);
    return present(updated!, by, now);
  });
}

/** A new token and a new 7 days; the old link stops working. An expired invitation can be renewed too. */
export async function resendInvitation(deps: InvitationMailDeps, access: OrgAccess, invitationId: string) {
  const now = deps.clock.now();
  const token = randomToken(32);
  const result = await transaction(deps.db, async (tx) => {
    const { inv, by } = await loadInvitation(tx, access.organizationId, invitationId);
    // Renewing an admin invitation gives the role as much as sending it: not through an API key, nor
    // by a person whose own permissions do not cover the role.
    assertKeyMayGrant(access, inv.role);
    assertWithinCeiling(access, await roleGrants(tx, deps.permissions, access.organizationId, inv.role), 'give');
    if (inv.status !== 'pending') throw notPending(statusOf(inv, now));
    // An expired invitation no longer holds a seat, nor blocks a new invitation to its email:
    // renewing it takes a seat again and must not duplicate a newer invitation or a membership.
    if (inv.expiresAt <= now) {
      const limits = await lockPlanLimits(tx, access.organizationId);
      await assertInvitable(tx, access.organizationId, inv.email, now, inv.id);
      await assertSeatAvailable(tx, access.organizationId, now, limits);
    }
    const [updated] = await tx
      .update(invitations)
      .set({ tokenHash: sha256(token), expiresAt: new Date(now.getTime() + VALIDITY_MS), updatedAt: now })
      .where(and(eq(invitations.organizationId, access.organizationId), eq(invitations.id, invitationId)))
      .returning();
    await auditChange(deps, tx, access);
    return { inv: updated!, by, mail: await mailInvitation(deps, tx, updated!, by, token) };
  });
  sendCapped(deps, 'invitation', result.mail);
  return { invitation: present(result.inv, result.by, now), inviteUrl: inviteUrl(deps, token) };
}

const invalidToken = () =>
  validationError('Invalid or expired invitation', 'token: is unknown, expired, revoked or already used');

async function findByToken(deps: Pick<Infra, 'clock' | 'db'>, token: string) {
  const [inv] = await deps.db
    .select()
    .from(invitations)
    .where(eq(invitations.tokenHash, sha256(token)));
  if (!inv || statusOf(inv, deps.clock.now()) !== 'pending') throw invalidToken();
  return inv;
}

/**
 * Joins the organization. The caller's verified email must be the invited one. The guarded
 * pending → accepted update makes two concurrent accepts create one membership.
 */
export async function acceptInvitation(
  deps: Pick<Infra, 'clock' | 'db'>,
  actor: UserActor,
  token: string,
  request: RequestContext,
) {
  return join(deps, actor, await findByToken(deps, token), request);
}

async function join(deps: Pick<Infra, 'clock' | 'db'>, actor: UserActor, inv: InvitationRow, request: RequestContext) {
  const [user] = await deps.db.select().from(users).where(eq(users.id, actor.userId));
  if (!user || user.email.toLowerCase() !== inv.email) {
    throw authorizationError(
      'This invitation was sent to another email address',
      'Sign in with the invited email address to accept it',
    );
  }
  if (!user.emailVerifiedAt)
    throw new AppError(
      'EMAIL_NOT_VERIFIED',
      'Email address not verified',
      'Verify your email address before accepting the invitation',
    );
  const now = deps.clock.now();
  return transaction(deps.db, async (tx) => {
    const [claimed] = await tx
      .update(invitations)
      .set({ status: 'accepted', updatedAt: now })
      .where(
        and(
          eq(invitations.organizationId, inv.organizationId),
          eq(invitations.id, inv.id),
          eq(invitations.status, 'pending'),
          gt(invitations.expiresAt, now),
        ),
      )
      .returning({ id: invitations.id });
    if (!claimed) throw invalidToken();
    const [existing] = await tx
      .select({ id: memberships.id })
      .from(memberships)
      .where(and(eq(memberships.organizationId, inv.organizationId), eq(memberships.userId, user.id)));
    if (existing) throw conflict('You are already a member of this organization');
    const [member] = await tx
      .insert(memberships)
      .values({
        organizationId: inv.organizationId,
        id: newId('mbr', now.getTime()),
        userId: user.id,
        role: inv.role,
        joinedAt: now,
        updatedAt: now,
      })
      .returning();
    await recordEvent(deps, tx, inv.organizationId, 'member.added', memberEventData(member!, user.email));
    await auditChange(deps, tx, { organizationId: inv.organizationId, actor: { type: 'user', id: user.id }, request });
    return presentMember(member!, user);
  });
}

export async function declineInvitation(deps: Pick<Infra, 'clock' | 'db'>, token: string) {
  const inv = await findByToken(deps, token);
  const [done] = await deps.db
    .update(invitations)
    .set({ status: 'declined', updatedAt: deps.clock.now() })
    .where(
      and(
        eq(invitations.organizationId, inv.organizationId),
        eq(invitations.id, inv.id),
        eq(invitations.status, 'pending'),
      ),
    )
    .returning({ id: invitations.id });
  if (!done) throw invalidToken();
}

// The invitee's side (docs/api.md#invitation-preview): what an invitation offers before joining, by
// its link's token (no account needed) or, signed in, among the pending invitations to one's
// verified address, which can be accepted or declined there without the link.

/** An invitation as its invitee sees it: the organization, who invited, the role by its name. */
async function inviteeView(deps: Pick<Infra, 'clock' | 'db'>, where: SQL) {
  const now = deps.clock.now();
  const rows = await deps.db
    .select({
      id: invitations.id,
      email: invitations.email,
      role: invitations.role,
      expiresAt: invitations.expiresAt,
      orgId: organizations.id,
      orgName: organizations.name,
      logoUrl: organizations.logoUrl,
      inviter: users.fullName,
      roleName: organizationRoles.name,
    })
    .from(invitations)
    .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
    .leftJoin(users, eq(users.id, invitations.invitedBy))
    .leftJoin(
      organizationRoles,
      and(
        eq(organizationRoles.organizationId, invitations.organizationId),
        eq(organizationRoles.key, invitations.role),
      ),
    )
    .where(and(where, eq(invitations.status, 'pending'), gt(invitations.expiresAt, now)))
    .orderBy(desc(invitations.createdAt), desc(invitations.id));
  return rows.map((r) => ({
    id: r.id,
    organization: { id: r.orgId, name: r.orgName, logoUrl: r.logoUrl },
    inviter: { fullName: r.inviter },
    email: r.email,
    role: r.role,
    roleName: r.roleName ?? (isBuiltInRole(r.role) ? BUILT_IN_ROLE_TEXT[r.role][0] : r.role),
    expiresAt: r.expiresAt.toISOString(),
  }));
}

const invitationNotFound = () => notFound('Invitation not found');

/** A pending invitation by its link's token; unknown, expired, used or revoked: 404. */
export async function previewInvitation(deps: Pick<Infra, 'clock' | 'db'>, token: string) {
  const [view] = await inviteeView(deps, eq(invitations.tokenHash, sha256(token)));
  if (!view) throw invitationNotFound();
  const { id: _id, ...preview } = view;
  return preview;
}

/** The caller's address if verified (invitations go to addresses the caller proved), else null. */
async function verifiedEmailOf(deps: Pick<Infra, 'db'>, userId: string): Promise<string | null> {
  const [user] = await deps.db
    .select({ email: users.email, verifiedAt: users.emailVerifiedAt })
    .from(users)
    .where(eq(users.id, userId));
  return user?.verifiedAt ? user.email.toLowerCase() : null;
}

/** The pending invitations to the caller's verified address, newest first (none while it is unverified). */
export async function listMyInvitations(deps: Pick<Infra, 'clock' | 'db'>, actor: UserActor) {
  const email = await verifiedEmailOf(deps, actor.userId);
  return { invitations: email ? await inviteeView(deps, eq(invitations.email, email)) : [] };
}

/** One of them by id: another address's, or one no longer pending, is not found. */
async function myPending(
  deps: Pick<Infra, 'clock' | 'db'>,
  actor: UserActor,
  invitationId: string,
): Promise<InvitationRow> {
  const email = await verifiedEmailOf(deps, actor.userId);
  const [inv] = email
    ? await deps.db
        .select()
        .from(invitations)
        .where(and(eq(invitations.id, invitationId), eq(invitations.email, email)))
    : [];
  if (!inv || statusOf(inv, deps.clock.now()) !== 'pending') throw invitationNotFound();
  return inv;
}

export async function acceptMyInvitation(
  deps: Pick<Infra, 'clock' | 'db'>,
  actor: UserActor,
  invitationId: string,
  request: RequestContext,
) {
  return join(deps, actor, await myPending(deps, actor, invitationId), request);
}

export async function declineMyInvitation(deps: Pick<Infra, 'clock' | 'db'>, actor: UserActor, invitationId: string) {
  const inv = await myPending(deps, actor, invitationId);
  const [done] = await deps.db
    .update(invitations)
    .set({ status: 'declined', updatedAt: deps.clock.now() })
    .where(
      and(
        eq(invitations.organizationId, inv.organizationId),
        eq(invitations.id, inv.id),
        eq(invitations.status, 'pending'),
      ),
    )
    .returning({ id: invitations.id });
  if (!done) throw invitationNotFound();
}
