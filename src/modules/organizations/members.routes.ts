// Members and invitations of an organization. The routes whose permission an API-key scope grants
// (read:members, write:members) accept a key too, within the key restrictions (docs/api.md#api-key-restrictions).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Infra } from '../../infra.js';
import { orgAccess, requestContext, requireUser } from '../../http/access.js';
import { errors, orgAccessErrors, type ErrorExample } from '../../http/errors-doc.js';
import { bearerAuth, Message, OrgParams, orgSecurity, publicRoute, ref } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import * as invitations from './invitations.service.js';
import * as members from './members.service.js';
import { Invitation, InvitationList, InvitationParams, InvitationQuery, InvitationTokenBody, InvitationWithUrl, InviteBody, Member, MemberList, MemberParams, RoleBody } from './schemas.js';

const MEMBER_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Member not found' };
const INVITATION_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Invitation not found' };
const NOT_PENDING: ErrorExample = { code: 'CONFLICT', message: 'The invitation is accepted', details: 'Only a pending invitation can be changed this way' };
const SEATS: ErrorExample = { code: 'PLAN_LIMIT_EXCEEDED', message: 'Plan limit reached: 3 members', details: "Upgrade the organization's plan to add more members" };
const KEY_ROLE: ErrorExample = {
  code: 'AUTHORIZATION_ERROR',
  name: 'apiKeyRole',
  message: 'An API key cannot give the admin role',
  details: 'API keys give only the member and viewer roles; a person with the admin role must do this',
};
const INVALID_TOKEN: ErrorExample = { code: 'VALIDATION_ERROR', message: 'Invalid or expired invitation', details: 'token: is unknown, expired, revoked or already used' };
const KEYS = 'Owners and admins, or an API key of the organization with the scope';

