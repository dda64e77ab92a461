// The OpenAPI prose of the project routes (routes.ts), by operationId: each operation's summary,
// description and the error examples its service answers. The declarations name them (`doc: docs.listProjects`).
import { invalidBody, notFound } from '../../http/errors-doc.js';
import { routeDocs } from '../../http/route.js';

const NOT_FOUND = notFound('Project not found');
const BLANK = invalidBody('name: must not be blank');
const ACCESS = 'Members of the organization, or an API key of it with the scope';

export const docs = routeDocs(['Projects'], {
  listProjects: {
    summary: 'Projects, newest first (projects:read)',
    description: `${ACCESS} read:projects. The list may come from a per-instance cache that every project write invalidates (docs/api.md#projects).`,
  },
  createProject: {
    summary: 'Create a project (projects:write)',
    description: `${ACCESS} write:projects. Sends project.created; \`createdBy\` is the user, or the key.`,
    errors: [BLANK],
  },
  getProject: {
    summary: 'A project (projects:read)',
    description: `${ACCESS} read:projects. A project of another organization answers 404.`,
    errors: [NOT_FOUND],
  },
  updateProject: {
    summary: 'Update a project (projects:write)',
    description: `${ACCESS} write:projects. Any of \`name\` and \`description\` (null clears it); sends project.updated.`,
    errors: [BLANK, NOT_FOUND],
  },
  deleteProject: {
    summary: 'Delete a project (projects:write)',
    description: `${ACCESS} write:projects. Sends project.deleted.`,
    errors: [NOT_FOUND],
  },
});
