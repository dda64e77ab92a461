// The projects of an organization (docs/api.md#projects). Members read them, members and above write
// them; an API key does either with read:projects or write:projects.
import type { Infra } from '../../infra.js';
import type { ErrorExample } from '../../http/errors-doc.js';
import { route } from '../../http/route.js';
import { Message, OrgParams, ref } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import { CreateProjectBody, PatchProjectBody, Project, ProjectList, ProjectParams } from './schemas.js';
import { createProjectService } from './service.js';

const tags = ['Projects'];
const NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Project not found' };
const BLANK: ErrorExample = {
  code: 'VALIDATION_ERROR',
  message: 'Invalid request body',
  details: 'name: must not be blank',
};
const ACCESS = 'Members of the organization, or an API key of it with the scope';
const read = { org: 'orgId', permission: 'projects:read' } as const;
const write = { org: 'orgId', permission: 'projects:write' } as const;

export function projectRoutes(deps: Infra) {
  const projects = createProjectService(deps);
  return [
    route({
      method: 'GET',
      url: '/organizations/:orgId/projects',
      auth: read,
      operationId: 'listProjects',
      tags,
      summary: 'Projects, newest first (projects:read)',
      description: `${ACCESS} read:projects. The list may come from a per-instance cache that every project write invalidates (docs/api.md#projects).`,
      schema: { params: OrgParams, querystring: PageQuery, response: { 200: ref(ProjectList, 'A page of projects') } },
      handler: (ctx, { query }) => projects.list(ctx.access, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/projects',
      auth: write,
      operationId: 'createProject',
      tags,
      summary: 'Create a project (projects:write)',
      description: `${ACCESS} write:projects. Sends project.created; \`createdBy\` is the user, or the key.`,
      schema: { params: OrgParams, body: ref(CreateProjectBody), response: { 201: ref(Project, 'The new project') } },
      errors: [BLANK],
      handler: (ctx, { body }) => projects.create(ctx.access, body),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/projects/:projectId',
      auth: read,
      operationId: 'getProject',
      tags,
      summary: 'A project (projects:read)',
      description: `${ACCESS} read:projects. A project of another organization answers 404.`,
      schema: { params: ProjectParams, response: { 200: ref(Project, 'The project') } },
      errors: [NOT_FOUND],
      handler: (ctx, { params }) => projects.get(ctx.access, params.projectId),
    }),
    route({
      method: 'PATCH',
      url: '/organizations/:orgId/projects/:projectId',
      auth: write,
      operationId: 'updateProject',
      tags,
      summary: 'Update a project (projects:write)',
      description: `${ACCESS} write:projects. Any of \`name\` and \`description\` (null clears it); sends project.updated.`,
      schema: {
        params: ProjectParams,
        body: ref(PatchProjectBody),
        response: { 200: ref(Project, 'The updated project') },
      },
      errors: [BLANK, NOT_FOUND],
      handler: (ctx, { params, body }) => projects.update(ctx.access, params.projectId, body),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/projects/:projectId',
      auth: write,
      operationId: 'deleteProject',
      tags,
      summary: 'Delete a project (projects:write)',
      description: `${ACCESS} write:projects. Sends project.deleted.`,
      schema: { params: ProjectParams, response: { 200: ref(Message, 'Deleted') } },
      errors: [NOT_FOUND],
      handler: async (ctx, { params }) => {
        await projects.remove(ctx.access, params.projectId);
        return { message: 'Project deleted' };
      },
    }),
  ];
}