export const memberRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const authorize = orgAccess(deps);
  const tags = ['Members'];

  app.get('/organizations/:orgId/members', {
    schema: {
      tags,
      security: orgSecurity('members:read'),
      operationId: 'listMembers',
      summary: 'Members (members:read)',
      description: 'Every member may list them, or an API key with read:members. In joining order.',
      params: OrgParams,
      querystring: PageQuery,
      response: { 200: ref(MemberList, 'A page of members'), ...errors(...orgAccessErrors('members:read')) },
    },
    handler: async (req) => members.listMembers(deps, await authorize(req, req.params.orgId, 'members:read'), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  app.patch('/organizations/:orgId/members/:memberId', {
    schema: {
      tags,
      security: orgSecurity('members:update'),
      operationId: 'updateMemberRole',
      summary: "Change a member's role (members:update); not the owner's, not your own",
      description: `${KEYS} write:members. Nobody becomes owner this way (transfer ownership). Demoting below admin revokes the keys the member made; a key never gives or touches a role above member (docs/api.md#members).`,
      params: MemberParams,
      body: ref(RoleBody),
      response: {
        200: ref(Member, 'The member with the new role'),
        ...errors({ code: 'VALIDATION_ERROR', message: "The owner's role cannot be changed", details: 'memberId: is the owner; transfer ownership instead' }, ...orgAccessErrors('members:update'), KEY_ROLE, MEMBER_NOT_FOUND),
      },
    },
    handler: async (req) => members.updateMemberRole(deps, await authorize(req, req.params.orgId, 'members:update'), req.params.memberId, req.body.role),
  });

  app.delete('/organizations/:orgId/members/:memberId', {
    schema: {
      tags,
      security: orgSecurity('members:remove'),
      operationId: 'removeMember',
      summary: 'Remove a member (members:remove); not the owner',
      description: `${KEYS} write:members. The keys the member made in the organization are revoked with the membership; sends member.removed.`,
      params: MemberParams,
      response: {
        200: ref(Message, 'Removed'),
        ...errors({ code: 'VALIDATION_ERROR', message: 'The owner cannot be removed', details: 'memberId: is the owner; transfer ownership first' }, ...orgAccessErrors('members:remove'), MEMBER_NOT_FOUND),
      },
    },
    handler: async (req) => {
      await members.removeMember(deps, await authorize(req, req.params.orgId, 'members:remove'), req.params.memberId);
      return { message: 'Member removed' };
    },
  });

  app.post('/organizations/:orgId/leave', {
    schema: {
      tags,
      security: bearerAuth,
      operationId: 'leaveOrganization',
      summary: 'Leave the organization (not the owner)',
      description: 'The owner cannot leave (400): transfer ownership first, or delete the organization. The keys you made there are revoked; sends member.removed.',
      params: OrgParams,
      response: {
        200: ref(Message, 'Left'),
        ...errors(
          { code: 'VALIDATION_ERROR', message: 'The owner cannot leave the organization', details: 'Transfer ownership first, or delete the organization' },
          { code: 'AUTHORIZATION_ERROR', name: 'notAMember', message: 'You are not a member of this organization' },
          { code: 'NOT_FOUND', message: 'Organization not found' },
        ),
      },
    },
    handler: async (req) => {
      await members.leaveOrganization(deps, await authorize(req, req.params.orgId, 'org:read'));
      return { message: 'You have left the organization' };
    },
  });
};

export const invitationRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const authorize = orgAccess(deps);
  const tags = ['Invitations'];

  app.post('/organizations/:orgId/invitations', {
    schema: {
      tags,
      security: orgSecurity('invitations:create'),
      operationId: 'createInvitation',
      summary: 'Invite someone by email (invitations:create)',
      description: `${KEYS} write:members. Mails \`inviteUrl\` (valid 7 days). 409 if the address is a member or already invited; 402 when members plus pending invitations reach the plan's member limit (docs/api.md#invitations).`,
      params: OrgParams,
      body: ref(InviteBody),
      response: {
        201: ref(InvitationWithUrl, 'The invitation and its link'),
        ...errors(SEATS, ...orgAccessErrors('invitations:create'), KEY_ROLE, { code: 'CONFLICT', message: 'An invitation is already pending for this email', details: 'email: has a pending invitation' }),
      },
    },
    handler: async (req, reply) => reply.status(201).send(await invitations.createInvitation(deps, await authorize(req, req.params.orgId, 'invitations:create'), req.body)),
  });

  app.get('/organizations/:orgId/invitations', {
    schema: {
      tags,
      security: orgSecurity('members:read'),
      operationId: 'listInvitations',
      summary: 'Invitations, newest first, optionally by status (members:read)',
      description: 'Every member may list them, or an API key with read:members; `status` filters them (`expired`: pending past its expiry).',
      params: OrgParams,
      querystring: InvitationQuery,
      response: { 200: ref(InvitationList, 'A page of invitations'), ...errors(...orgAccessErrors('members:read')) },
    },
    handler: async (req) =>
      invitations.listInvitations(deps, await authorize(req, req.params.orgId, 'members:read'), { page: req.query.page ?? 1, pageSize: req.query.pageSize ?? 20, status: req.query.status }),
  });

  app.delete('/organizations/:orgId/invitations/:invitationId', {
    schema: {
      tags,
      security: orgSecurity('invitations:manage'),
      operationId: 'revokeInvitation',
      summary: 'Revoke a pending invitation (invitations:manage)',
      description: `${KEYS} write:members. Its link stops working; an invitation that is not pending answers 409.`,
      params: InvitationParams,
      response: { 200: ref(Invitation, 'The revoked invitation'), ...errors(...orgAccessErrors('invitations:manage'), INVITATION_NOT_FOUND, NOT_PENDING) },
    },
    handler: async (req) => invitations.revokeInvitation(deps, await authorize(req, req.params.orgId, 'invitations:manage'), req.params.invitationId),
  });

  app.post('/organizations/:orgId/invitations/:invitationId/resend', {
    schema: {
      tags,
      security: orgSecurity('invitations:manage'),
      operationId: 'resendInvitation',
      summary: 'Send the invitation again with a new link and a new 7 days (invitations:manage)',
      description: `${KEYS} write:members. The old link stops working. An expired invitation can be resent while a seat is free (402 otherwise); one that is not pending answers 409.`,
      params: InvitationParams,
      response: {
        200: ref(InvitationWithUrl, 'The invitation and its new link'),
        ...errors(SEATS, ...orgAccessErrors('invitations:manage'), KEY_ROLE, INVITATION_NOT_FOUND, NOT_PENDING),
      },
    },
    handler: async (req) => invitations.resendInvitation(deps, await authorize(req, req.params.orgId, 'invitations:manage'), req.params.invitationId),
  });

  app.post('/invitations/accept', {
    schema: {
      tags,
      security: bearerAuth,
      operationId: 'acceptInvitation',
      summary: 'Accept an invitation; the caller’s verified email must be the invited one',
      description: 'Creates the membership with the invited role and sends member.added. Another address: 403 AUTHORIZATION_ERROR; an unverified one: 403 EMAIL_NOT_VERIFIED; already a member: 409.',
      body: ref(InvitationTokenBody),
      response: {
        200: ref(Member, 'The new membership'),
        ...errors(
          INVALID_TOKEN,
          { code: 'AUTHORIZATION_ERROR', name: 'otherAddress', message: 'This invitation was sent to another email address', details: 'Sign in with the invited email address to accept it' },
          { code: 'EMAIL_NOT_VERIFIED', message: 'Email address not verified', details: 'Verify your email address before accepting the invitation' },
          { code: 'CONFLICT', message: 'You are already a member of this organization' },
        ),
      },
    },
    handler: async (req) => invitations.acceptInvitation(deps, requireUser(req), req.body.token, requestContext(req)),
  });

  app.post('/invitations/decline', {
    config: { auth: 'optional' },
    schema: {
      tags,
      security: publicRoute,
      operationId: 'declineInvitation',
      summary: 'Decline an invitation (the token is enough)',
      description: 'No credential is needed: the token of the invitation link is enough. An unknown, expired, revoked or used token answers 400.',
      body: ref(InvitationTokenBody),
      response: { 200: ref(Message, 'Declined'), ...errors(INVALID_TOKEN) },
    },
    handler: async (req) => {
      await invitations.declineInvitation(deps, req.body.token);
      return { message: 'Invitation declined' };
    },
  });
};
