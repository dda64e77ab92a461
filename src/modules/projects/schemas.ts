import { Type } from 'typebox';
import { Body, named, Nullable, ref, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';

const EXAMPLE = {
  id: 'prj_01jq3c4e6y8w2s0m9k7h5f3d1b',
  organizationId: 'org_01jq3bz8n6m4k2j0h8g6f4d2c0',
  name: 'Website',
  description: 'The marketing site',
  createdBy: 'usr_01jq3bn9zs0a7awy2w2vc6bte1',
  createdAt: '2026-03-01T12:10:00.000Z',
  updatedAt: '2026-03-01T12:10:00.000Z',
};

export const Project = named(
  'Project',
  Type.Object({
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    createdBy: Type.String({ description: "The user's id, or the API key's id when a key created it" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  { description: 'docs/api.md#projects', examples: [EXAMPLE] },
);

export const ProjectList = named('ProjectList', Type.Object({ data: Type.Array(ref(Project)), ...PageFields }), {
  description: 'A page of projects, newest first',
  examples: [{ data: [EXAMPLE], total: 1, page: 1, pageSize: 20, hasMore: false }],
});
export const CreateProjectBody = named(
  'CreateProjectRequest',
  Body({
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Not blank' }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  }),
  { examples: [{ name: 'Website', description: 'The marketing site' }] },
);
export const PatchProjectBody = named(
  'UpdateProjectRequest',
  Body({
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  }),
  { examples: [{ description: null }] },
);
export const ProjectParams = Type.Object({
  orgId: Type.String({ minLength: 1, maxLength: 64, description: 'The organization (`org_…`)' }),
  projectId: Type.String({ minLength: 1, maxLength: 64, description: 'The project (`prj_…`)' }),
});
