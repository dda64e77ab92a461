// The first proof of an address, and what a password reset or change leaves behind
// (docs/security.md, "Pre-account takeover").
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import { users, type UserRow } from '../../db/tables/users.js';
import { backupCodes, emailTokens, oauthAccounts, twoFactor } from '../../db/tables/auth.js';
import { passkeys } from '../../db/tables/passkeys.js';

/**
 * Claims an account whose email was never verified, for whoever just proved the address (a magic
 * link, a password reset, a provider's verified email). Someone may have registered the address
 * ahead of its owner, so everything set up without that proof goes, in the caller's transaction: the
 * password (`passwordHash` replaces it: a reset's new one, else none), two-factor and its backup
 * codes, social links, passkeys, unused mailed tokens, the lockout, and every session. The address
 * becomes verified. Answers the claimed row, or null when the account is verified already, or its
 * email is no longer `email`, the address proven (nothing is then changed).
 */
export async function claimUnverifiedAccount(
  deps: Pick<Infra, 'clock' | 'sessions'>,
  tx: Tx,
  userId: string,
  email: string,
  passwordHash: string | null,
): Promise<UserRow | null> {
  const now = deps.clock.now();
  const [claimed] = await tx
    .update(users)
    .set({
      emailVerifiedAt: now,
      passwordHash,
      twoFactorEnabled: false,
      failedLoginAttempts: 0,
      lockedUntil: null,
      updatedAt: now,
    })
    .where(and(eq(users.id, userId), isNull(users.emailVerifiedAt), sql`lower(${users.email}) = ${email}`))
    .returning();
  if (!claimed) return null;
  await tx.delete(twoFactor).where(eq(twoFactor.userId, userId));
  await tx.delete(backupCodes).where(eq(backupCodes.userId, userId));
  await tx.delete(oauthAccounts).where(eq(oauthAccounts.userId, userId));
  await tx.delete(passkeys).where(eq(passkeys.userId, userId));
  await tx.delete(emailTokens).where(and(eq(emailTokens.userId, userId), isNull(emailTokens.usedAt)));
  await deps.sessions.revokeAllOfUser(tx, userId, 'account_claimed');
  return claimed;
}

/**
 * A new password voids the sign-in tickets still unused: magic links, reset links, two-factor
 * tickets and email-change links asked for before it (whoever holds one may be who the new password
 * is meant to keep out: an email change asked with a leaked password would otherwise still move the
 * account away).
 */
export async function voidSignInTickets(tx: Tx, userId: string): Promise<void> {
  await tx
    .delete(emailTokens)
    .where(
      and(
        eq(emailTokens.userId, userId),
        isNull(emailTokens.usedAt),
        inArray(emailTokens.purpose, ['magic_link', 'reset_password', 'two_factor_login', 'change_email']),
      ),
    );
}
