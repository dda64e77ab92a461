// Members and invitations of an organization. The routes whose permission an API-key scope grants
// (read:members, write:members) accept a key too, within the key restrictions (docs/api.md#api-key-restrictions).
import type { Infra } from '../../infra.js';
import type { ErrorExample } from '../../http/errors-doc.js';
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

const MEMBER_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Member not found' };
const INVITATION_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Invitation not found' };
const NOT_PENDING: ErrorExample = {
  code: 'CONFLICT',
  message: 'The invitation is accepted',
  details: 'Only a pending invitation can be changed this way',
};
const SEATS: ErrorExample = {
  code: 'PLAN_LIMIT_EXCEEDED',
  message: 'Plan limit reached: 3 members',
  details: "Upgrade the organization's plan to add more members",
};
const KEY_ROLE: ErrorExample = {
  code: 'AUTHORIZATION_ERROR',
  name: 'apiKeyRole',
  message: 'An API key cannot give the admin role',
  details: 'API keys give only the member and viewer roles; a person with the admin role must do this',
};
const INVALID_TOKEN: ErrorExample = {
  code: 'VALIDATION_ERROR',
  message: 'Invalid or expired invitation',
  details: 'token: is unknown, expired, revoked or already used',
};
const KEYS = 'Owners and admins, or an API key of the organization with the scope';

export function memberRoutes(deps: Infra) {
  const tags = ['Members'];
  return [
    route({
      method: 'GET',
      url: '/organizations/:orgId/members',
      auth: { org: 'orgId', permission: 'members:read' },
      operationId: 'listMembers',
      tags,
      summary: 'Members (members:read)',
      description: 'Every member may list them, or an API key with read:members. In joining order.',
      schema: { params: OrgParams, querystring: PageQuery, response: { 200: ref(MemberList, 'A page of members') } },
      handler: (ctx, { query }) => members.listMembers(deps, ctx.access, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'PATCH',
      url: '/organizations/:orgId/members/:memberId',
      auth: { org: 'orgId', permission: 'members:update' },
      operationId: 'updateMemberRole',
      tags,
      summary: "Change a member's role (members:update); not the owner's, not your own",
      description: `${KEYS} write:members. Nobody becomes owner this way (transfer ownership). Demoting below admin revokes the keys the member made; a key never gives or touches a role above member (docs/api.md#members).`,
      schema: {
        params: MemberParams,
        body: ref(RoleBody),
        response: { 200: ref(Member, 'The member with the new role') },
      },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: "The owner's role cannot be changed",
          details: 'memberId: is the owner; transfer ownership instead',
        },
        KEY_ROLE,
        MEMBER_NOT_FOUND,
      ],
      handler: (ctx, { params, body }) => members.updateMemberRole(deps, ctx.access, params.memberId, body.role),
    }),
    route({
      method: 'DELETE',
      url: '/organizations/:orgId/members/:memberId',
      auth: { org: 'orgId', permission: 'members:remove' },
      operationId: 'removeMember',
      tags,
      summary: 'Remove a member (members:remove); not the owner',
      description: `${KEYS} write:members. The keys the member made in the organization are revoked with the membership; sends member.removed.`,
      schema: { params: MemberParams, response: { 200: ref(Message, 'Removed') } },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'The owner cannot be removed',
          details: 'memberId: is the owner; transfer ownership first',
        },
        MEMBER_NOT_FOUND,
      ],
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
      operationId: 'leaveOrganization',
      tags,
      summary: 'Leave the organization (not the owner)',
      description:
        'The owner cannot leave (400): transfer ownership first, or delete the organization. The keys you made there are revoked; sends member.removed.',
      schema: { params: OrgParams, response: { 200: ref(Message, 'Left') } },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'The owner cannot leave the organization',
          details: 'Transfer ownership first, or delete the organization',
        },
      ],
      handler: async (ctx) => {
        await members.leaveOrganization(deps, ctx.access);
        return { message: 'You have left the organization' };
      },
    }),
  ];
}

