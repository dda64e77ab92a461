// The signed-in user's own account: profile and sessions (docs/api.md#users). Credentials (the
// password, deactivation) belong to auth/account.service.ts.
import { and, count, desc, eq, gt, inArray, isNull } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { UserActor } from '../../platform/identity/actor.js';
import { notFound, validationError } from '../../lib/errors.js';
import { pageInfo } from '../../platform/pagination.js';
import { sessions } from '../../db/tables/auth.js';
import { users, type Preferences, type UserRow } from '../../db/tables/users.js';
import { transaction } from '../../db/transaction.js';

/** What the session list and its revocations use. */
type SessionListDeps = Pick<Infra, 'clock' | 'db' | 'sessions'>;

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

export async function getMe(deps: Pick<Infra, 'userCache'>, actor: UserActor) {
  // The guard has just read the row through the same cache (and refused an inactive account).
  const user = actor.user ?? (await deps.userCache.get(actor.userId));
  if (!user || !user.isActive) throw notFound('User not found');
  return presentUser(user);
}

// IANA zones without an area prefix; other names must be `Area/Location`. ICU also knows Java-style
// aliases (ACT, IST) and SystemV/* names, which are not IANA identifiers.
const AREALESS_ZONES = new Set([
  'UTC',
  'UCT',
  'GMT',
  'CET',
  'EET',
  'MET',
  'WET',
  'EST',
  'MST',
  'HST',
  'EST5EDT',
  'CST6CDT',
  'MST7MDT',
  'PST8PDT',
]);

/**
 * An IANA time zone, in its canonical spelling when only the case differs (`europe/paris` →
 * `Europe/Paris`); a link such as `US/Eastern` stays as chosen. Null when it is not a zone.
 */
function ianaTimeZone(tz: string): string | null {
  // Offsets (+01:00) are not zone names, whatever a newer Intl accepts.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/.test(tz)) return null;
  if (!tz.includes('/') && !AREALESS_ZONES.has(tz.toUpperCase())) return null;
  if (/^systemv\//i.test(tz)) return null;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  if (resolved.toLowerCase() === tz.toLowerCase()) return resolved;
  return tz.includes('/') ? tz : tz.toUpperCase();
}

/** An absolute http(s) URL with a host (`http://` alone passes the `uri` format, not this). */
function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\/[^/?#\s]/i.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

type PreferencesPatch = Partial<Omit<Preferences, 'notifications'>> & {
  notifications?: Partial<Preferences['notifications']>;
};

export async function updateMe(
  deps: Pick<Infra, 'clock' | 'db' | 'userCache'>,
  actor: UserActor,
  input: { fullName?: string; avatarUrl?: string | null; preferences?: PreferencesPatch },
) {
  if (input.fullName !== undefined && !input.fullName.trim())
    throw validationError('Invalid request body', 'fullName: must not be blank');
  let patch = input.preferences;
  if (patch?.timezone !== undefined) {
    const timezone = ianaTimeZone(patch.timezone);
    if (!timezone)
      throw validationError(
        'Invalid request body',
        'preferences.timezone: must be an IANA time zone such as Europe/Paris',
      );
    patch = { ...patch, timezone };
  }
  if (input.avatarUrl !== undefined && input.avatarUrl !== null && !isHttpUrl(input.avatarUrl)) {
    throw validationError('Invalid request body', 'avatarUrl: must be an http or https URL');
  }
  const result = await transaction(deps.db, async (tx, afterCommit) => {
    const [user] = await tx.select().from(users).where(eq(users.id, actor.userId)).for('update');
    if (!user || !user.isActive) throw notFound('User not found');
    const preferences: Preferences = patch
      ? { ...user.preferences, ...patch, notifications: { ...user.preferences.notifications, ...patch.notifications } }
      : user.preferences;
    const [updated] = await tx
      .update(users)
      .set({
        ...(input.fullName !== undefined ? { fullName: input.fullName.trim() } : {}),
        ...(input.avatarUrl !== undefined ? { avatarUrl: input.avatarUrl } : {}),
        preferences,
        updatedAt: deps.clock.now(),
      })
      .where(eq(users.id, actor.userId))
      .returning();
    afterCommit(() => deps.userCache.changed(actor.userId));
    return presentUser(updated!);
  });
  return result;
}

export async function listSessions(deps: SessionListDeps, actor: UserActor, page: number, pageSize: number) {
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
    ...pageInfo(total, page, pageSize),
  };
}

export async function revokeSession(deps: SessionListDeps, actor: UserActor, sessionId: string) {
  if (sessionId === actor.sessionId) {
    throw validationError(
      'The current session cannot be revoked this way',
      'sessionId: is the current session; use POST /auth/logout',
    );
  }
  const [owned] = await deps.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(
      and(
        eq(sessions.id, sessionId),
        eq(sessions.userId, actor.userId),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, deps.clock.now()),
      ),
    );
  if (!owned) throw notFound('Session not found');
  await deps.sessions.revoke(deps.db, [sessionId], 'revoked');
}

/** `revoked` counts the sessions that were active, as the list showed them: an expired one is not signed out. */
export async function revokeAllSessions(deps: SessionListDeps, actor: UserActor) {
  const now = deps.clock.now();
  const ids = await deps.sessions.revokeAllOfUser(deps.db, actor.userId, 'revoked_all');
  // Revocation leaves expiresAt as it was, so the count is exact even after the update.
  const [row] = ids.length
    ? await deps.db
        .select({ n: count() })
        .from(sessions)
        .where(and(inArray(sessions.id, ids), gt(sessions.expiresAt, now)))
    : [{ n: 0 }];
  return { revoked: row?.n ?? 0 };
}
