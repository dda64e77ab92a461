import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import { bearerAuth as security, errors, Message } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import { OrgParams } from '../organizations/schemas.js';
import { CreateProjectBody, PatchProjectBody, Project, ProjectList, ProjectParams } from './schemas.js';
import * as projects from './service.js';

const tags = ['projects'];
const orgErrors = errors(401, 403, 404);

export const projectRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const authorize = deps.authorizeOrg;

  app.get('/organizations/:orgId/projects', {
    schema: { tags, security, summary: 'Projects, newest first (projects:read)', params: OrgParams, querystring: PageQuery, response: { 200: ProjectList, ...orgErrors } },
    handler: async (req) => projects.listProjects(deps, await authorize(req, req.params.orgId, 'projects:read'), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  app.post('/organizations/:orgId/projects', {
    schema: { tags, security, summary: 'Create a project (projects:write)', params: OrgParams, body: CreateProjectBody, response: { 201: Project, ...orgErrors } },
    handler: async (req, reply) => reply.status(201).send(await projects.createProject(deps, await authorize(req, req.params.orgId, 'projects:write'), req.body)),
  });

  app.get('/organizations/:orgId/projects/:projectId', {
    schema: { tags, security, summary: 'A project (projects:read)', params: ProjectParams, response: { 200: Project, ...orgErrors } },
    handler: async (req) => projects.getProject(deps, await authorize(req, req.params.orgId, 'projects:read'), req.params.projectId),
  });

  app.patch('/organizations/:orgId/projects/:projectId', {
    schema: { tags, security, summary: 'Update a project (projects:write)', params: ProjectParams, body: PatchProjectBody, response: { 200: Project, ...orgErrors } },
    handler: async (req) => projects.updateProject(deps, await authorize(req, req.params.orgId, 'projects:write'), req.params.projectId, req.body),
  });

  app.delete('/organizations/:orgId/projects/:projectId', {
    schema: { tags, security, summary: 'Delete a project (projects:write)', params: ProjectParams, response: { 200: Message, ...orgErrors } },
    handler: async (req) => projects.deleteProject(deps, await authorize(req, req.params.orgId, 'projects:write'), req.params.projectId),
  });
};
