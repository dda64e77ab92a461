// The projects of an organization (docs/api.md#projects). Members read them, members and above write
// them; an API key does either with read:projects or write:projects.
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Message, OrgParams, ref } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import { CreateProjectBody, PatchProjectBody, Project, ProjectList, ProjectParams } from './schemas.js';
import { createProjectService } from './service.js';
import { docs } from './docs.js';

const read = { org: 'orgId', permission: 'projects:read' } as const;
const write = { org: 'orgId', permission: 'projects:write' } as const;

export function projectRoutes(deps: Infra) {
  const projects = createProjectService(deps);
  return [
    route({
      method: 'GET',
      url: '/organizations/:orgId/projects',
      auth: read,
      doc: docs.listProjects,
      schema: { params: OrgParams, querystring: PageQuery, response: { 200: ref(ProjectList, 'A page of projects') } },
      handler: (ctx, { query }) => projects.list(ctx.access, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/projects',
      auth: write,
      doc: docs.createProject,
      schema: { params: OrgParams, body: ref(CreateProjectBody), response: { 201: ref(Project, 'The new project') } },
      handler: (ctx, { body }) => projects.create(ctx.access, body),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/projects/:projectId',
      auth: read,
      doc: docs.getProject,
      schema: { params: ProjectParams, response: { 200: ref(Project, 'The project') } },
      handler: (ctx, { params }) => projects.get(ctx.access, params.projectId),
    }),
    route({
      method: 'PATCH',
      url: '/organizations/:orgId/projects/:projectId',
      auth: write,
      doc: docs.updateProject,
      schema: {
        params: ProjectParams,
        body: ref(PatchProjectBody),
        response: { 200: ref(Project, 'The updated project') },
      },
      handler: (ctx, { params, body }) => projects.update(ctx.access, params.projectId, body),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/projects/:projectId',
      auth: write,
      doc: docs.deleteProject,
      schema: { params: ProjectParams, response: { 200: ref(Message, 'Deleted') } },
      handler: async (ctx, { params }) => {
        await projects.remove(ctx.access, params.projectId);
        return { message: 'Project deleted' };
      },
    }),
  ];
}
