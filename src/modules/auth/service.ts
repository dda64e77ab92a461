// Email/password accounts and their sessions (docs/api.md#sign-in-with-email-and-password, docs/api.md#tokens-and-refresh).
import { and, eq, sql } from 'drizzle-orm';
import { prepared } from '../../db/prepared.js';
import type { Infra } from '../../infra.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/client.js';
import { authenticationError, conflict, validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { sha256 } from '../../lib/secrets.js';
import { sendCapped } from '../../platform/mail-cap.js';
import { resetPasswordMail, verifyEmailMail } from '../../providers/mail/templates.js';
import { passkeys } from '../../db/tables/passkeys.js';
import { defaultPreferences, users, type UserRow } from '../../db/tables/users.js';
import { assertPasswordPolicy } from '../../platform/identity/passwords.js';
import { claimUnverifiedAccount, voidSignInTickets } from './claim.js';
import {
  consumeEmailToken,
  issueEmailToken,
  mailTokenLater,
  passwordBinding,
  type TokenMailDeps,
} from './email-tokens.js';
import { sessions } from '../../db/tables/auth.js';
import { transaction } from '../../db/transaction.js';
import { notAMember, organizationClaims } from './active-organization.js';

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export async function findUserByEmail(deps: Pick<Infra, 'db'>, email: string): Promise<UserRow | undefined> {
  const byEmail = prepared(deps.db, 'user_by_email', (db) =>
    db
      .select()
      .from(users)
      .where(sql`lower(${users.email}) = ${sql.placeholder('email')}`)
      .limit(1)
      .prepare('user_by_email'),
  );
  const [row] = await byEmail.execute({ email: normalizeEmail(email) });
  return row;
}

export async function register(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'mailer' | 'mailCap' | 'passwords' | 'metrics'>,
  input: { email: string; password: string; fullName?: string },
) {
  assertPasswordPolicy(deps.config.auth.passwordPolicy, input.password, 'password');
  const email = normalizeEmail(input.email);
  const passwordHash = await deps.passwords.hash(input.password);
  const now = deps.clock.now();
  const userId = newId('usr', now.getTime());
  let link: string;
  try {
    link = await transaction(deps.db, async (tx) => {
      await tx.insert(users).values({
        id: userId,
        email,
        passwordHash,
        fullName: input.fullName ?? null,
        preferences: defaultPreferences,
        createdAt: now,
        updatedAt: now,
      });
      return issueEmailToken(deps, tx, userId, email, 'verify_email', passwordBinding(passwordHash));
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw conflict('An account with this email already exists', 'email: is already registered');
    throw err;
  }
  sendCapped(deps, 'verification', verifyEmailMail(deps.config.branding, email, link));
  return { userId };
}

export const invalidToken = () =>
  validationError('Invalid or expired token', 'token: is unknown, already used or expired');

export async function verifyEmail(deps: Pick<Infra, 'clock' | 'db' | 'userCache'>, token: string) {
  await transaction(deps.db, async (tx, afterCommit) => {
    const { userId, email, binding } = await consumeEmailToken(deps, tx, token, 'verify_email');
    const [user] = await tx
      .select({ passwordHash: users.passwordHash })
      .from(users)
      .where(eq(users.id, userId))
      .for('update');
    // The link verifies the registration that asked for it: once that password changed, the account
    // may be someone else's (a claim by reset), and the link proves nothing about it. Links issued
    // before bindings existed carry none.
    if (!user || (binding !== null && binding !== passwordBinding(user.passwordHash))) throw invalidToken();
    // The link proves the address it was sent to; if the account's email changed since, it proves nothing.
    await tx
      .update(users)
      .set({ emailVerifiedAt: deps.clock.now(), updatedAt: deps.clock.now() })
      .where(and(eq(users.id, userId), sql`lower(${users.email}) = ${email}`, sql`${users.emailVerifiedAt} is null`));
    afterCommit(() => deps.userCache.changed(userId));
  });
}

export async function resendVerification(deps: TokenMailDeps, email: string) {
  const user = await findUserByEmail(deps, email);
  if (user && user.isActive && !user.emailVerifiedAt)
    mailTokenLater(deps, user, 'verify_email', (to, link) => verifyEmailMail(deps.config.branding, to, link));
}

/**
 * A new pair for the session's current refresh token. `organizationId`: a string makes it the active
 * organization (403 for a non-member, before the token is spent), null clears it, absent keeps the
 * session's, cleared if the membership has ended. The claims show the role as it is now.
 */
export async function refresh(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'sessions' | 'tokens' | 'permissions'>,
  refreshToken: string,
  organizationId?: string | null,
) {
  let claims;
  try {
    claims = deps.tokens.verifyRefresh(refreshToken);
  } catch {
    throw authenticationError('Invalid or expired refresh token');
  }
  const now = deps.clock.now();
  const oldHash = sha256(claims.jti);
  // The organization is decided for a token that is the session's current one; any other goes on to
  // the guarded swap, which refuses it (and detects a reuse) as before.
  const [current] = await deps.db
    .select({
      hash: sessions.refreshTokenHash,
      revokedAt: sessions.revokedAt,
      expiresAt: sessions.expiresAt,
      org: sessions.activeOrganizationId,
      amr: sessions.amr,
    })
    .from(sessions)
    .where(and(eq(sessions.id, claims.sessionId), eq(sessions.userId, claims.userId)));
  let organization = null;
  if (current && current.hash === oldHash && !current.revokedAt && current.expiresAt > now) {
    const target = organizationId === undefined ? current.org : organizationId;
    if (target) organization = await organizationClaims(deps, target, claims.userId);
    if (organizationId && !organization) throw notAMember();
  }
  const [user] = await deps.db.select().from(users).where(eq(users.id, claims.userId));
  const next = deps.tokens.signRefresh(claims.userId, claims.sessionId);
  // Signed before the swap: a key that cannot be read fails the refresh with the token unspent.
  const accessToken = user?.isActive
    ? await deps.tokens.signAccess({ user, sessionId: claims.sessionId, amr: current?.amr ?? [], organization })
    : null;
  // The swap is one guarded UPDATE: of concurrent refreshes with one token exactly one matches.
  const swap = deps.db
    .update(sessions)
    .set({
      refreshTokenHash: sha256(next.jti),
      previousTokenHash: oldHash,
      rotatedAt: now,
      lastUsedAt: now,
      expiresAt: next.expiresAt,
      activeOrganizationId: organization?.id ?? null,
    })
    .where(
      and(
        eq(sessions.id, claims.sessionId),
        eq(sessions.userId, claims.userId),
        eq(sessions.refreshTokenHash, oldHash),
        sql`${sessions.revokedAt} is null`,
        sql`${sessions.expiresAt} > ${now.toISOString()}::timestamptz`,
      ),
    )
    .returning({ id: sessions.id });
  let swapped;
  try {
    [swapped] = await swap;
  } catch (err) {
    // The organization was deleted since it was read: the token is not spent.
    if (isForeignKeyViolation(err)) throw notAMember();
    throw err;
  }
  if (!swapped) {
    await handleStaleRefresh(deps, claims.sessionId, claims.userId, oldHash);
    throw authenticationError('Invalid or expired refresh token');
  }
  if (accessToken === null) throw authenticationError('Invalid or expired refresh token');
  return {
    accessToken,
    refreshToken: next.token,
    expiresIn: deps.tokens.accessTtlS,
    organizationId: organization?.id ?? null,
  };
}

/**
 * A validly signed refresh token that is not the session's current one was consumed before. Within
 * the grace after its own rotation it is a benign race (two tabs); otherwise it was replayed, and the
 * whole session is revoked (reuse detection, docs/api.md#tokens-and-refresh).
 */
async function handleStaleRefresh(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'sessions'>,
  sessionId: string,
  userId: string,
  tokenHash: string,
) {
  const [s] = await deps.db
    .select()
    .from(sessions)
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId)));
  if (!s || s.revokedAt) return;
  if (s.refreshTokenHash === tokenHash) return; // the session expired
  const graceMs = deps.config.auth.refreshReuseGraceS * 1000;
  const withinGrace =
    s.previousTokenHash === tokenHash && s.rotatedAt && deps.clock.now().getTime() - s.rotatedAt.getTime() <= graceMs;
  if (withinGrace) return;
  await deps.sessions.revoke(deps.db, [sessionId], 'reuse_detected');
  deps.logger.warn({ sessionId, userId }, 'refresh token reuse detected; session revoked');
}

