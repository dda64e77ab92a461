// Members and invitations of an organization. The routes whose permission an API-key scope grants
// (read:members, write:members) accept a key too, within the key restrictions (docs/api.md#api-key-restrictions).
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Message, OrgParams, ref } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import * as invitations from './invitations.service.js';
import * as members from './members.service.js';
import {
  Invitation,
  InvitationList,
  InvitationParams,
  InvitationQuery,
  InvitationTokenBody,
  InvitationWithUrl,
  InviteBody,
  Member,
  MemberList,
  MemberParams,
  RoleBody,
} from './schemas.js';
import { docs } from './docs.js';

export function memberRoutes(deps: Infra) {
  return [
    route({
      method: 'GET',
      url: '/organizations/:orgId/members',
      auth: { org: 'orgId', permission: 'members:read' },
      doc: docs.listMembers,
      schema: { params: OrgParams, querystring: PageQuery, response: { 200: ref(MemberList, 'A page of members') } },
      handler: (ctx, { query }) => members.listMembers(deps, ctx.access, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'PATCH',
      url: '/organizations/:orgId/members/:memberId',
      auth: { org: 'orgId', permission: 'members:update' },
      doc: docs.updateMemberRole,
      schema: {
        params: MemberParams,
        body: ref(RoleBody),
        response: { 200: ref(Member, 'The member with the new role') },
      },
      handler: (ctx, { params, body }) => members.updateMemberRole(deps, ctx.access, params.memberId, body.role),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/members/:memberId',
      auth: { org: 'orgId', permission: 'members:remove' },
      doc: docs.removeMember,
      schema: { params: MemberParams, response: { 200: ref(Message, 'Removed') } },
      handler: async (ctx, { params }) => {
        await members.removeMember(deps, ctx.access, params.memberId);
        return { message: 'Member removed' };
      },
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/leave',
      // Every member holds org:read, so the guard refuses a non-member only.
      auth: {
        org: 'orgId',
        permission: 'org:read',
        errors: [
          { code: 'AUTHORIZATION_ERROR', name: 'notAMember', message: 'You are not a member of this organization' },
          { code: 'NOT_FOUND', message: 'Organization not found' },
        ],
      },
      doc: docs.leaveOrganization,
      schema: { params: OrgParams, response: { 200: ref(Message, 'Left') } },
      handler: async (ctx) => {
        await members.leaveOrganization(deps, ctx.access);
        return { message: 'You have left the organization' };
      },
    }),
  ];
}

export function invitationRoutes(deps: Infra) {
  return [
    route({
      method: 'POST',
      url: '/organizations/:orgId/invitations',
      auth: { org: 'orgId', permission: 'invitations:create' },
      doc: docs.createInvitation,
      schema: {
        params: OrgParams,
        body: ref(InviteBody),
        response: { 201: ref(InvitationWithUrl, 'The invitation and its link') },
      },
      handler: (ctx, { body }) => invitations.createInvitation(deps, ctx.access, body),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/invitations',
      auth: { org: 'orgId', permission: 'members:read' },
      doc: docs.listInvitations,
      schema: {
        params: OrgParams,
        querystring: InvitationQuery,
        response: { 200: ref(InvitationList, 'A page of invitations') },
      },
      handler: (ctx, { query }) =>
        invitations.listInvitations(deps, ctx.access, {
          page: query.page ?? 1,
          pageSize: query.pageSize ?? 20,
          status: query.status,
        }),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/invitations/:invitationId',
      auth: { org: 'orgId', permission: 'invitations:manage' },
      doc: docs.revokeInvitation,
      schema: { params: InvitationParams, response: { 200: ref(Invitation, 'The revoked invitation') } },
      handler: (ctx, { params }) => invitations.revokeInvitation(deps, ctx.access, params.invitationId),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/invitations/:invitationId/resend',
      auth: { org: 'orgId', permission: 'invitations:manage' },
      doc: docs.resendInvitation,
      schema: {
        params: InvitationParams,
        response: { 200: ref(InvitationWithUrl, 'The invitation and its new link') },
      },
      handler: (ctx, { params }) => invitations.resendInvitation(deps, ctx.access, params.invitationId),
    }),
    route({
      method: 'POST',
      url: '/invitations/accept',
      auth: 'user',
      doc: docs.acceptInvitation,
      schema: { body: ref(InvitationTokenBody), response: { 200: ref(Member, 'The new membership') } },
      handler: (ctx, { body }) => invitations.acceptInvitation(deps, ctx.user, body.token, ctx.context),
    }),
    route({
      method: 'POST',
      url: '/invitations/decline',
      auth: 'optional',
      doc: docs.declineInvitation,
      schema: { body: ref(InvitationTokenBody), response: { 200: ref(Message, 'Declined') } },
      handler: async (_ctx, { body }) => {
        await invitations.declineInvitation(deps, body.token);
        return { message: 'Invitation declined' };
      },
    }),
  ];
}
