// The OpenAPI prose of the organization, member and invitation routes (routes.ts, members.routes.ts),
// by operationId: each operation's summary, description and the error examples its services answer.
import { type ErrorExample, invalidBody, notFound } from '../../http/errors-doc.js';
import { routeDocs } from '../../http/route.js';

const MEMBER_NOT_FOUND = notFound('Member not found');
const INVITATION_NOT_FOUND = notFound('Invitation not found');
const NOT_PENDING: ErrorExample = {
  code: 'CONFLICT',
  message: 'The invitation is accepted',
  details: 'Only a pending invitation can be changed this way',
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
const BLANK_NAME = invalidBody('name: must not be blank');

export const docs = {
  ...routeDocs(['Members'], {
    listMembers: {
      summary: 'Members (members:read)',
      description: 'Every member may list them, or an API key with read:members. In joining order.',
    },
    updateMemberRole: {
      summary: "Change a member's role (members:update); not the owner's, not your own",
      description: `${KEYS} write:members. Nobody becomes owner this way (transfer ownership). Demoting below admin revokes the keys the member made; a key never gives or touches a role above member (docs/api.md#members).`,
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: "The owner's role cannot be changed",
          details: 'memberId: is the owner; transfer ownership instead',
        },
        KEY_ROLE,
        MEMBER_NOT_FOUND,
      ],
    },
    removeMember: {
      summary: 'Remove a member (members:remove); not the owner',
      description: `${KEYS} write:members. The keys the member made in the organization are revoked with the membership; sends member.removed.`,
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'The owner cannot be removed',
          details: 'memberId: is the owner; transfer ownership first',
        },
        MEMBER_NOT_FOUND,
      ],
    },
    leaveOrganization: {
      summary: 'Leave the organization (not the owner)',
      description:
        'The owner cannot leave (400): transfer ownership first, or delete the organization. The keys you made there are revoked; sends member.removed.',
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'The owner cannot leave the organization',
          details: 'Transfer ownership first, or delete the organization',
        },
      ],
    },
  }),
  ...routeDocs(['Invitations'], {
    createInvitation: {
      summary: 'Invite someone by email (invitations:create)',
      description: `${KEYS} write:members. Mails \`inviteUrl\` (valid 7 days). 409 if the address is a member or already invited; 402 when members plus pending invitations reach the plan's member limit (docs/api.md#invitations).`,
      errors: [
        'PLAN_LIMIT_EXCEEDED',
        KEY_ROLE,
        {
          code: 'CONFLICT',
          message: 'An invitation is already pending for this email',
          details: 'email: has a pending invitation',
        },
      ],
    },
    listInvitations: {
      summary: 'Invitations, newest first, optionally by status (members:read)',
      description:
        'Every member may list them, or an API key with read:members; `status` filters them (`expired`: pending past its expiry).',
    },
    revokeInvitation: {
      summary: 'Revoke a pending invitation (invitations:manage)',
      description: `${KEYS} write:members. Its link stops working; an invitation that is not pending answers 409.`,
      errors: [INVITATION_NOT_FOUND, NOT_PENDING],
    },
    resendInvitation: {
      summary: 'Send the invitation again with a new link and a new 7 days (invitations:manage)',
      description: `${KEYS} write:members. The old link stops working. An expired invitation can be resent while a seat is free (402 otherwise); one that is not pending answers 409.`,
      errors: ['PLAN_LIMIT_EXCEEDED', KEY_ROLE, INVITATION_NOT_FOUND, NOT_PENDING],
    },
    acceptInvitation: {
      summary: 'Accept an invitation; the caller’s verified email must be the invited one',
      description:
        'Creates the membership with the invited role and sends member.added. Another address: 403 AUTHORIZATION_ERROR; an unverified one: 403 EMAIL_NOT_VERIFIED; already a member: 409.',
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
    },
    declineInvitation: {
      summary: 'Decline an invitation (the token is enough)',
      description:
        'No credential is needed: the token of the invitation link is enough. An unknown, expired, revoked or used token answers 400.',
      errors: [INVALID_TOKEN],
    },
  }),
  ...routeDocs(['Organizations'], {
    createOrganization: {
      summary: 'Create an organization; the caller becomes its owner',
      description:
        'The organization starts on the Free plan with the caller as its owner. A slug already taken answers 409, so repeating a create is detected (docs/api.md#organization-routes).',
      errors: [
        BLANK_NAME,
        {
          code: 'CONFLICT',
          message: 'An organization with this slug already exists',
          details: 'slug: is already taken',
        },
      ],
    },
    listMyOrganizations: {
      summary: 'Organizations the caller belongs to',
      description: "The caller's memberships, newest first, each with the caller's role in it.",
    },
    getOrganization: {
      summary: 'An organization (members only)',
      description:
        'Any member may read it (org:read). An unknown organization answers 404, one you do not belong to 403. No API-key scope reaches it.',
    },
    updateOrganization: {
      summary: 'Update an organization (org:update); settings are merged, null clears description and logoUrl',
      description:
        'Owners and admins. `settings` is merged section by section; the slug cannot be changed (docs/api.md#organization-routes).',
      errors: [BLANK_NAME],
    },
    deleteOrganization: {
      summary: 'Delete an organization and its data, ending its subscription (owner)',
      description:
        'Once decided (the caller still its owner), ends a live subscription at the payment provider (if that fails: 502, nothing is deleted), then removes the organization with its members, invitations, projects, API keys, webhooks and audit log. No event is sent.',
      errors: [
        {
          code: 'PAYMENT_PROVIDER_ERROR',
          message: 'The payment provider failed',
          details: 'The subscription could not be canceled',
        },
      ],
    },
    transferOwnership: {
      summary: 'Hand the organization to another member (owner); the old owner becomes admin',
      description:
        '`memberId` is a membership id. The old owner becomes admin and keeps the keys they made; two member.updated events are sent. Naming yourself: 400.',
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'You already own this organization',
          details: 'memberId: is your own membership',
        },
        MEMBER_NOT_FOUND,
      ],
    },
  }),
  // The invitee's side (invitee.routes.ts).
  ...routeDocs(['Invitations'], {
    previewInvitation: {
      summary: 'What an invitation offers, by its token (no account needed)',
      description:
        'For the invitation page: the organization, who invited, the role and when the link expires. An unknown, expired, used or revoked token answers 404. Nothing changes.',
      errors: [INVITATION_NOT_FOUND],
    },
    listMyInvitations: {
      summary: 'The pending invitations to your verified email address',
      description:
        'Newest first, across organizations. While the address is unverified the list is empty: an invitation goes to whoever proves the address.',
    },
    acceptMyInvitation: {
      summary: 'Accept one of your pending invitations (no link needed)',
      description:
        'As `POST /invitations/accept` with the link: the membership with the invited role, member.added and an audit entry. An invitation to another address, or no longer pending: 404; already a member: 409.',
      errors: [INVITATION_NOT_FOUND, { code: 'CONFLICT', message: 'You are already a member of this organization' }],
    },
    declineMyInvitation: {
      summary: 'Decline one of your pending invitations',
      description: 'An invitation to another address, or no longer pending: 404.',
      errors: [INVITATION_NOT_FOUND],
    },
  }),
};
