// The signed-in user's own record, cached in-process for GET /users/me (the hottest read of the
// API), so it costs no database round trip. Every write that changes what the record shows calls
// `changed` after its commit, which moves the user's version on (providers/cache/versioned.ts): the
// next read on any instance loads the row again.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import type { SharedState } from '../cache/shared-state.js';
import { createVersionedCache } from '../cache/versioned.js';
import { users, type UserRow } from '../../db/tables/users.js';

export function createUserCache(db: Db, versions: SharedState) {
  const cache = createVersionedCache<UserRow>(versions, 'user', { ttlMs: 60_000, maxWeight: 50_000 });
  const byId = db
    .select()
    .from(users)
    .where(eq(users.id, sql.placeholder('id')))
    .prepare('user_by_id');
  const row = async (userId: string): Promise<UserRow | undefined> => (await byId.execute({ id: userId }))[0];

  return {
    /** The user's row, fresh as of its last change; undefined when there is no such user. */
    get: (userId: string): Promise<UserRow | undefined> => cache.get(userId, userId, () => row(userId)),

    /** The user's row as stored now, never from the cache (for checks on its lockout counters). */
    row,

    /** After a committed change to the user's row: every instance reads it again. */
    async changed(userId: string): Promise<void> {
      cache.forget(userId);
      await cache.bump(userId);
    },
  };
}

export type UserCache = ReturnType<typeof createUserCache>;
