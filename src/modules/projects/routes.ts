import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Infra } from '../../infra.js';
import { errors, orgAccessErrors, type ErrorExample } from '../../http/errors-doc.js';
import { Message, OrgParams, orgSecurity, ref } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import { CreateProjectBody, PatchProjectBody, Project, ProjectList, ProjectParams } from './schemas.js';
import { createProjectService } from './service.js';
import { orgAccess } from '../../http/access.js';

const tags = ['Projects'];
const read = orgSecurity('projects:read');
const write = orgSecurity('projects:write');
const NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Project not found' };
const BLANK: ErrorExample = { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'name: must not be blank' };
const ACCESS = 'Members of the organization, or an API key of it with the scope';

export const projectRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const authorize = orgAccess(deps);
  const projects = createProjectService(deps);

  app.get('/organizations/:orgId/projects', {
    schema: {
      tags,
      security: read,
      operationId: 'listProjects',
      summary: 'Projects, newest first (projects:read)',
      description: `${ACCESS} read:projects. The list may come from a per-instance cache that every project write invalidates (docs/api.md#projects).`,
      params: OrgParams,
      querystring: PageQuery,
      response: { 200: ref(ProjectList, 'A page of projects'), ...errors(...orgAccessErrors('projects:read')) },
    },
    handler: async (req) => projects.list(await authorize(req, req.params.orgId, 'projects:read'), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  app.post('/organizations/:orgId/projects', {
    schema: {
      tags,
      security: write,
      operationId: 'createProject',
      summary: 'Create a project (projects:write)',
      description: `${ACCESS} write:projects. Sends project.created; \`createdBy\` is the user, or the key.`,
      params: OrgParams,
      body: ref(CreateProjectBody),
      response: { 201: ref(Project, 'The new project'), ...errors(BLANK, ...orgAccessErrors('projects:write')) },
    },
    handler: async (req, reply) => reply.status(201).send(await projects.create(await authorize(req, req.params.orgId, 'projects:write'), req.body)),
  });

  app.get('/organizations/:orgId/projects/:projectId', {
    schema: {
      tags,
      security: read,
      operationId: 'getProject',
      summary: 'A project (projects:read)',
      description: `${ACCESS} read:projects. A project of another organization answers 404.`,
      params: ProjectParams,
      response: { 200: ref(Project, 'The project'), ...errors(...orgAccessErrors('projects:read'), NOT_FOUND) },
    },
    handler: async (req) => projects.get(await authorize(req, req.params.orgId, 'projects:read'), req.params.projectId),
  });

  app.patch('/organizations/:orgId/projects/:projectId', {
    schema: {
      tags,
      security: write,
      operationId: 'updateProject',
      summary: 'Update a project (projects:write)',
      description: `${ACCESS} write:projects. Any of \`name\` and \`description\` (null clears it); sends project.updated.`,
      params: ProjectParams,
      body: ref(PatchProjectBody),
      response: { 200: ref(Project, 'The updated project'), ...errors(BLANK, ...orgAccessErrors('projects:write'), NOT_FOUND) },
    },
    handler: async (req) => projects.update(await authorize(req, req.params.orgId, 'projects:write'), req.params.projectId, req.body),
  });

  app.delete('/organizations/:orgId/projects/:projectId', {
    schema: {
      tags,
      security: write,
      operationId: 'deleteProject',
      summary: 'Delete a project (projects:write)',
      description: `${ACCESS} write:projects. Sends project.deleted.`,
      params: ProjectParams,
      response: { 200: ref(Message, 'Deleted'), ...errors(...orgAccessErrors('projects:write'), NOT_FOUND) },
    },
    handler: async (req) => {
      await projects.remove(await authorize(req, req.params.orgId, 'projects:write'), req.params.projectId);
      return { message: 'Project deleted' };
    },
  });
};