export function invitationRoutes(deps: Infra) {
  const tags = ['Invitations'];
  return [
    route({
      method: 'POST',
      url: '/organizations/:orgId/invitations',
      auth: { org: 'orgId', permission: 'invitations:create' },
      operationId: 'createInvitation',
      tags,
      summary: 'Invite someone by email (invitations:create)',
      description: `${KEYS} write:members. Mails \`inviteUrl\` (valid 7 days). 409 if the address is a member or already invited; 402 when members plus pending invitations reach the plan's member limit (docs/api.md#invitations).`,
      schema: {
        params: OrgParams,
        body: ref(InviteBody),
        response: { 201: ref(InvitationWithUrl, 'The invitation and its link') },
      },
      errors: [
        SEATS,
        KEY_ROLE,
        {
          code: 'CONFLICT',
          message: 'An invitation is already pending for this email',
          details: 'email: has a pending invitation',
        },
      ],
      handler: (ctx, { body }) => invitations.createInvitation(deps, ctx.access, body),
    }),
    route({
      method: 'GET',
      url: '/organizations/:orgId/invitations',
      auth: { org: 'orgId', permission: 'members:read' },
      operationId: 'listInvitations',
      tags,
      summary: 'Invitations, newest first, optionally by status (members:read)',
      description:
        'Every member may list them, or an API key with read:members; `status` filters them (`expired`: pending past its expiry).',
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
      operationId: 'revokeInvitation',
      tags,
      summary: 'Revoke a pending invitation (invitations:manage)',
      description: `${KEYS} write:members. Its link stops working; an invitation that is not pending answers 409.`,
      schema: { params: InvitationParams, response: { 200: ref(Invitation, 'The revoked invitation') } },
      errors: [INVITATION_NOT_FOUND, NOT_PENDING],
      handler: (ctx, { params }) => invitations.revokeInvitation(deps, ctx.access, params.invitationId),
    }),
    route({
      method: 'POST',
      url: '/organizations/:orgId/invitations/:invitationId/resend',
      auth: { org: 'orgId', permission: 'invitations:manage' },
      operationId: 'resendInvitation',
      tags,
      summary: 'Send the invitation again with a new link and a new 7 days (invitations:manage)',
      description: `${KEYS} write:members. The old link stops working. An expired invitation can be resent while a seat is free (402 otherwise); one that is not pending answers 409.`,
      schema: {
        params: InvitationParams,
        response: { 200: ref(InvitationWithUrl, 'The invitation and its new link') },
      },
      errors: [SEATS, KEY_ROLE, INVITATION_NOT_FOUND, NOT_PENDING],
      handler: (ctx, { params }) => invitations.resendInvitation(deps, ctx.access, params.invitationId),
    }),
    route({
      method: 'POST',
      url: '/invitations/accept',
      auth: 'user',
      operationId: 'acceptInvitation',
      tags,
      summary: 'Accept an invitation; the caller’s verified email must be the invited one',
      description:
        'Creates the membership with the invited role and sends member.added. Another address: 403 AUTHORIZATION_ERROR; an unverified one: 403 EMAIL_NOT_VERIFIED; already a member: 409.',
      schema: { body: ref(InvitationTokenBody), response: { 200: ref(Member, 'The new membership') } },
      errors: [
        INVALID_TOKEN,
        {
          code: 'AUTHORIZATION_ERROR',
          name: 'otherAddress',
          message: 'This invitation was sent to another email address',
          details: 'Sign in with the invited email address to accept it',
        },
        {
          code: 'EMAIL_NOT_VERIFIED',
          message: 'Email address not verified',
          details: 'Verify your email address before accepting the invitation',
        },
        { code: 'CONFLICT', message: 'You are already a member of this organization' },
      ],
      handler: (ctx, { body }) => invitations.acceptInvitation(deps, ctx.user, body.token, ctx.context),
    }),
    route({
      method: 'POST',
      url: '/invitations/decline',
      auth: 'optional',
      operationId: 'declineInvitation',
      tags,
      summary: 'Decline an invitation (the token is enough)',
      description:
        'No credential is needed: the token of the invitation link is enough. An unknown, expired, revoked or used token answers 400.',
      schema: { body: ref(InvitationTokenBody), response: { 200: ref(Message, 'Declined') } },
      errors: [INVALID_TOKEN],
      handler: async (_ctx, { body }) => {
        await invitations.declineInvitation(deps, body.token);
        return { message: 'Invitation declined' };
      },
    }),
  ];
}
