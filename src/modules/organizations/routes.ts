import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../deps.js';
import { requireUser } from '../../http/actor.js';
import { requestContext } from '../../platform/tenancy.js';
import { bearerAuth as security, Body, errors, Message } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import { Token } from '../auth/schemas.js';
import { cancelForDeletion } from '../billing/service.js';
import * as invitations from './invitations.service.js';
import * as members from './members.service.js';
import {
  CreateOrgBody,
  Invitation,
  InvitationList,
  InvitationParams,
  InvitationQuery,
  InvitationWithUrl,
  InviteBody,
  Member,
  MemberList,
  MemberParams,
  OrgParams,
  OrgSummaryList,
  Organization,
  PatchOrgBody,
  RoleBody,
  TransferBody,
  TransferResponse,
} from './schemas.js';
import * as orgs from './service.js';

const tags = ['organizations'];
const memberTags = ['members'];
const inviteTags = ['invitations'];
const orgErrors = errors(401, 403, 404);

export const organizationRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const authorize = deps.authorizeOrg;

  app.post('/organizations', {
    schema: { tags, security, summary: 'Create an organization; the caller becomes its owner', body: CreateOrgBody, response: { 201: Organization, ...errors(401, 409) } },
    handler: async (req, reply) => reply.status(201).send(await orgs.createOrganization(deps, requireUser(req), req.body, requestContext(req))),
  });

  app.get('/users/me/organizations', {
    schema: { tags, security, summary: 'Organizations the caller belongs to', querystring: PageQuery, response: { 200: OrgSummaryList, ...errors(401) } },
    handler: async (req) => orgs.listMyOrganizations(deps, requireUser(req), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  app.get('/organizations/:orgId', {
    schema: { tags, security, summary: 'An organization (members only)', params: OrgParams, response: { 200: Organization, ...orgErrors } },
    handler: async (req) => orgs.getOrganization(deps, await authorize(req, req.params.orgId, 'org:read')),
  });

  app.patch('/organizations/:orgId', {
    schema: {
      tags,
      security,
      summary: 'Update an organization (org:update); settings are merged, null clears description and logoUrl',
      params: OrgParams,
      body: PatchOrgBody,
      response: { 200: Organization, ...orgErrors },
    },
    handler: async (req) => orgs.updateOrganization(deps, await authorize(req, req.params.orgId, 'org:update'), req.body),
  });

  app.delete('/organizations/:orgId', {
    schema: { tags, security, summary: 'Delete an organization and its data, ending its subscription (owner)', params: OrgParams, response: { 200: Message, ...errors(401, 403, 404, 502) } },
    handler: async (req) => {
      const access = await authorize(req, req.params.orgId, 'org:delete');
      // The subscription ends at the provider first; if that fails (502) nothing is deleted.
      await cancelForDeletion(deps, access.organizationId);
      return orgs.deleteOrganization(deps, access);
    },
  });

  app.post('/organizations/:orgId/transfer-ownership', {
    schema: {
      tags,
      security,
      summary: 'Hand the organization to another member (owner); the old owner becomes admin',
      params: OrgParams,
      body: TransferBody,
      response: { 200: TransferResponse, ...orgErrors },
    },
    handler: async (req) => orgs.transferOwnership(deps, await authorize(req, req.params.orgId, 'org:transfer'), req.body.memberId),
  });

  app.get('/organizations/:orgId/members', {
    schema: { tags: memberTags, security, summary: 'Members (members:read)', params: OrgParams, querystring: PageQuery, response: { 200: MemberList, ...orgErrors } },
    handler: async (req) => members.listMembers(deps, await authorize(req, req.params.orgId, 'members:read'), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  app.patch('/organizations/:orgId/members/:memberId', {
    schema: {
      tags: memberTags,
      security,
      summary: "Change a member's role (members:update); not the owner's, not your own",
      params: MemberParams,
      body: RoleBody,
      response: { 200: Member, ...orgErrors },
    },
    handler: async (req) => members.updateMemberRole(deps, await authorize(req, req.params.orgId, 'members:update'), req.params.memberId, req.body.role),
  });

  app.delete('/organizations/:orgId/members/:memberId', {
    schema: { tags: memberTags, security, summary: 'Remove a member (members:remove); not the owner', params: MemberParams, response: { 200: Message, ...orgErrors } },
    handler: async (req) => members.removeMember(deps, await authorize(req, req.params.orgId, 'members:remove'), req.params.memberId),
  });

  app.post('/organizations/:orgId/leave', {
    schema: { tags: memberTags, security, summary: 'Leave the organization (not the owner)', params: OrgParams, response: { 200: Message, ...orgErrors } },
    handler: async (req) => members.leaveOrganization(deps, await authorize(req, req.params.orgId, 'org:read')),
  });

  app.post('/organizations/:orgId/invitations', {
    schema: {
      tags: inviteTags,
      security,
      summary: 'Invite someone by email (invitations:create)',
      params: OrgParams,
      body: InviteBody,
      response: { 201: InvitationWithUrl, ...errors(401, 402, 403, 404, 409) },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await invitations.createInvitation(deps, await authorize(req, req.params.orgId, 'invitations:create'), req.body)),
  });

  app.get('/organizations/:orgId/invitations', {
    schema: {
      tags: inviteTags,
      security,
      summary: 'Invitations, newest first, optionally by status (members:read)',
      params: OrgParams,
      querystring: InvitationQuery,
      response: { 200: InvitationList, ...orgErrors },
    },
    handler: async (req) =>
      invitations.listInvitations(deps, await authorize(req, req.params.orgId, 'members:read'), {
        page: req.query.page ?? 1,
        pageSize: req.query.pageSize ?? 20,
        status: req.query.status,
      }),
  });

  app.delete('/organizations/:orgId/invitations/:invitationId', {
    schema: { tags: inviteTags, security, summary: 'Revoke a pending invitation (invitations:manage)', params: InvitationParams, response: { 200: Invitation, ...errors(401, 403, 404, 409) } },
    handler: async (req) => invitations.revokeInvitation(deps, await authorize(req, req.params.orgId, 'invitations:manage'), req.params.invitationId),
  });

  app.post('/organizations/:orgId/invitations/:invitationId/resend', {
    schema: {
      tags: inviteTags,
      security,
      summary: 'Send the invitation again with a new link and a new 7 days (invitations:manage)',
      params: InvitationParams,
      response: { 200: InvitationWithUrl, ...errors(401, 402, 403, 404, 409) },
    },
    handler: async (req) => invitations.resendInvitation(deps, await authorize(req, req.params.orgId, 'invitations:manage'), req.params.invitationId),
  });

  app.post('/invitations/accept', {
    schema: {
      tags: inviteTags,
      security,
      summary: 'Accept an invitation; the caller’s verified email must be the invited one',
      body: Body({ token: Token }),
      response: { 200: Member, ...errors(401, 403, 409) },
    },
    handler: async (req) => invitations.acceptInvitation(deps, requireUser(req), req.body.token, requestContext(req)),
  });

  app.post('/invitations/decline', {
    config: { auth: 'optional' },
    schema: { tags: inviteTags, summary: 'Decline an invitation (the token is enough)', body: Body({ token: Token }), response: { 200: Type.Object({ message: Type.String() }), ...errors() } },
    handler: async (req) => invitations.declineInvitation(deps, req.body.token),
  });
};
