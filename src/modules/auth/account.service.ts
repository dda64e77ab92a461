// What changes an account's credentials or state outside sign-in: the password change, and the
// deactivation an operator makes (docs/api.md#password-change). Both end sessions and void the
// pending sign-in links and tickets, and count wrong passwords toward the sign-in lockout.
import { eq } from 'drizzle-orm';
import { users, type UserRow } from '../../db/tables/users.js';
import { transaction } from '../../db/transaction.js';
import type { Infra } from '../../infra.js';
import { authenticationError, notFound, validationError } from '../../lib/errors.js';
import type { UserActor } from '../../platform/identity/actor.js';
import { assertPasswordPolicy } from '../../platform/identity/passwords.js';
import { voidSignInTickets } from './claim.js';
import { assertNotLocked, releaseCheck, reservedCheck } from './sign-in.js';

async function loadUser(deps: Pick<Infra, 'userCache'>, userId: string): Promise<UserRow> {
  const user = await deps.userCache.row(userId);
  if (!user || !user.isActive) throw notFound('User not found');
  return user;
}

/**
 * Deactivates an account (for an operator's command; no route yet): the flag and the revocation of
 * every session in one transaction, its pending sign-in links and tickets voided, then the cached
 * user moved on, so every token it holds is refused at once on every instance. API keys the person
 * made stay: they belong to the organizations. 404 for an unknown user; deactivating twice is harmless.
 */
export async function deactivateUser(
  deps: Pick<Infra, 'clock' | 'db' | 'sessions' | 'userCache'>,
  userId: string,
): Promise<{ revokedSessions: number }> {
  const revoked = await transaction(deps.db, async (tx, afterCommit) => {
    const [user] = await tx
      .update(users)
      .set({ isActive: false, updatedAt: deps.clock.now() })
      .where(eq(users.id, userId))
      .returning({ id: users.id });
    if (!user) throw notFound('User not found');
    afterCommit(() => deps.userCache.changed(userId));
    const ids = await deps.sessions.revokeAllOfUser(tx, userId, 'deactivated');
    await voidSignInTickets(tx, userId);
    return ids;
  });
  return { revokedSessions: revoked.length };
}

/** A wrong current password answers 401; the same or a weak new password 400; other sessions are revoked. */
export async function changePassword(
  deps: Pick<Infra, 'config' | 'clock' | 'db' | 'sessions' | 'userCache' | 'passwords' | 'checkWaits'>,
  actor: UserActor,
  input: { currentPassword: string; newPassword: string },
) {
  const user = await loadUser(deps, actor.userId);
  // Guessing the current password with a stolen token counts toward the same lockout as sign-in.
  assertNotLocked(deps, user);
  const currentHash = user.passwordHash;
  const reservation = await reservedCheck(
    deps,
    user.id,
    async () => Boolean(currentHash) && deps.passwords.verify(currentHash!, input.currentPassword),
  );
  if (!reservation) throw authenticationError('Current password is incorrect');
  await releaseCheck(deps, reservation);
  if (input.newPassword === input.currentPassword) {
    throw validationError(
      'New password must differ from the current one',
      'newPassword: must differ from currentPassword',
    );
  }
  assertPasswordPolicy(deps.config.auth.passwordPolicy, input.newPassword, 'newPassword');
  const passwordHash = await deps.passwords.hash(input.newPassword);
  await transaction(deps.db, async (tx, afterCommit) => {
    await tx.update(users).set({ passwordHash, updatedAt: deps.clock.now() }).where(eq(users.id, actor.userId));
    afterCommit(() => deps.userCache.changed(actor.userId));
    await deps.sessions.revokeAllOfUser(tx, actor.userId, 'password_changed', actor.sessionId);
    await voidSignInTickets(tx, actor.userId);
  });
}
