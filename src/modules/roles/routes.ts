// The permission catalogue, an organization's roles and the permission check (docs/api.md#custom-roles).
// Anyone signed in reads the catalogue; members (and keys with read:members) read the roles and ask
// the check; roles:manage (owner, admin, or a custom role granting it) makes and changes roles.
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Message, OrgParams, ref } from '../../http/schemas.js';
import {
  CreateRoleBody,
  OrgRole,
  PatchRoleBody,
  PermissionCatalogue,
  PermissionCheck,
  PermissionCheckBody,
  RoleList,
  RoleParams,
} from './schemas.js';
import * as roles from './service.js';
import { docs } from './docs.js';

const read = { org: 'orgId', permission: 'members:read' } as const;
const manage = { org: 'orgId', permission: 'roles:manage' } as const;

export function roleRoutes(deps: Infra) {
  return [
    route({
      method: 'GET',
      url: '/permissions',
      auth: 'user',
      doc: docs.listPermissions,
      schema: { response: { 200: ref(PermissionCatalogue, 'The catalogue') } },
      handler: () => roles.catalogue(deps),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/roles',
      auth: read,
      doc: docs.listRoles,
      schema: { params: OrgParams, response: { 200: ref(RoleList, 'The roles') } },
      handler: (ctx) => roles.listRoles(deps, ctx.access),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/roles',
      auth: manage,
      doc: docs.createRole,
      schema: { params: OrgParams, body: ref(CreateRoleBody), response: { 201: ref(OrgRole, 'The new role') } },
      handler: (ctx, { body }) => roles.createRole(deps, ctx.access, body),
    }),
    route({
      method: 'PATCH',
      url: '/organizations/:orgId/roles/:key',
      auth: manage,
      doc: docs.updateRole,
      schema: { params: RoleParams, body: ref(PatchRoleBody), response: { 200: ref(OrgRole, 'The changed role') } },
      handler: (ctx, { params, body }) => roles.updateRole(deps, ctx.access, params.key, body),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/roles/:key',
      auth: manage,
      doc: docs.deleteRole,
      schema: { params: RoleParams, response: { 200: ref(Message, 'Deleted') } },
      handler: async (ctx, { params }) => {
        await roles.deleteRole(deps, ctx.access, params.key);
        return { message: 'Role deleted' };
      },
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/permissions/check',
      auth: read,
      doc: docs.checkPermissions,
      schema: {
        params: OrgParams,
        body: ref(PermissionCheckBody),
        response: { 200: ref(PermissionCheck, 'The answer') },
      },
      handler: (ctx, { body }) => roles.checkMemberPermissions(deps, ctx.access, body),
    }),
  ];
}
