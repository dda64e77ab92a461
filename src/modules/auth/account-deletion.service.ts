// Deleting one's own account (docs/api.md#account-deletion), in one transaction: refused (409) while
// the person owns an organization that has other members; otherwise the organizations where they are
// alone are deleted (their subscriptions canceled first), they leave the others (member.removed, their
// keys there revoked with api_key.revoked), their audit entries lose the address and browser they
// recorded but keep the actor id, and the user row goes with everything hanging from it: sessions,
// passkeys, social links, two-factor, mailed tokens. The address may register again.
import { and, count, eq, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { apiKeys } from '../../db/tables/api-keys.js';
import { subscriptions } from '../../db/tables/billing.js';
import { auditLogs } from '../../db/tables/audit.js';
import { invitations, memberships, organizations } from '../../db/tables/organizations.js';
import { users } from '../../db/tables/users.js';
import { transaction } from '../../db/transaction.js';
import type { Infra } from '../../infra.js';
import { AppError, notFound, validationError } from '../../lib/errors.js';
import { auditChange } from '../../platform/audit/record.js';
import type { UserActor } from '../../platform/identity/actor.js';
import { revokeKeysOfCreator } from '../../platform/member-keys.js';
import { recordEvent } from '../../platform/outbox.js';
import { callProvider, ENDED_STATUSES } from '../../platform/subscriptions.js';
import type { OrgAccess, RequestContext } from '../../platform/tenancy.js';
import { proveIdentity } from './reauthentication.js';

export const ownsSharedOrganization = (slug: string) =>
  new AppError(
    'CONFLICT',
    'You own an organization that has other members',
    `Transfer the ownership of ${slug}, or remove its other members, first`,
  );

/**
 * A deletion always needs its proof (proveIdentity: the password, or for an account without one a
 * two-factor code; a wrong one counts toward the lockout), however recently the session signed in.
 * An account with neither sets a password through a reset first.
 */
const noProof = () =>
  validationError(
    'This account has neither a password nor two-factor',
    'password: set one with a password reset first, then delete the account',
  );

/**
 * The person's memberships with their organization's member count, those rows and their
 * organizations locked: a member joining (its foreign key takes a share lock on the organization) or
 * an ownership transfer (it locks the memberships) waits for the deletion, then finds it done.
 */
async function membershipsOf(tx: Tx, userId: string) {
  const mine = await tx
    .select({ m: memberships, slug: organizations.slug })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(eq(memberships.userId, userId))
    .orderBy(memberships.organizationId)
    .for('update');
  const out = [];
  for (const row of mine) {
    const [c] = await tx
      .select({ n: count() })
      .from(memberships)
      .where(eq(memberships.organizationId, row.m.organizationId));
    out.push({ ...row, members: Number(c?.n ?? 0) });
  }
  return out;
}

/**
 * Ends the live subscription of an organization about to be deleted, at the provider (502 if it
 * cannot: the transaction then rolls back and nothing is deleted). Called once the deletion is
 * decided, with the organization locked, so a refusal never follows a cancellation.
 */
async function cancelSubscription(deps: Pick<Infra, 'payments'>, tx: Tx, organizationId: string) {
  const [sub] = await tx.select().from(subscriptions).where(eq(subscriptions.organizationId, organizationId));
  if (sub?.subscriptionId && !ENDED_STATUSES.has(sub.status))
    await callProvider(() => deps.payments.cancelNow(sub.subscriptionId!));
}

export async function deleteAccount(
  deps: Pick<
    Infra,
    | 'config'
    | 'logger'
    | 'clock'
    | 'db'
    | 'sessions'
    | 'userCache'
    | 'passwords'
    | 'checkWaits'
    | 'apiKeys'
    | 'payments'
  >,
  actor: UserActor,
  input: { password?: string; twoFactorCode?: string },
  request: RequestContext,
): Promise<void> {
  const user = await deps.userCache.row(actor.userId);
  if (!user || !user.isActive) throw notFound('User not found');
  await proveIdentity(deps, user, input, noProof);
  // A quick refusal before anything is canceled at the provider; the transaction checks again.
  const quick = await deps.db
    .select({ slug: organizations.slug })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(
      and(
        eq(memberships.userId, user.id),
        eq(memberships.role, 'owner'),
        sql`(select count(*) from memberships o where o.organization_id = ${memberships.organizationId}) > 1`,
      ),
    )
    .limit(1);
  if (quick[0]) throw ownsSharedOrganization(quick[0].slug);

  await transaction(deps.db, async (tx, afterCommit) => {
    // Pending invitations first, then the memberships and organizations: the order in which accepting
    // an invitation takes its locks (the invitation, then the organization its membership refers to),
    // so a join racing the deletion waits for it, or is waited for, and never deadlocks with it.
    const orgIds = (
      await tx.select({ id: memberships.organizationId }).from(memberships).where(eq(memberships.userId, user.id))
    ).map((r) => r.id);
    if (orgIds.length > 0) {
      await tx
        .select({ id: invitations.id })
        .from(invitations)
        .where(and(inArray(invitations.organizationId, orgIds), eq(invitations.status, 'pending')))
        .orderBy(invitations.organizationId, invitations.id)
        .for('update');
    }
    const mine = await membershipsOf(tx, user.id);
    const shared = mine.find((r) => r.m.role === 'owner' && r.members > 1);
    if (shared) throw ownsSharedOrganization(shared.slug);
    // Decided: the subscriptions of the organizations about to go end at the provider first, as for
    // DELETE /organizations/{orgId}; a join waits on the locks meanwhile.
    for (const { m } of mine) if (m.role === 'owner') await cancelSubscription(deps, tx, m.organizationId);
    const goneKeys: string[] = [];
    for (const { m } of mine) {
      if (m.role === 'owner') {
        // Alone there: the organization goes, and with it (foreign keys) its keys, projects, webhooks and log.
        const keys = await tx
          .select({ id: apiKeys.id })
          .from(apiKeys)
          .where(eq(apiKeys.organizationId, m.organizationId));
        goneKeys.push(...keys.map((k) => k.id));
        await tx.delete(organizations).where(eq(organizations.id, m.organizationId));
        continue;
      }
      const access: OrgAccess = {
        organizationId: m.organizationId,
        actor: { type: 'user', id: user.id, email: user.email, role: m.role, userId: user.id },
        permissions: new Set(),
        request,
      };
      await tx
        .delete(memberships)
        .where(and(eq(memberships.organizationId, m.organizationId), eq(memberships.id, m.id)));
      await recordEvent(deps, tx, m.organizationId, 'member.removed', {
        memberId: m.id,
        organizationId: m.organizationId,
        userId: user.id,
        email: user.email,
        role: m.role,
        reason: 'account_deleted',
      });
      await revokeKeysOfCreator(deps, tx, afterCommit, access, user.id, 'member_left');
      await auditChange(deps, tx, access);
    }
    // Keys they made where they are no longer a member (none should be left: leaving revokes them).
    const orphans = await tx
      .update(apiKeys)
      .set({ isActive: false, revokedAt: deps.clock.now() })
      .where(and(eq(apiKeys.createdBy, user.id), eq(apiKeys.isActive, true)))
      .returning({ id: apiKeys.id });
    goneKeys.push(...orphans.map((k) => k.id));
    // The audit log keeps who did what (the actor id), not where from.
    await tx
      .update(auditLogs)
      .set({ ipAddress: null, userAgent: null })
      .where(and(eq(auditLogs.actorType, 'user'), eq(auditLogs.actorId, user.id)));
    await deps.sessions.revokeAllOfUser(tx, user.id, 'account_deleted');
    await tx.delete(users).where(eq(users.id, user.id));
    afterCommit(async () => {
      for (const id of goneKeys) await deps.apiKeys.revoked(id);
      await deps.userCache.changed(user.id);
    });
  });
}
