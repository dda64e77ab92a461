// Tokens sent by mail (verification, password reset, magic link): 256 random bits, single use,
// stored as SHA-256, with an expiry. A new token of a purpose replaces the unused older ones.
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import { validationError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { type Mail, sendLater } from '../../providers/mail/mailer.js';
import { emailTokens, type EmailTokenPurpose } from './tables.js';

export const TOKEN_TTL_MS: Record<EmailTokenPurpose, number> = {
  verify_email: 24 * 60 * 60 * 1000,
  reset_password: 60 * 60 * 1000,
  magic_link: 15 * 60 * 1000,
  two_factor_login: 5 * 60 * 1000,
};

const LINK_PATH: Record<EmailTokenPurpose, string> = {
  verify_email: '/verify-email',
  reset_password: '/reset-password',
  magic_link: '/magic-link',
  two_factor_login: '/two-factor',
};

/** Issues a token and returns the link to mail (after the transaction commits). */
export async function issueEmailToken(deps: Deps, tx: Tx, userId: string, email: string, purpose: EmailTokenPurpose): Promise<string> {
  const token = await issueToken(deps, tx, userId, email, purpose);
  return `${deps.config.appOrigin}${LINK_PATH[purpose]}?token=${encodeURIComponent(token)}`;
}

export async function issueToken(deps: Deps, tx: Tx, userId: string, email: string, purpose: EmailTokenPurpose): Promise<string> {
  const now = deps.clock.now();
  const token = randomToken(32);
  await tx.delete(emailTokens).where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, purpose), isNull(emailTokens.usedAt)));
  await tx.insert(emailTokens).values({
    id: newId('tok', now.getTime()),
    userId,
    purpose,
    tokenHash: sha256(token),
    email,
    expiresAt: new Date(now.getTime() + TOKEN_TTL_MS[purpose]),
    createdAt: now,
  });
  return token;
}

/**
 * Consumes a token: one guarded UPDATE, so of two concurrent uses exactly one succeeds.
 * Expired, used, unknown or another purpose's token: 400 (DECISIONS §2).
 */
export async function consumeEmailToken(deps: Deps, tx: Tx, token: string, purpose: EmailTokenPurpose) {
  const now = deps.clock.now();
  const [row] = await tx
    .update(emailTokens)
    .set({ usedAt: now })
    .where(and(eq(emailTokens.tokenHash, sha256(token)), eq(emailTokens.purpose, purpose), isNull(emailTokens.usedAt), gt(emailTokens.expiresAt, now)))
    .returning({ userId: emailTokens.userId, email: emailTokens.email });
  if (!row) throw validationError('Invalid or expired token', 'token: is unknown, already used or expired');
  return row;
}

/**
 * For the "200 whether or not the account exists" routes: the token is issued and mailed after the
 * answer, not awaited, so known and unknown emails answer after the same single lookup and the
 * response time does not tell whether an account exists.
 */
export function mailTokenLater(deps: Deps, user: { id: string; email: string }, purpose: EmailTokenPurpose, mail: (to: string, link: string) => Mail): void {
  setImmediate(() => {
    deps.db
      .transaction((tx) => issueEmailToken(deps, tx, user.id, user.email, purpose))
      .then((link) => sendLater(deps.mailer, deps.logger, mail(user.email, link)))
      .catch((err: Error) => deps.logger.error({ err: { message: err.message }, userId: user.id, purpose }, 'email token not issued'));
  });
}
