// Sign-in by a link sent to the account's email (DECISIONS §2): 15 minutes, single use, stored
// hashed. Verifying answers exactly as login does: lockout, two-factor step, session cap.
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import { validationError } from '../../http/errors.js';
import { sha256 } from '../../lib/secrets.js';
import { magicLinkMail } from '../../providers/mail/templates.js';
import { users } from '../users/tables.js';
import { consumeEmailToken, mailTokenLater } from './email-tokens.js';
import { assertNotLocked, assertSecondFactor, type ClientMeta, findUserByEmail, startSession } from './service.js';
import { emailTokens } from './tables.js';

export async function requestMagicLink(deps: Deps, email: string) {
  const user = await findUserByEmail(deps, email);
  if (user && user.isActive) mailTokenLater(deps, user, 'magic_link', magicLinkMail);
  return { message: 'If an account exists for this email, a sign-in link has been sent' };
}

const invalidLink = () => validationError('Invalid or expired token', 'token: is unknown, already used or expired');

export async function verifyMagicLink(deps: Deps, input: { token: string; twoFactorCode?: string }, meta: ClientMeta) {
  const now = deps.clock.now();
  // Read first without consuming: a missing two-factor code must not burn the link.
  const [pending] = await deps.db
    .select({ userId: emailTokens.userId })
    .from(emailTokens)
    .where(and(eq(emailTokens.tokenHash, sha256(input.token)), eq(emailTokens.purpose, 'magic_link'), isNull(emailTokens.usedAt), gt(emailTokens.expiresAt, now)));
  if (!pending) throw invalidLink();
  const [user] = await deps.db.select().from(users).where(eq(users.id, pending.userId));
  if (!user || !user.isActive) throw invalidLink();
  assertNotLocked(deps, user);
  await assertSecondFactor(deps, user, input.twoFactorCode);
  const verified = await deps.db.transaction(async (tx) => {
    const { email } = await consumeEmailToken(deps, tx, input.token, 'magic_link');
    // The link proves the address it was sent to.
    const [row] = await tx
      .update(users)
      .set({ emailVerifiedAt: sql`coalesce(${users.emailVerifiedAt}, ${now.toISOString()}::timestamptz)`, updatedAt: now })
      .where(and(eq(users.id, user.id), sql`lower(${users.email}) = ${email}`))
      .returning();
    return row ?? user;
  });
  await deps.users.changed(user.id);
  return startSession(deps, verified, meta);
}
