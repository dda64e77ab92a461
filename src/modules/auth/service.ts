// Email/password accounts and their sessions (spec §5.1-5.2, DECISIONS §2).
import { and, eq, sql } from 'drizzle-orm';
import { prepared } from '../../db/prepared.js';
import type { Deps } from '../../deps.js';
import { isUniqueViolation } from '../../db/client.js';
import { AppError, authenticationError, conflict } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { sha256 } from '../../lib/secrets.js';
import { sendLater } from '../../providers/mail/mailer.js';
import { resetPasswordMail, verifyEmailMail } from '../../providers/mail/templates.js';
import { defaultPreferences, users, type UserRow } from '../users/tables.js';
import { assertPasswordPolicy } from './passwords.js';
import { consumeEmailToken, issueEmailToken, mailTokenLater } from './email-tokens.js';
import { sessions } from './tables.js';
import { consumeSecondFactor, invalidSecondFactor, twoFactorRequired } from './two-factor.service.js';

export const MAX_FAILED_LOGINS = 5;
export const LOCK_MS = 15 * 60 * 1000;
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
      return issueEmailToken(deps, tx, userId, email, 'verify_email');
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('An account with this email already exists', 'email: is already registered');
    throw err;
  }
  sendLater(deps.mailer, deps.logger, verifyEmailMail(email, link));
  return { userId };
}

export async function verifyEmail(deps: Deps, token: string) {
  const userId = await deps.db.transaction(async (tx) => {
    const { userId, email } = await consumeEmailToken(deps, tx, token, 'verify_email');
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

function lockedError(lockedUntil: Date, now: Date) {
  const retryAfter = Math.max(1, Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000));
  return new AppError(423, 'ACCOUNT_LOCKED', 'Account is temporarily locked after too many failed sign-in attempts', `Try again in ${retryAfter} seconds`, {
    'Retry-After': String(retryAfter),
  });
}

/**
 * One failed attempt, counted atomically. The 5th consecutive failure locks the account for 15
 * minutes; a failure after an expired lock starts a new count.
 */
export async function recordLoginFailure(deps: Deps, userId: string): Promise<void> {
  const now = deps.clock.now();
  const lockUntil = new Date(now.getTime() + LOCK_MS);
  await deps.db.execute(sql`
    update users set
      failed_login_attempts = case when locked_until is not null and locked_until <= ${now.toISOString()}::timestamptz then 1 else failed_login_attempts + 1 end,
      locked_until = case
        when locked_until is not null and locked_until <= ${now.toISOString()}::timestamptz then null
        when failed_login_attempts + 1 >= ${MAX_FAILED_LOGINS} then ${lockUntil.toISOString()}::timestamptz
        else locked_until end
    where id = ${userId}`);
}

export function assertNotLocked(deps: Deps, user: UserRow) {
  const now = deps.clock.now();
  if (user.lockedUntil && user.lockedUntil > now) throw lockedError(user.lockedUntil, now);
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

/** The end of every sign-in method: counter cleared, a new session (under the cap), a token pair. */
export async function startSession(deps: Deps, user: UserRow, meta: ClientMeta) {
  const sessionId = newId('ses', deps.clock.now().getTime());
  const refresh = deps.tokens.signRefresh(user.id, sessionId);
  await deps.sessions.start(sessionId, user.id, meta, refresh.jti, refresh.expiresAt);
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
  if (!(await deps.passwords.verify(user.passwordHash, input.password))) {
    await recordLoginFailure(deps, user.id);
    throw authenticationError(INVALID_CREDENTIALS);
  }
  assertCanSignIn(deps, user);
  await assertSecondFactor(deps, user, input.twoFactorCode);
  return startSession(deps, user, meta);
}

/** The two-factor step of every sign-in method; a wrong code counts toward the lockout. */
export async function assertSecondFactor(deps: Deps, user: UserRow, code: string | undefined) {
  if (!user.twoFactorEnabled || !deps.config.auth.methods.twoFactor) return;
  if (!code) throw twoFactorRequired();
  if (!(await consumeSecondFactor(deps, user.id, code))) {
    await recordLoginFailure(deps, user.id);
    throw invalidSecondFactor();
  }
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

export async function resetPassword(deps: Deps, input: { token: string; newPassword: string }) {
  assertPasswordPolicy(deps.config.auth.passwordPolicy, input.newPassword, 'newPassword');
  const passwordHash = await deps.passwords.hash(input.newPassword);
  const userId = await deps.db.transaction(async (tx) => {
    const { userId } = await consumeEmailToken(deps, tx, input.token, 'reset_password');
    await tx.update(users).set({ passwordHash, failedLoginAttempts: 0, lockedUntil: null, updatedAt: deps.clock.now() }).where(eq(users.id, userId));
    await deps.sessions.revokeAllOfUser(tx, userId, 'password_reset');
    return userId;
  });
  await deps.users.changed(userId);
  return { message: 'Password has been reset' };
}
