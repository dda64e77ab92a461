// The state every instance must share at once: revocations (sessions, API keys), and the versions
// of cached records (a user's profile, an organization's project list) that every instance must
// reload once changed. Without Redis both live in this process (one instance). With REDIS_URL they are written to Redis before the response is sent,
// and each check asks Redis, so a revocation or a change on one instance holds on all of them.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export type RevocationKind = 'session' | 'api_key';
export type VersionKind = 'user' | 'projects';

export interface SharedState {
  revoke(kind: RevocationKind, ids: string[], ttlS: number): Promise<void>;
  /** true or false; null when the shared store could not be asked (the caller checks the database). */
  isRevoked(kind: RevocationKind, id: string): Promise<boolean | null>;
  /**
   * Marks a record changed: its version moves on, so every instance's cached copy stops matching.
   * Versions outlive `ttlS`, which must exceed the longest time a cached copy is trusted.
   */
  bump(kind: VersionKind, id: string, ttlS: number): Promise<void>;
  /** The record's current version ('' before any change); null when the shared store could not be asked. */
  version(kind: VersionKind, id: string): Promise<string | null>;
}

class LocalList {
  private readonly entries = new Map<string, number>();
  private lastSweep = 0;

  add(key: string, ttlS: number) {
    const now = Date.now();
    this.entries.set(key, now + ttlS * 1000);
    if (now - this.lastSweep > 60_000) {
      this.lastSweep = now;
      for (const [k, exp] of this.entries) if (exp <= now) this.entries.delete(k);
    }
  }

  has(key: string): boolean {
    const exp = this.entries.get(key);
    return exp !== undefined && exp > Date.now();
  }
}

export function createSharedState(redis: Redis | null, keyPrefix: string, logger: Logger): SharedState {
  const local = new LocalList();
  const k = (kind: RevocationKind, id: string) => `${keyPrefix}revoked:${kind}:${id}`;
  const v = (kind: VersionKind, id: string) => `${keyPrefix}version:${kind}:${id}`;
  // Without Redis: a counter per changed record. A sequence shared by all, so an entry dropped by
  // the sweep and bumped again never repeats a version a cached copy could hold.
  const versions = new Map<string, { version: string; until: number }>();
  let sequence = 0;
  let lastSweep = 0;
  return {
    async revoke(kind, ids, ttlS) {
      for (const id of ids) local.add(k(kind, id), ttlS);
      if (!redis || ids.length === 0) return;
      const multi = redis.multi();
      for (const id of ids) multi.set(k(kind, id), '1', 'EX', Math.max(1, Math.ceil(ttlS)));
      await multi.exec();
    },
    async isRevoked(kind, id) {
      if (local.has(k(kind, id))) return true;
      if (!redis) return false;
      try {
        return (await redis.exists(k(kind, id))) === 1;
      } catch (err) {
        logger.warn(
          { err: { message: (err as Error).message } },
          'revocation lookup in Redis failed; checking the database',
        );
        return null;
      }
    },
    async bump(kind, id, ttlS) {
      if (!redis) {
        const now = Date.now();
        versions.set(v(kind, id), { version: String(++sequence), until: now + ttlS * 1000 });
        if (now - lastSweep > 60_000) {
          lastSweep = now;
          for (const [key, e] of versions) if (e.until <= now) versions.delete(key);
        }
        return;
      }
      // INCR then EXPIRE in one transaction: a version never lingers without its expiry.
      await redis
        .multi()
        .incr(v(kind, id))
        .expire(v(kind, id), Math.max(1, Math.ceil(ttlS)))
        .exec();
    },
    async version(kind, id) {
      if (!redis) {
        const e = versions.get(v(kind, id));
        return e && e.until > Date.now() ? e.version : '';
      }
      try {
        return (await redis.get(v(kind, id))) ?? '';
      } catch (err) {
        logger.warn(
          { err: { message: (err as Error).message } },
          'version lookup in Redis failed; reading the database',
        );
        return null;
      }
    },
  };
}
