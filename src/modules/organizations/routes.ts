// Organizations and their ownership (docs/api.md#organizations), with their members and invitations
// (members.routes.ts), which come first in the table. No API-key scope reaches the organization's own
// routes: they are people's.
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Message, OrgParams, ref } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import {
  CreateOrgBody,
  OrgSummaryList,
  Organization,
  PatchOrgBody,
  TransferBody,
  TransferResponse,
} from './schemas.js';
import { invitationRoutes, memberRoutes } from './members.routes.js';
import * as orgs from './service.js';
import { docs } from './docs.js';

export function organizationRoutes(deps: Infra) {
  return [
    ...memberRoutes(deps),
    ...invitationRoutes(deps),
    route({
      method: 'POST',
      url: '/organizations',
      auth: 'user',
      doc: docs.createOrganization,
      schema: { body: ref(CreateOrgBody), response: { 201: ref(Organization, 'The new organization') } },
      handler: (ctx, { body }) => orgs.createOrganization(deps, ctx.user, body, ctx.context),
    }),
    route({
      method: 'GET',
      url: '/users/me/organizations',
      auth: 'user',
      doc: docs.listMyOrganizations,
      schema: { querystring: PageQuery, response: { 200: ref(OrgSummaryList, 'A page of organizations') } },
      handler: (ctx, { query }) => orgs.listMyOrganizations(deps, ctx.user, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId',
      auth: { org: 'orgId', permission: 'org:read' },
      doc: docs.getOrganization,
      schema: { params: OrgParams, response: { 200: ref(Organization, 'The organization') } },
      handler: (ctx) => orgs.getOrganization(deps, ctx.access),
    }),
    route({
      method: 'PATCH',
      url: '/organizations/:orgId',
      auth: { org: 'orgId', permission: 'org:update' },
      doc: docs.updateOrganization,
      schema: {
        params: OrgParams,
        body: ref(PatchOrgBody),
        response: { 200: ref(Organization, 'The updated organization') },
      },
      handler: (ctx, { body }) => orgs.updateOrganization(deps, ctx.access, body),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId',
      auth: { org: 'orgId', permission: 'org:delete' },
      doc: docs.deleteOrganization,
      schema: { params: OrgParams, response: { 200: ref(Message, 'Deleted') } },
      handler: async (ctx) => {
        await orgs.deleteOrganization(deps, ctx.access);
        return { message: 'Organization deleted' };
      },
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/transfer-ownership',
      auth: { org: 'orgId', permission: 'org:transfer' },
      doc: docs.transferOwnership,
      schema: {
        params: OrgParams,
        body: ref(TransferBody),
        response: { 200: ref(TransferResponse, 'Ownership transferred') },
      },
      handler: async (ctx, { body }) => ({
        message: 'Ownership transferred',
        ...(await orgs.transferOwnership(deps, ctx.access, body.memberId)),
      }),
    }),
  ];
}
