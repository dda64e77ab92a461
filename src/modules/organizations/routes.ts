// Organizations and their ownership (docs/api.md#organizations), with their members and invitations
// (members.routes.ts), which come first in the table. No API-key scope reaches the organization's own
// routes: they are people's.
import type { Infra } from '../../infra.js';
import type { ErrorExample } from '../../http/errors-doc.js';
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

const tags = ['Organizations'];
const BLANK_NAME: ErrorExample = {
  code: 'VALIDATION_ERROR',
  message: 'Invalid request body',
  details: 'name: must not be blank',
};
const MEMBER_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Member not found' };

export function organizationRoutes(deps: Infra) {
  return [
    ...memberRoutes(deps),
    ...invitationRoutes(deps),
    route({
      method: 'POST',
      url: '/organizations',
      auth: 'user',
      operationId: 'createOrganization',
      tags,
      summary: 'Create an organization; the caller becomes its owner',
      description:
        'The organization starts on the Free plan with the caller as its owner. A slug already taken answers 409, so repeating a create is detected (docs/api.md#organization-routes).',
      schema: { body: ref(CreateOrgBody), response: { 201: ref(Organization, 'The new organization') } },
      errors: [
        BLANK_NAME,
        {
          code: 'CONFLICT',
          message: 'An organization with this slug already exists',
          details: 'slug: is already taken',
        },
      ],
      handler: (ctx, { body }) => orgs.createOrganization(deps, ctx.user, body, ctx.context),
    }),
    route({
      method: 'GET',
      url: '/users/me/organizations',
      auth: 'user',
      operationId: 'listMyOrganizations',
      tags,
      summary: 'Organizations the caller belongs to',
      description: "The caller's memberships, newest first, each with the caller's role in it.",
      schema: { querystring: PageQuery, response: { 200: ref(OrgSummaryList, 'A page of organizations') } },
      handler: (ctx, { query }) => orgs.listMyOrganizations(deps, ctx.user, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId',
      auth: { org: 'orgId', permission: 'org:read' },
      operationId: 'getOrganization',
      tags,
      summary: 'An organization (members only)',
      description:
        'Any member may read it (org:read). An unknown organization answers 404, one you do not belong to 403. No API-key scope reaches it.',
      schema: { params: OrgParams, response: { 200: ref(Organization, 'The organization') } },
      handler: (ctx) => orgs.getOrganization(deps, ctx.access),
    }),
    route({
      method: 'PATCH',
      url: '/organizations/:orgId',
      auth: { org: 'orgId', permission: 'org:update' },
      operationId: 'updateOrganization',
      tags,
      summary: 'Update an organization (org:update); settings are merged, null clears description and logoUrl',
      description:
        'Owners and admins. `settings` is merged section by section; the slug cannot be changed (docs/api.md#organization-routes).',
      schema: {
        params: OrgParams,
        body: ref(PatchOrgBody),
        response: { 200: ref(Organization, 'The updated organization') },
      },
      errors: [BLANK_NAME],
      handler: (ctx, { body }) => orgs.updateOrganization(deps, ctx.access, body),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId',
      auth: { org: 'orgId', permission: 'org:delete' },
      operationId: 'deleteOrganization',
      tags,
      summary: 'Delete an organization and its data, ending its subscription (owner)',
      description:
        'Once decided (the caller still its owner), ends a live subscription at the payment provider (if that fails: 502, nothing is deleted), then removes the organization with its members, invitations, projects, API keys, webhooks and audit log. No event is sent.',
      schema: { params: OrgParams, response: { 200: ref(Message, 'Deleted') } },
      errors: [
        {
          code: 'PAYMENT_PROVIDER_ERROR',
          message: 'The payment provider failed',
          details: 'The subscription could not be canceled',
        },
      ],
      handler: async (ctx) => {
        await orgs.deleteOrganization(deps, ctx.access);
        return { message: 'Organization deleted' };
      },
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/transfer-ownership',
      auth: { org: 'orgId', permission: 'org:transfer' },
      operationId: 'transferOwnership',
      tags,
      summary: 'Hand the organization to another member (owner); the old owner becomes admin',
      description:
        '`memberId` is a membership id. The old owner becomes admin and keeps the keys they made; two member.updated events are sent. Naming yourself: 400.',
      schema: {
        params: OrgParams,
        body: ref(TransferBody),
        response: { 200: ref(TransferResponse, 'Ownership transferred') },
      },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'You already own this organization',
          details: 'memberId: is your own membership',
        },
        MEMBER_NOT_FOUND,
      ],
      handler: async (ctx, { body }) => ({
        message: 'Ownership transferred',
        ...(await orgs.transferOwnership(deps, ctx.access, body.memberId)),
      }),
    }),
  ];
}
