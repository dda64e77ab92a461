// Email/password accounts and their sessions (spec §5.1-5.2, DECISIONS §2).
import { and, eq, sql } from 'drizzle-orm';
import { prepared } from '../../db/prepared.js';
import type { Deps } from '../../deps.js';
import { isUniqueViolation } from '../../db/client.js';
import { AppError, authenticationError, conflict, validationError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { sha256 } from '../../lib/secrets.js';
import { sendLater } from '../../providers/mail/mailer.js';
import { resetPasswordMail, verifyEmailMail } from '../../providers/mail/templates.js';
import { defaultPreferences, users, type UserRow } from '../../db/tables/users.js';
import { assertPasswordPolicy } from './passwords.js';
import { claimUnverifiedAccount, voidSignInTickets } from './claim.js';
import { consumeEmailToken, issueEmailToken, mailTokenLater, passwordBinding, reserveTokenCheck } from './email-tokens.js';
import { lockedUntilError, releaseCheck, type Reservation, reservedCheck } from './lockout.js';
import { sessions } from '../../db/tables/auth.js';
import { consumeSecondFactor, invalidSecondFactor, twoFactorRequired } from './two-factor.service.js';

const INVALID_CREDENTIALS = 'Invalid email or password';

export interface ClientMeta {
  userAgent: string | null;
  ipAddress: string | null;
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export async function findUserByEmail(deps: Deps, email: string): Promise<UserRow | undefined> {
  const byEmail = prepared(deps.db, 'user_by_email', (db) =>
    db.select().from(users).where(sql`lower(${users.email}) = ${sql.placeholder('email')}`).limit(1).prepare('user_by_email'),
  );
  const [row] = await byEmail.execute({ email: normalizeEmail(email) });
  return row;
}

export async function register(deps: Deps, input: { email: string; password: string; fullName?: string }) {
  assertPasswordPolicy(deps.config.auth.passwordPolicy, input.password, 'password');
  const email = normalizeEmail(input.email);
  const passwordHash = await deps.passwords.hash(input.password);
  const now = deps.clock.now();
  const userId = newId('usr', now.getTime());
  let link: string;
  try {
    link = await deps.db.transaction(async (tx) => {
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
    if (isUniqueViolation(err)) throw conflict('An account with this email already exists', 'email: is already registered');
    throw err;
  }
  sendLater(deps.mailer, deps.logger, verifyEmailMail(email, link));
  return { userId };
}

const invalidToken = () => validationError('Invalid or expired token', 'token: is unknown, already used or expired');

export async function verifyEmail(deps: Deps, token: string) {
  const userId = await deps.db.transaction(async (tx) => {
    const { userId, email, binding } = await consumeEmailToken(deps, tx, token, 'verify_email');
    const [user] = await tx.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, userId)).for('update');
    // The link verifies the registration that asked for it: once that password changed, the account
    // may be someone else's (a claim by reset), and the link proves nothing about it. Links issued
    // before bindings existed carry none.
    if (!user || (binding !== null && binding !== passwordBinding(user.passwordHash))) throw invalidToken();
    // The link proves the address it was sent to; if the account's email changed since, it proves nothing.
    await tx
      .update(users)
      .set({ emailVerifiedAt: deps.clock.now(), updatedAt: deps.clock.now() })
      .where(and(eq(users.id, userId), sql`lower(${users.email}) = ${email}`, sql`${users.emailVerifiedAt} is null`));
    return userId;
  });
  await deps.users.changed(userId);
  return { message: 'Email verified' };
}

export async function resendVerification(deps: Deps, email: string) {
  const user = await findUserByEmail(deps, email);
  if (user && user.isActive && !user.emailVerifiedAt) mailTokenLater(deps, user, 'verify_email', verifyEmailMail);
  return { message: 'If the account exists and is not yet verified, a verification email has been sent' };
}

/** A fast refusal from the row already read; the reservation (lockout.ts) is what enforces the lock. */
export function assertNotLocked(deps: Deps, user: UserRow) {
  const now = deps.clock.now();
  if (user.lockedUntil && user.lockedUntil > now) throw lockedUntilError(user.lockedUntil, now);
}

export function assertCanSignIn(deps: Deps, user: UserRow) {
  if (deps.config.auth.requireEmailVerification && !user.emailVerifiedAt) {
    throw new AppError(403, 'EMAIL_NOT_VERIFIED', 'Email address not verified', 'Follow the link in the verification email, or ask for a new one');
  }
}

export const loginUser = (user: UserRow) => ({
  id: user.id,
  email: user.email,
  fullName: user.fullName,
  emailVerified: user.emailVerifiedAt?.toISOString() ?? null,
  twoFactorEnabled: user.twoFactorEnabled,
});

/**
 * The end of every sign-in method: failures cleared (and the sign-in's reserved check ended, if it
 * had one), a new session (under the cap), a token pair.
 */
export async function startSession(deps: Deps, user: UserRow, meta: ClientMeta, reservation: Reservation | null = null) {
  const sessionId = newId('ses', deps.clock.now().getTime());
  const refresh = deps.tokens.signRefresh(user.id, sessionId);
  await deps.sessions.start(sessionId, user.id, meta, refresh.jti, refresh.expiresAt, reservation !== null);
  return {
    accessToken: deps.tokens.signAccess(user, sessionId),
    refreshToken: refresh.token,
    expiresIn: deps.tokens.accessTtlS,
    user: loginUser(user),
  };
}

export async function login(deps: Deps, input: { email: string; password: string; twoFactorCode?: string }, meta: ClientMeta) {
  const user = await findUserByEmail(deps, input.email);
  if (!user || !user.passwordHash || !user.isActive) {
    await deps.passwords.verifyDummy(input.password);
    throw authenticationError(INVALID_CREDENTIALS);
  }
  assertNotLocked(deps, user);
  const passwordHash = user.passwordHash;
  // One reservation covers the password and the second factor: a right password with a wrong code
  // is one failure; a right password without a code, or an unverified email, none.
  let code = false;
  const reservation = await reservedCheck(deps, user.id, async () => {
    if (!(await deps.passwords.verify(passwordHash, input.password))) return false;
    if (!canSignIn(deps, user) || !needsSecondFactor(deps, user) || !input.twoFactorCode) return true;
    code = true;
    return consumeSecondFactor(deps, user.id, input.twoFactorCode);
  });
  if (!reservation) throw code ? invalidSecondFactor() : authenticationError(INVALID_CREDENTIALS);
  if (!canSignIn(deps, user) || (needsSecondFactor(deps, user) && !code)) {
    await releaseCheck(deps, reservation);
    assertCanSignIn(deps, user);
    throw twoFactorRequired();
  }
  return startSession(deps, user, meta, reservation);
}

export const needsSecondFactor = (deps: Deps, user: UserRow) => user.twoFactorEnabled && deps.config.auth.methods.twoFactor;
const canSignIn = (deps: Deps, user: UserRow) => !deps.config.auth.requireEmailVerification || Boolean(user.emailVerifiedAt);

/**
 * The two-factor step of a sign-in whose first factor was a mailed token (magic link, two-factor
 * ticket): one code check reserved on the token and on the account, so neither takes more than 5
 * wrong codes. Answers the account's reservation, for the session start.
 */
export async function checkSecondFactorOnToken(deps: Deps, user: UserRow, token: string, purpose: 'magic_link' | 'two_factor_login', code: string) {
  if (!(await reserveTokenCheck(deps, token, purpose))) throw invalidToken();
  const reservation = await reservedCheck(deps, user.id, () => consumeSecondFactor(deps, user.id, code));
  if (!reservation) throw invalidSecondFactor();
  return reservation;
}

export async function refresh(deps: Deps, refreshToken: string) {
  let claims;
  try {
    claims = deps.tokens.verifyRefresh(refreshToken);
  } catch {
    throw authenticationError('Invalid or expired refresh token');
  }
  const now = deps.clock.now();
  const oldHash = sha256(claims.jti);
  const next = deps.tokens.signRefresh(claims.userId, claims.sessionId);
  // The swap is one guarded UPDATE: of concurrent refreshes with one token exactly one matches.
  const [swapped] = await deps.db
    .update(sessions)
    .set({ refreshTokenHash: sha256(next.jti), previousTokenHash: oldHash, rotatedAt: now, lastUsedAt: now, expiresAt: next.expiresAt })
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
  if (!swapped) {
    await handleStaleRefresh(deps, claims.sessionId, claims.userId, oldHash);
    throw authenticationError('Invalid or expired refresh token');
  }
  const [user] = await deps.db.select().from(users).where(eq(users.id, claims.userId));
  if (!user || !user.isActive) throw authenticationError('Invalid or expired refresh token');
  return { accessToken: deps.tokens.signAccess(user, claims.sessionId), refreshToken: next.token, expiresIn: deps.tokens.accessTtlS };
}

/**
 * A validly signed refresh token that is not the session's current one was consumed before. Within
 * the grace after its own rotation it is a benign race (two tabs); otherwise it was replayed, and the
 * whole session is revoked (reuse detection, DECISIONS §2).
 */
async function handleStaleRefresh(deps: Deps, sessionId: string, userId: string, tokenHash: string) {
  const [s] = await deps.db.select().from(sessions).where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId)));
  if (!s || s.revokedAt) return;
  if (s.refreshTokenHash === tokenHash) return; // the session expired
  const graceMs = deps.config.auth.refreshReuseGraceS * 1000;
  const withinGrace = s.previousTokenHash === tokenHash && s.rotatedAt && deps.clock.now().getTime() - s.rotatedAt.getTime() <= graceMs;
  if (withinGrace) return;
  await deps.sessions.revoke(deps.db, [sessionId], 'reuse_detected');
  deps.logger.warn({ sessionId, userId }, 'refresh token reuse detected; session revoked');
}