export async function logout(deps: Pick<Infra, 'db' | 'sessions'>, sessionId: string) {
  await deps.sessions.revoke(deps.db, [sessionId], 'logout');
}

/**
 * Logout without an access token: the session a validly signed refresh token names (this service
 * signed it, so the session is that token's user's) ends, whether the token is its current one or a
 * spent one (replayed to refresh, a spent token would revoke it anyway).
 */
export async function logoutWithRefreshToken(deps: Pick<Infra, 'db' | 'sessions' | 'tokens'>, refreshToken: string) {
  let claims;
  try {
    claims = deps.tokens.verifyRefresh(refreshToken);
  } catch {
    throw authenticationError('Invalid or expired refresh token');
  }
  await logout(deps, claims.sessionId);
}

export async function forgotPassword(deps: TokenMailDeps, email: string) {
  const user = await findUserByEmail(deps, email);
  if (user && user.isActive)
    mailTokenLater(deps, user, 'reset_password', (to, link) => resetPasswordMail(deps.config.branding, to, link));
}

/**
 * A reset proves the address it was mailed to: on an account never verified it claims the account
 * (claim.ts) and verifies the address; otherwise it sets the password, clears the lock, revokes
 * every session, voids the other sign-in tickets and removes the passkeys.
 */
export async function resetPassword(
  deps: Pick<Infra, 'config' | 'clock' | 'db' | 'sessions' | 'userCache' | 'passwords'>,
  input: { token: string; newPassword: string },
) {
  assertPasswordPolicy(deps.config.auth.passwordPolicy, input.newPassword, 'newPassword');
  const passwordHash = await deps.passwords.hash(input.newPassword);
  await transaction(deps.db, async (tx, afterCommit) => {
    const { userId, email } = await consumeEmailToken(deps, tx, input.token, 'reset_password');
    afterCommit(() => deps.userCache.changed(userId));
    if (await claimUnverifiedAccount(deps, tx, userId, email, passwordHash)) return;
    await tx
      .update(users)
      .set({ passwordHash, failedLoginAttempts: 0, lockedUntil: null, updatedAt: deps.clock.now() })
      .where(eq(users.id, userId));
    await deps.sessions.revokeAllOfUser(tx, userId, 'password_reset');
    await voidSignInTickets(tx, userId);
    // A reset is how an owner takes back an account: a passkey someone added with a stolen token
    // would otherwise outlive it (and count as both factors). The owner adds theirs again.
    await tx.delete(passkeys).where(eq(passkeys.userId, userId));
  });
}
