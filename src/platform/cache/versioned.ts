// Values cached in-process that every instance must load again once what they show has changed
// (a user's record, an organization's project pages). Each value belongs to an owner (the user, the
// organization) whose version lives in the revocation list: in Redis with REDIS_URL, so a change on
// one instance holds on all of them, in-process otherwise. A write calls `bump` after its commit; the
// next read on any instance sees another version and loads the value again. A value is trusted at
// most `ttlMs`, which also bounds the staleness left by a change whose version never moved (a crash
// right after the commit).
import type { SharedState, VersionKind } from './shared-state.js';

export interface VersionedCacheOptions<T> {
  ttlMs: number;
  /** The most the cache holds, in units of `weight` (1 per value unless told). */
  maxWeight: number;
  weight?: (value: T) => number;
}

export function createVersionedCache<T>(versions: SharedState, kind: VersionKind, opts: VersionedCacheOptions<T>) {
  // Insertion order is age: the oldest value goes first when the cache is full.
  const entries = new Map<string, { value: T; version: string; at: number; weight: number }>();
  let held = 0;
  // Versions must outlive every cached value that could hold the previous one.
  const versionTtlS = (opts.ttlMs / 1000) * 10;

  function forget(key: string): void {
    const hit = entries.get(key);
    if (!hit) return;
    entries.delete(key);
    held -= hit.weight;
  }

  return {
    /**
     * The value under `key`, from memory while `owner`'s version holds, else from `load` (an
     * undefined value is not kept, nor any value while the version cannot be read).
     */
    async get(owner: string, key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
      const version = await versions.version(kind, owner);
      const hit = entries.get(key);
      if (hit && version !== null && hit.version === version && Date.now() - hit.at < opts.ttlMs) return hit.value;
      // The version is read before the value: a change committed in between moves it on, so this
      // copy will not match on the next read.
      const value = await load();
      forget(key);
      if (value === undefined || version === null) return value;
      const weight = opts.weight?.(value) ?? 1;
      while (held + weight > opts.maxWeight && entries.size > 0) forget(entries.keys().next().value!);
      entries.set(key, { value, version, at: Date.now(), weight });
      held += weight;
      return value;
    },

    /** Drops this instance's copy under `key`. */
    forget,

    /** Drops every copy this instance holds. */
    clear(): void {
      entries.clear();
      held = 0;
    },

    /** After a committed change to what `owner`'s values show: every instance loads them again. */
    bump(owner: string): Promise<void> {
      return versions.bump(kind, owner, versionTtlS);
    },
  };
}
