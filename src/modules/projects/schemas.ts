import { Type } from 'typebox';
import { Body, Nullable, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';

export const Project = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  createdBy: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ProjectList = Type.Object({ data: Type.Array(Project), ...PageFields });
export const CreateProjectBody = Body({ name: Type.String({ minLength: 1, maxLength: 100 }), description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))) });
export const PatchProjectBody = Body({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))) });
export const ProjectParams = Type.Object({ orgId: Type.String({ minLength: 1, maxLength: 64 }), projectId: Type.String({ minLength: 1, maxLength: 64 }) });
