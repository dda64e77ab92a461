import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Infra } from '../../infra.js';
import { orgAccess, requestContext, requireUser } from '../../http/access.js';
import { errors, orgAccessErrors, type ErrorExample } from '../../http/errors-doc.js';
import { bearerAuth as security, Message, OrgParams, ref } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import { CreateOrgBody, OrgSummaryList, Organization, PatchOrgBody, TransferBody, TransferResponse } from './schemas.js';
import { invitationRoutes, memberRoutes } from './members.routes.js';
import * as orgs from './service.js';

const tags = ['Organizations'];
const BLANK_NAME: ErrorExample = { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'name: must not be blank' };
const MEMBER_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Member not found' };

export const organizationRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const authorize = orgAccess(deps);
  await app.register(memberRoutes, { deps });
  await app.register(invitationRoutes, { deps });

  app.post('/organizations', {
    schema: {
      tags,
      security,
      operationId: 'createOrganization',
      summary: 'Create an organization; the caller becomes its owner',
      description: 'The organization starts on the Free plan with the caller as its owner. A slug already taken answers 409, so repeating a create is detected (docs/api.md#organization-routes).',
      body: ref(CreateOrgBody),
      response: {
        201: ref(Organization, 'The new organization'),
        ...errors(BLANK_NAME, { code: 'CONFLICT', message: 'An organization with this slug already exists', details: 'slug: is already taken' }),
      },
    },
    handler: async (req, reply) => reply.status(201).send(await orgs.createOrganization(deps, requireUser(req), req.body, requestContext(req))),
  });

  app.get('/users/me/organizations', {
    schema: {
      tags,
      security,
      operationId: 'listMyOrganizations',
      summary: 'Organizations the caller belongs to',
      description: "The caller's memberships, newest first, each with the caller's role in it.",
      querystring: PageQuery,
      response: { 200: ref(OrgSummaryList, 'A page of organizations') },
    },
    handler: async (req) => orgs.listMyOrganizations(deps, requireUser(req), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  app.get('/organizations/:orgId', {
    schema: {
      tags,
      security,
      operationId: 'getOrganization',
      summary: 'An organization (members only)',
      description: 'Any member may read it (org:read). An unknown organization answers 404, one you do not belong to 403. No API-key scope reaches it.',
      params: OrgParams,
      response: { 200: ref(Organization, 'The organization'), ...errors(...orgAccessErrors('org:read')) },
    },
    handler: async (req) => orgs.getOrganization(deps, await authorize(req, req.params.orgId, 'org:read')),
  });

  app.patch('/organizations/:orgId', {
    schema: {
      tags,
      security,
      operationId: 'updateOrganization',
      summary: 'Update an organization (org:update); settings are merged, null clears description and logoUrl',
      description: 'Owners and admins. `settings` is merged section by section; the slug cannot be changed (docs/api.md#organization-routes).',
      params: OrgParams,
      body: ref(PatchOrgBody),
      response: { 200: ref(Organization, 'The updated organization'), ...errors(BLANK_NAME, ...orgAccessErrors('org:update')) },
    },
    handler: async (req) => orgs.updateOrganization(deps, await authorize(req, req.params.orgId, 'org:update'), req.body),
  });

  app.delete('/organizations/:orgId', {
    schema: {
      tags,
      security,
      operationId: 'deleteOrganization',
      summary: 'Delete an organization and its data, ending its subscription (owner)',
      description:
        'Once decided (the caller still its owner), ends a live subscription at the payment provider (if that fails: 502, nothing is deleted), then removes the organization with its members, invitations, projects, API keys, webhooks and audit log. No event is sent.',
      params: OrgParams,
      response: {
        200: ref(Message, 'Deleted'),
        ...errors(...orgAccessErrors('org:delete'), { code: 'PAYMENT_PROVIDER_ERROR', message: 'The payment provider failed', details: 'The subscription could not be canceled' }),
      },
    },
    handler: async (req) => {
      const access = await authorize(req, req.params.orgId, 'org:delete');
      await orgs.deleteOrganization(deps, access);
      return { message: 'Organization deleted' };
    },
  });

  app.post('/organizations/:orgId/transfer-ownership', {
    schema: {
      tags,
      security,
      operationId: 'transferOwnership',
      summary: 'Hand the organization to another member (owner); the old owner becomes admin',
      description: '`memberId` is a membership id. The old owner becomes admin and keeps the keys they made; two member.updated events are sent. Naming yourself: 400.',
      params: OrgParams,
      body: ref(TransferBody),
      response: {
        200: ref(TransferResponse, 'Ownership transferred'),
        ...errors({ code: 'VALIDATION_ERROR', message: 'You already own this organization', details: 'memberId: is your own membership' }, ...orgAccessErrors('org:transfer'), MEMBER_NOT_FOUND),
      },
    },
    handler: async (req) => ({ message: 'Ownership transferred', ...(await orgs.transferOwnership(deps, await authorize(req, req.params.orgId, 'org:transfer'), req.body.memberId)) }),
  });
};
