// Database sessions behind the tokens. An access token is valid only while its session is active
// (docs/api.md#bearer-access-tokens), so every authenticated request asks `isActive`: the revocation list first (shared
// through Redis when configured), then a short-lived in-process cache, then one prepared
// primary-key select. `lastUsedAt` is batched: touches are kept in memory and written together.
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Config } from '../../config.js';
import type { Db, Tx } from '../../db/client.js';
import { prepareRaw } from '../../db/prepared.js';
import type { Clock } from '../../lib/clock.js';
import { sha256 } from '../../lib/secrets.js';
import type { SharedState } from '../cache/shared-state.js';
import { type AuthMethod, sessions } from '../../db/tables/auth.js';

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 100_000;
const TOUCH_FLUSH_MS = 15_000;

export type RevokeReason =
  | 'logout'
  | 'revoked'
  | 'revoked_all'
  | 'password_changed'
  | 'password_reset'
  | 'reuse_detected'
  | 'session_cap'
  | 'account_claimed'
  | 'deactivated'
  | 'account_deleted';

interface Cached {
  userId: string;
  expiresAt: number;
  cachedAt: number;
}

export function createSessionStore(db: Db, config: Config, clock: Clock, shared: SharedState) {
  const cache = new Map<string, Cached>();
  const touches = new Map<string, Date>();
  // The sessions in `touches` of each user, so a login finds its user's without a scan.
  const touchedByUser = new Map<string, Set<string>>();
  // An access token outlives its session's revocation by at most its own lifetime.
  const revocationTtlS = config.auth.accessTtlS + 60;

  const byId = db
    .select({ userId: sessions.userId, expiresAt: sessions.expiresAt, revokedAt: sessions.revokedAt })
    .from(sessions)
    .where(eq(sessions.id, sql.placeholder('id')))
    .prepare('session_by_id');
  const p = (name: string) => sql.placeholder(name);
  const startStatement = prepareRaw(
    db,
    'session_start',
    sql`select id from tenantry_start_session(${p('id')}, ${p('userId')}, ${p('hash')}, ${p('userAgent')}, ${p('ip')},
      ${p('now')}::timestamptz, ${p('expiresAt')}::timestamptz, ${p('touched')}::json, ${p('keep')}::integer,
      ${p('amr')}::text[], ${p('organizationId')}::text) as id`,
  );

  async function markRevoked(ids: string[]) {
    for (const id of ids) cache.delete(id);
    await shared.revoke('session', ids, revocationTtlS);
  }

  async function flushTouches(): Promise<void> {
    if (touches.size === 0) return;
    const batch = [...touches.entries()];
    touches.clear();
    touchedByUser.clear();
    const values = sql.join(
      batch.map(([id, at]) => sql`(${id}, ${at.toISOString()}::timestamptz)`),
      sql`, `,
    );
    await db.execute(
      sql`update sessions as s set last_used_at = v.at from (values ${values}) as v(id, at) where s.id = v.id and s.last_used_at < v.at`,
    );
  }

  const timer = setInterval(() => {
    flushTouches().catch(() => {
      // The database is unreachable: these touches are only recency hints; the next flush retries newer ones.
    });
  }, TOUCH_FLUSH_MS);
  timer.unref();

  return {
    async isActive(sessionId: string, userId: string): Promise<boolean> {
      const revoked = await shared.isRevoked('session', sessionId);
      if (revoked === true) return false;
      const now = clock.now().getTime();
      const hit = cache.get(sessionId);
      // A cached expiry may be stale (a refresh extends it), so only a live entry is trusted.
      if (hit && revoked === false && Date.now() - hit.cachedAt < CACHE_TTL_MS && hit.expiresAt > now) {
        return hit.userId === userId;
      }
      const [row] = await byId.execute({ id: sessionId });
      if (!row || row.revokedAt) return false;
      if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
      cache.set(sessionId, { userId: row.userId, expiresAt: row.expiresAt.getTime(), cachedAt: Date.now() });
      return row.userId === userId && row.expiresAt.getTime() > now;
    },

    touch(sessionId: string, userId: string): void {
      touches.set(sessionId, clock.now());
      let mine = touchedByUser.get(userId);
      if (!mine) touchedByUser.set(userId, (mine = new Set()));
      mine.add(sessionId);
    },

    flushTouches,

    /**
     * A new session for a sign-in, in one round trip (tenantry_start_session, migration 0013): the
     * user row is locked so parallel sign-ins count each other, and beyond the cap the least
     * recently used sessions are revoked, read after the lock so every session a parallel sign-in
     * committed before it counts. (The sign-in has ended its lockout check first: auth/sign-in.ts.)
     */
    async start(
      id: string,
      userId: string,
      meta: { userAgent: string | null; ipAddress: string | null },
      refreshJti: string,
      expiresAt: Date,
      amr: readonly AuthMethod[],
      organizationId: string | null,
    ) {
      // Recency counts the touches not yet written (a session used since the last flush is not the
      // least recently used).
      const pending: Array<{ id: string; at: string }> = [];
      for (const sid of touchedByUser.get(userId) ?? []) {
        const at = touches.get(sid);
        if (at) pending.push({ id: sid, at: at.toISOString() });
      }
      const { rows } = await startStatement.execute({
        id,
        userId,
        hash: sha256(refreshJti),
        userAgent: meta.userAgent?.slice(0, 512) ?? null,
        ip: meta.ipAddress,
        now: clock.now().toISOString(),
        expiresAt: expiresAt.toISOString(),
        touched: JSON.stringify(pending),
        keep: config.auth.maxSessions - 1,
        amr: `{${amr.join(',')}}`,
        organizationId,
      });
      await markRevoked(rows.map((r) => r.id as string));
    },

    /**
     * When the live session last proved its person (its sign-in or a re-authentication; a refresh
     * is neither), or null when it is not the user's or no longer active.
     */
    async authenticatedAt(sessionId: string, userId: string): Promise<Date | null> {
      const [row] = await db
        .select({ at: sessions.authenticatedAt })
        .from(sessions)
        .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)));
      return row?.at ?? null;
    },

    /** The session proved its person again, now. Answers the time, or null when it is no longer active. */
    async reauthenticated(sessionId: string, userId: string): Promise<Date | null> {
      const now = clock.now();
      const [row] = await db
        .update(sessions)
        .set({ authenticatedAt: now })
        .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
        .returning({ id: sessions.id });
      return row ? now : null;
    },

    /** Revokes the given sessions (already scoped by the caller) and makes their tokens fail at once. */
    async revoke(tx: Tx | Db, ids: string[], reason: RevokeReason): Promise<string[]> {
      if (ids.length === 0) return [];
      const rows = await tx
        .update(sessions)
        .set({ revokedAt: clock.now(), revokedReason: reason })
        .where(and(inArray(sessions.id, ids), isNull(sessions.revokedAt)))
        .returning({ id: sessions.id });
      const revoked = rows.map((r) => r.id);
      await markRevoked(revoked);
      return revoked;
    },

    /** Every active session of a user, except `keep`. */
    async revokeAllOfUser(tx: Tx | Db, userId: string, reason: RevokeReason, keep?: string): Promise<string[]> {
      const rows = await tx
        .update(sessions)
        .set({ revokedAt: clock.now(), revokedReason: reason })
        .where(
          and(
            eq(sessions.userId, userId),
            isNull(sessions.revokedAt),
            keep ? sql`${sessions.id} <> ${keep}` : undefined,
          ),
        )
        .returning({ id: sessions.id });
      const revoked = rows.map((r) => r.id);
      await markRevoked(revoked);
      return revoked;
    },

    async close(): Promise<void> {
      clearInterval(timer);
      await flushTouches();
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
