// The signed-in user's own account: profile, password, sessions (spec §4.2).
import { and, count, desc, eq, gt, isNull } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { UserActor } from '../../http/actor.js';
import { authenticationError, notFound, validationError } from '../../http/errors.js';
import { assertPasswordPolicy } from '../auth/passwords.js';
import { sessions } from '../auth/tables.js';
import { users, type Preferences, type UserRow } from './tables.js';

export const presentUser = (u: UserRow) => ({
  id: u.id,
  email: u.email,
  emailVerified: u.emailVerifiedAt?.toISOString() ?? null,
  fullName: u.fullName,
  avatarUrl: u.avatarUrl,
  preferences: u.preferences,
  twoFactorEnabled: u.twoFactorEnabled,
  isActive: u.isActive,
  createdAt: u.createdAt.toISOString(),
  updatedAt: u.updatedAt.toISOString(),
});

async function loadUser(deps: Deps, userId: string): Promise<UserRow> {
  const [user] = await deps.db.select().from(users).where(eq(users.id, userId));
  if (!user || !user.isActive) throw notFound('User not found');
  return user;
}

export async function getMe(deps: Deps, actor: UserActor) {
  return presentUser(await loadUser(deps, actor.userId));
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz.includes('/') || tz === 'UTC';
  } catch {
    return false;
  }
}

type PreferencesPatch = Partial<Omit<Preferences, 'notifications'>> & { notifications?: Partial<Preferences['notifications']> };

export async function updateMe(deps: Deps, actor: UserActor, input: { fullName?: string; avatarUrl?: string | null; preferences?: PreferencesPatch }) {
  const patch = input.preferences;
  if (patch?.timezone !== undefined && !isTimeZone(patch.timezone)) {
    throw validationError('Invalid request body', 'preferences.timezone: must be an IANA time zone such as Europe/Paris');
  }
  if (input.avatarUrl && !/^https?:\/\//i.test(input.avatarUrl)) {
    throw validationError('Invalid request body', 'avatarUrl: must be an http or https URL');
  }
  return deps.db.transaction(async (tx) => {
    const [user] = await tx.select().from(users).where(eq(users.id, actor.userId)).for('update');
    if (!user || !user.isActive) throw notFound('User not found');
    const preferences: Preferences = patch
      ? { ...user.preferences, ...patch, notifications: { ...user.preferences.notifications, ...patch.notifications } }
      : user.preferences;
    const [updated] = await tx
      .update(users)
      .set({
        ...(input.fullName !== undefined ? { fullName: input.fullName } : {}),
        ...(input.avatarUrl !== undefined ? { avatarUrl: input.avatarUrl } : {}),
        preferences,
        updatedAt: deps.clock.now(),
      })
      .where(eq(users.id, actor.userId))
      .returning();
    return presentUser(updated!);
  });
}

/** Spec §4.2: wrong current password 401; same or weak new password 400; other sessions revoked. */
export async function changePassword(deps: Deps, actor: UserActor, input: { currentPassword: string; newPassword: string }) {
  const user = await loadUser(deps, actor.userId);
  if (!user.passwordHash || !(await deps.passwords.verify(user.passwordHash, input.currentPassword))) {
    throw authenticationError('Current password is incorrect');
  }
  if (input.newPassword === input.currentPassword) {
    throw validationError('New password must differ from the current one', 'newPassword: must differ from currentPassword');
  }
  assertPasswordPolicy(deps.config.auth.passwordPolicy, input.newPassword, 'newPassword');
  const passwordHash = await deps.passwords.hash(input.newPassword);
  await deps.db.transaction(async (tx) => {
    await tx.update(users).set({ passwordHash, updatedAt: deps.clock.now() }).where(eq(users.id, actor.userId));
    await deps.sessions.revokeAllOfUser(tx, actor.userId, 'password_changed', actor.sessionId);
  });
  return { message: 'Password changed; other sessions have been signed out' };
}

export async function listSessions(deps: Deps, actor: UserActor, page: number, pageSize: number) {
  await deps.sessions.flushTouches();
  const now = deps.clock.now();
  const active = and(eq(sessions.userId, actor.userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now));
  const [rows, [totals]] = [
    await deps.db
      .select()
      .from(sessions)
      .where(active)
      .orderBy(desc(sessions.lastUsedAt), desc(sessions.createdAt), desc(sessions.id))
      .limit(pageSize)
      .offset((page - 1) * pageSize),
    await deps.db.select({ total: count() }).from(sessions).where(active),
  ];
  const total = totals?.total ?? 0;
  return {
    sessions: rows.map((s) => ({
      id: s.id,
      userAgent: s.userAgent,
      ipAddress: s.ipAddress,
      lastUsedAt: s.lastUsedAt.toISOString(),
      expiresAt: s.expiresAt.toISOString(),
      createdAt: s.createdAt.toISOString(),
      isCurrent: s.id === actor.sessionId,
    })),
    total,
    page,
    pageSize,
    hasMore: page * pageSize < total,
  };
}

export async function revokeSession(deps: Deps, actor: UserActor, sessionId: string) {
  if (sessionId === actor.sessionId) {
    throw validationError('The current session cannot be revoked this way', 'sessionId: is the current session; use POST /auth/logout');
  }
  const [owned] = await deps.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, actor.userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, deps.clock.now())));
  if (!owned) throw notFound('Session not found');
  await deps.sessions.revoke(deps.db, [sessionId], 'revoked');
  return { message: 'Session revoked' };
}

export async function revokeAllSessions(deps: Deps, actor: UserActor) {
  const revoked = await deps.sessions.revokeAllOfUser(deps.db, actor.userId, 'revoked_all');
  return { message: 'All sessions revoked', revoked: revoked.length };
}
