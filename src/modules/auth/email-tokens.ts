// Tokens sent by mail (verification, password reset, magic link): 256 random bits, single use,
// stored as SHA-256, with an expiry. A new token of a purpose replaces the unused older ones.
import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import { validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { type Mail, sendLater } from '../../providers/mail/mailer.js';
import { whenAllowed } from '../../platform/mail-cap.js';
import { emailTokens, type EmailTokenPurpose } from '../../db/tables/auth.js';

/** What a mailed token uses (issued, then mailed after the commit, under the mail cap). */
export type TokenMailDeps = Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'mailer' | 'mailCap' | 'metrics'>;

export const TOKEN_TTL_MS: Record<EmailTokenPurpose, number> = {
  verify_email: 24 * 60 * 60 * 1000,
  reset_password: 60 * 60 * 1000,
  magic_link: 15 * 60 * 1000,
  two_factor_login: 5 * 60 * 1000,
  change_email: 24 * 60 * 60 * 1000,
};

const LINK_PATH: Record<EmailTokenPurpose, string> = {
  verify_email: '/verify-email',
  reset_password: '/reset-password',
  magic_link: '/magic-link',
  two_factor_login: '/two-factor',
  change_email: '/confirm-email',
};

/** Two-factor codes checked against one magic link or two-factor ticket before it is dead. */
export const MAX_TOKEN_CODE_CHECKS = 5;

/**
 * What a verification token is bound to: the password of the registration that asked for it. The
 * stored hash has its own salt, so any new password, even the same one typed again, changes it.
 */
export const passwordBinding = (passwordHash: string | null) => sha256(`password:${passwordHash ?? ''}`);

/** Issues a token and returns the link to mail (after the transaction commits). */
export async function issueEmailToken(
  deps: Pick<Infra, 'config' | 'clock'>,
  tx: Tx,
  userId: string,
  email: string,
  purpose: EmailTokenPurpose,
  binding: string | null = null,
): Promise<string> {
  const token = await issueToken(deps, tx, userId, email, purpose, binding);
  return `${deps.config.appOrigin}${LINK_PATH[purpose]}?token=${encodeURIComponent(token)}`;
}

/** Issues a token (replacing the unused ones of the purpose) and returns it. */
export async function issueToken(
  deps: Pick<Infra, 'clock'>,
  tx: Tx,
  userId: string,
  email: string,
  purpose: EmailTokenPurpose,
  binding: string | null = null,
): Promise<string> {
  const now = deps.clock.now();
  const token = randomToken(32);
  await tx
    .delete(emailTokens)
    .where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, purpose), isNull(emailTokens.usedAt)));
  await tx.insert(emailTokens).values({
    id: newId('tok', now.getTime()),
    userId,
    purpose,
    tokenHash: sha256(token),
    email,
    binding,
    expiresAt: new Date(now.getTime() + TOKEN_TTL_MS[purpose]),
    createdAt: now,
  });
  return token;
}

/** The token of the purpose, unused and unexpired at `now`. */
const live = (token: string, purpose: EmailTokenPurpose, now: Date) =>
  and(
    eq(emailTokens.tokenHash, sha256(token)),
    eq(emailTokens.purpose, purpose),
    isNull(emailTokens.usedAt),
    gt(emailTokens.expiresAt, now),
  );

/** A live token whose two-factor code checks are not used up. */
const checkable = (token: string, purpose: EmailTokenPurpose, now: Date) =>
  and(live(token, purpose, now), lt(emailTokens.attempts, MAX_TOKEN_CODE_CHECKS));

const invalidToken = () => validationError('Invalid or expired token', 'token: is unknown, already used or expired');

/**
 * Consumes a token: one guarded UPDATE, so of two concurrent uses exactly one succeeds.
 * Expired, used, unknown or another purpose's token: 400 (docs/api.md#mailed-links).
 */
export async function consumeEmailToken(deps: Pick<Infra, 'clock'>, tx: Tx, token: string, purpose: EmailTokenPurpose) {
  const now = deps.clock.now();
  const [row] = await tx
    .update(emailTokens)
    .set({ usedAt: now })
    .where(live(token, purpose, now))
    .returning({ userId: emailTokens.userId, email: emailTokens.email, binding: emailTokens.binding });
  if (!row) throw invalidToken();
  return row;
}

/**
 * A live token of the purpose, read without consuming it (a missing two-factor code must not burn a
 * link); one whose code checks are used up is dead.
 */
export async function findLiveToken(deps: Pick<Infra, 'clock' | 'db'>, token: string, purpose: EmailTokenPurpose) {
  const now = deps.clock.now();
  const [row] = await deps.db
    .select({ userId: emailTokens.userId, email: emailTokens.email })
    .from(emailTokens)
    .where(checkable(token, purpose, now));
  return row;
}

/**
 * Reserves one two-factor code check against a live token, before the check (as the account's
 * lockout does, lockout.ts): of parallel guesses at most MAX_TOKEN_CODE_CHECKS are checked, then the
 * token is dead whatever the account's own count. False when it is dead, used or expired.
 */
export async function reserveTokenCheck(
  deps: Pick<Infra, 'clock' | 'db'>,
  token: string,
  purpose: EmailTokenPurpose,
): Promise<boolean> {
  const now = deps.clock.now();
  const rows = await deps.db
    .update(emailTokens)
    .set({ attempts: sql`${emailTokens.attempts} + 1` })
    .where(checkable(token, purpose, now))
    .returning({ attempts: emailTokens.attempts });
  return rows.length === 1;
}

const MAIL_KIND = {
  verify_email: 'verification',
  reset_password: 'password_reset',
  magic_link: 'sign_in_link',
} as const;

/**
 * For the "200 whether or not the account exists" routes: the token is issued and mailed after the
 * answer, not awaited, so known and unknown emails answer after the same single lookup and the
 * response time does not tell whether an account exists. Past the address's mail cap
 * (platform/mail-cap.ts) nothing is issued or sent: a new token would void the link mailed last.
 */
export function mailTokenLater(
  deps: TokenMailDeps,
  user: { id: string; email: string; passwordHash: string | null },
  purpose: keyof typeof MAIL_KIND,
  mail: (to: string, link: string) => Mail,
): void {
  const binding = purpose === 'verify_email' ? passwordBinding(user.passwordHash) : null;
  deps.mailer.later(() =>
    whenAllowed(deps, MAIL_KIND[purpose], user.email, () =>
      deps.db
        .transaction((tx) => issueEmailToken(deps, tx, user.id, user.email, purpose, binding))
        .then((link) => sendLater(deps.mailer, deps.logger, mail(user.email, link)))
        .catch((err: Error) =>
          deps.logger.error({ err: { message: err.message }, userId: user.id, purpose }, 'email token not issued'),
        ),
    ),
  );
}
