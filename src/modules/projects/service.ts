// Projects of an organization: always read and written with the organization's id (docs/api.md).
// The feature builds its own service from the infrastructure: the cache of list pages is its own.
import { and, count, desc, eq, getTableColumns, sql } from 'drizzle-orm';
import { prepared } from '../../db/prepared.js';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import type { OrgAccess } from '../../platform/tenancy.js';
import { notFound, validationError } from '../../lib/errors.js';
import { pageInfo } from '../../platform/pagination.js';
import { newId } from '../../lib/ids.js';
import { auditChange } from '../../platform/audit/record.js';
import { recordEvent } from '../../platform/outbox.js';
import { transaction } from '../../db/transaction.js';
import { createProjectListCache } from './list-cache.js';
import { projects, type ProjectRow } from '../../db/tables/projects.js';

const present = (p: ProjectRow) => ({
  id: p.id,
  organizationId: p.organizationId,
  name: p.name,
  description: p.description,
  createdBy: p.createdBy,
  createdAt: p.createdAt.toISOString(),
  updatedAt: p.updatedAt.toISOString(),
});

const eventData = (p: ProjectRow) => ({ projectId: p.id, organizationId: p.organizationId, name: p.name });
const byId = (access: OrgAccess, projectId: string) =>
  and(eq(projects.organizationId, access.organizationId), eq(projects.id, projectId));

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw validationError('Invalid request body', 'name: must not be blank');
  return trimmed;
}

async function loadPage(deps: Pick<Infra, 'db'>, access: OrgAccess, page: number, pageSize: number) {
  // One prepared round trip: the page and, in each of its rows, the organization's total.
  const pageQuery = prepared(deps.db, 'projects_page', (db) =>
    db
      .select({ ...getTableColumns(projects), total: sql<number>`count(*) over ()`.mapWith(Number) })
      .from(projects)
      .where(eq(projects.organizationId, sql.placeholder('orgId')))
      .orderBy(desc(projects.createdAt), desc(projects.id))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare('projects_page'),
  );
  const rows = await pageQuery.execute({
    orgId: access.organizationId,
    limit: pageSize,
    offset: (page - 1) * pageSize,
  });
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && page > 1) {
    // Past the last page there is no row to carry the total.
    const [totals] = await deps.db
      .select({ n: count() })
      .from(projects)
      .where(eq(projects.organizationId, access.organizationId));
    total = totals?.n ?? 0;
  }
  return { data: rows.map(present), ...pageInfo(total, page, pageSize) };
}

export type ProjectPage = Awaited<ReturnType<typeof loadPage>>;

async function load(tx: Tx | Infra['db'], access: OrgAccess, projectId: string) {
  const [p] = await tx.select().from(projects).where(byId(access, projectId));
  if (!p) throw notFound('Project not found');
  return p;
}

export function createProjectService(deps: Pick<Infra, 'logger' | 'clock' | 'db' | 'shared'>) {
  const lists = createProjectListCache<ProjectPage>(deps.shared, deps.logger);
  /** Declared at every project write: the organization's cached pages are read again once it commits. */
  const listChanged = (access: OrgAccess) => () => lists.changed(access.organizationId);

  return {
    /** A page of the organization's projects, from the cache while no project of it has changed (list-cache.ts). */
    list(access: OrgAccess, page: number, pageSize: number): Promise<ProjectPage> {
      return lists.get(access.organizationId, page, pageSize, () => loadPage(deps, access, page, pageSize));
    },

    async get(access: OrgAccess, projectId: string) {
      return present(await load(deps.db, access, projectId));
    },

    create(access: OrgAccess, input: { name: string; description?: string | null }) {
      const now = deps.clock.now();
      return transaction(deps.db, async (tx, afterCommit) => {
        const [p] = await tx
          .insert(projects)
          .values({
            organizationId: access.organizationId,
            id: newId('prj', now.getTime()),
            name: cleanName(input.name),
            description: input.description ?? null,
            createdBy: access.actor.id,
            createdAt: now,
            updatedAt: now,
          })
          .returning();
        afterCommit(listChanged(access));
        await recordEvent(deps, tx, access.organizationId, 'project.created', eventData(p!));
        await auditChange(deps, tx, access);
        return present(p!);
      });
    },

    update(access: OrgAccess, projectId: string, input: { name?: string; description?: string | null }) {
      return transaction(deps.db, async (tx, afterCommit) => {
        await load(tx, access, projectId);
        const [p] = await tx
          .update(projects)
          .set({
            ...(input.name !== undefined ? { name: cleanName(input.name) } : {}),
            ...(input.description !== undefined ? { description: input.description } : {}),
            updatedAt: deps.clock.now(),
          })
          .where(byId(access, projectId))
          .returning();
        // Deleted since it was read (a concurrent DELETE): nothing to update.
        if (!p) throw notFound('Project not found');
        afterCommit(listChanged(access));
        await recordEvent(deps, tx, access.organizationId, 'project.updated', eventData(p));
        await auditChange(deps, tx, access);
        return present(p);
      });
    },

    async remove(access: OrgAccess, projectId: string): Promise<void> {
      await transaction(deps.db, async (tx, afterCommit) => {
        const [p] = await tx.delete(projects).where(byId(access, projectId)).returning();
        if (!p) throw notFound('Project not found');
        afterCommit(listChanged(access));
        await recordEvent(deps, tx, access.organizationId, 'project.deleted', eventData(p));
        await auditChange(deps, tx, access);
      });
    },
  };
}

export type ProjectService = ReturnType<typeof createProjectService>;
