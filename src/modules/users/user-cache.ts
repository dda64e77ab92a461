// The signed-in user's own record, cached in-process for GET /users/me (the hottest read of the
// API), so it costs no database round trip. Every write that changes what the record shows calls
// `changed` after its commit: the user's version moves on (in Redis with REDIS_URL, so on every
// instance) and the next read loads the row again. A copy is trusted at most CACHE_TTL_MS, which
// also bounds the damage of a change that never got to `changed` (a crash right after the commit).
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import type { RevocationList } from '../../providers/cache/revocations.js';
import { users, type UserRow } from './tables.js';

const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 50_000;
// Versions must outlive every cached copy that could hold the previous one.
const VERSION_TTL_S = (CACHE_TTL_MS / 1000) * 10;

export function createUserCache(db: Db, versions: RevocationList) {
  const cache = new Map<string, { user: UserRow; version: string; at: number }>();
  const byId = db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare('user_by_id');

  return {
    /** The user's row, fresh as of its last change; undefined when there is no such user. */
    async get(userId: string): Promise<UserRow | undefined> {
      const version = await versions.version('user', userId);
      const hit = cache.get(userId);
      if (hit && version !== null && hit.version === version && Date.now() - hit.at < CACHE_TTL_MS) return hit.user;
      // The version is read before the row: a change committed in between moves it on, so this
      // copy will not match on the next read.
      const [user] = await byId.execute({ id: userId });
      if (!user || version === null) {
        cache.delete(userId);
        return user;
      }
      if (cache.size >= CACHE_MAX && !cache.has(userId)) cache.delete(cache.keys().next().value!);
      cache.set(userId, { user, version, at: Date.now() });
      return user;
    },

    /** The user's row as stored now, never from the cache (for checks on its lockout counters). */
    async row(userId: string): Promise<UserRow | undefined> {
      const [user] = await byId.execute({ id: userId });
      return user;
    },

    /** After a committed change to the user's row: every instance reads it again. */
    async changed(userId: string): Promise<void> {
      cache.delete(userId);
      await versions.bump('user', userId, VERSION_TTL_S);
    },
  };
}

export type UserCache = ReturnType<typeof createUserCache>;
