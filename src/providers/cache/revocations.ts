// Revocations that every instance must see at once (sessions now, API keys later). Without Redis the
// list lives in this process (one instance). With REDIS_URL it is written to Redis before the
// response is sent, and each check asks Redis, so a revocation on one instance holds on all of them.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export type RevocationKind = 'session' | 'api_key';

export interface RevocationList {
  add(kind: RevocationKind, ids: string[], ttlS: number): Promise<void>;
  /** true or false; null when the shared store could not be asked (the caller checks the database). */
  has(kind: RevocationKind, id: string): Promise<boolean | null>;
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

export function createRevocationList(redis: Redis | null, keyPrefix: string, logger: Logger): RevocationList {
  const local = new LocalList();
  const k = (kind: RevocationKind, id: string) => `${keyPrefix}revoked:${kind}:${id}`;
  return {
    async add(kind, ids, ttlS) {
      for (const id of ids) local.add(k(kind, id), ttlS);
      if (!redis || ids.length === 0) return;
      const multi = redis.multi();
      for (const id of ids) multi.set(k(kind, id), '1', 'EX', Math.max(1, Math.ceil(ttlS)));
      await multi.exec();
    },
    async has(kind, id) {
      if (local.has(k(kind, id))) return true;
      if (!redis) return false;
      try {
        return (await redis.exists(k(kind, id))) === 1;
      } catch (err) {
        logger.warn({ err: { message: (err as Error).message } }, 'revocation lookup in Redis failed; checking the database');
        return null;
      }
    },
  };
}
