// Pages of an organization's project list, cached in-process: the list is what machine clients
// (API keys) poll, and a page served from memory costs no database round trip. Every project write
// calls `changed` after its commit, which moves the organization's version on
// (providers/cache/versioned.ts): the next read of any of its pages, on any instance, loads it again.
import type { Logger } from 'pino';
import type { SharedState } from '../../platform/cache/shared-state.js';
import { createVersionedCache } from '../../platform/cache/versioned.js';

export function createProjectListCache<T extends { data: unknown[] }>(versions: SharedState, logger: Logger) {
  // Pages hold up to 100 projects each: about 30 MB at most.
  const cache = createVersionedCache<T>(versions, 'projects', {
    ttlMs: 60_000,
    maxWeight: 100_000,
    weight: (page) => Math.max(1, page.data.length),
  });

  return {
    /** A page of the organization's list: from the cache while its version holds, else from `load`. */
    async get(orgId: string, page: number, pageSize: number, load: () => Promise<T>): Promise<T> {
      return (await cache.get(orgId, `${orgId}|${page}|${pageSize}`, load))!;
    },

    /**
     * After a committed change to the organization's projects: every instance reads its pages again.
     * The change is committed whatever happens here, so a failure to move the version is logged, not
     * thrown (the request succeeded; other instances may show the old pages for up to a minute). This
     * instance drops every page it holds, so it shows the change itself.
     */
    async changed(orgId: string): Promise<void> {
      try {
        await cache.bump(orgId);
      } catch (err) {
        cache.clear();
        logger.error(
          { err, organizationId: orgId },
          'project list version could not be moved on; other instances may list stale pages for up to a minute',
        );
      }
    },
  };
}

export type ProjectListCache<T extends { data: unknown[] }> = ReturnType<typeof createProjectListCache<T>>;