export async function logout(deps: Deps, sessionId: string) {
  await deps.sessions.revoke(deps.db, [sessionId], 'logout');
  return { message: 'Logged out' };
}

export async function forgotPassword(deps: Deps, email: string) {
  const user = await findUserByEmail(deps, email);
  if (user && user.isActive) mailTokenLater(deps, user, 'reset_password', resetPasswordMail);
  return { message: 'If an account exists for this email, a password reset link has been sent' };
}

/**
 * A reset proves the address it was mailed to: on an account never verified it claims the account
 * (claim.ts) and verifies the address; otherwise it sets the password, clears the lock, revokes
 * every session and voids the other sign-in tickets.
 */
export async function resetPassword(deps: Deps, input: { token: string; newPassword: string }) {
  assertPasswordPolicy(deps.config.auth.passwordPolicy, input.newPassword, 'newPassword');
  const passwordHash = await deps.passwords.hash(input.newPassword);
  const userId = await deps.db.transaction(async (tx) => {
    const { userId, email } = await consumeEmailToken(deps, tx, input.token, 'reset_password');
    if (await claimUnverifiedAccount(deps, tx, userId, email, passwordHash)) return userId;
    await tx.update(users).set({ passwordHash, failedLoginAttempts: 0, lockedUntil: null, updatedAt: deps.clock.now() }).where(eq(users.id, userId));
    await deps.sessions.revokeAllOfUser(tx, userId, 'password_reset');
    await voidSignInTickets(tx, userId);
    return userId;
  });
  await deps.users.changed(userId);
  return { message: 'Password has been reset' };
}
