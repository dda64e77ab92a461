// Pages of an organization's project list, cached in-process: the list is what machine clients
// (API keys) poll, and a page served from memory costs no database round trip. Every project write
// calls `changed` after its commit: the organization's version moves on (in Redis with REDIS_URL, so
// on every instance) and the next read of any of its pages loads it again. A page is trusted at most
// CACHE_TTL_MS, which also bounds the staleness left by a change whose version could not be moved
// (a crash right after the commit, Redis failing at that moment).
import type { Logger } from 'pino';
import type { RevocationList } from '../../providers/cache/revocations.js';

const CACHE_TTL_MS = 60_000;
// Pages hold up to 100 projects each: about 30 MB at most.
const MAX_ROWS = 100_000;
// Versions must outlive every cached page that could hold the previous one.
const VERSION_TTL_S = (CACHE_TTL_MS / 1000) * 10;

interface Cached<T> {
  page: T;
  rows: number;
  version: string;
  at: number;
}

export function createProjectListCache<T extends { data: unknown[] }>(versions: RevocationList, logger: Logger) {
  // Insertion order is age: the oldest page goes first when the cache is full.
  const pages = new Map<string, Cached<T>>();
  const keysOf = new Map<string, Set<string>>();
  let rows = 0;

  function drop(key: string) {
    const hit = pages.get(key);
    if (!hit) return;
    pages.delete(key);
    rows -= hit.rows;
    const orgId = key.slice(0, key.indexOf('|'));
    const keys = keysOf.get(orgId);
    keys?.delete(key);
    if (keys?.size === 0) keysOf.delete(orgId);
  }

  return {
    /** A page of the organization's list: from the cache while its version holds, else from `load`. */
    async get(orgId: string, page: number, pageSize: number, load: () => Promise<T>): Promise<T> {
      const key = `${orgId}|${page}|${pageSize}`;
      const version = await versions.version('projects', orgId);
      const hit = pages.get(key);
      if (hit && version !== null && hit.version === version && Date.now() - hit.at < CACHE_TTL_MS) return hit.page;
      // The version is read before the page: a change committed in between moves it on, so this copy
      // will not match on the next read.
      const fresh = await load();
      drop(key);
      if (version === null) return fresh;
      const n = Math.max(1, fresh.data.length);
      while (rows + n > MAX_ROWS && pages.size > 0) drop(pages.keys().next().value!);
      pages.set(key, { page: fresh, rows: n, version, at: Date.now() });
      rows += n;
      let keys = keysOf.get(orgId);
      if (!keys) keysOf.set(orgId, (keys = new Set()));
      keys.add(key);
      return fresh;
    },

    /**
     * After a committed change to the organization's projects: every instance reads its pages again.
     * The change is committed whatever happens here, so a failure to move the version is logged, not
     * thrown (the request succeeded; other instances may show the old pages for up to CACHE_TTL_MS).
     */
    async changed(orgId: string): Promise<void> {
      for (const key of [...(keysOf.get(orgId) ?? [])]) drop(key);
      try {
        await versions.bump('projects', orgId, VERSION_TTL_S);
      } catch (err) {
        logger.error({ err, organizationId: orgId }, 'project list version could not be moved on; other instances may list stale pages for up to a minute');
      }
    },
  };
}

export type ProjectListCache<T extends { data: unknown[] }> = ReturnType<typeof createProjectListCache<T>>;
