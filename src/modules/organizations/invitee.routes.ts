// The invitee's side of invitations (docs/api.md#invitation-preview): what an invitation offers
// before joining, by the link's token; and, signed in with a verified address, the pending
// invitations to it, accepted or declined without the link.
import type { Infra } from '../../infra.js';
import type { ErrorExample } from '../../http/errors-doc.js';
import { route } from '../../http/route.js';
import { Message, ref } from '../../http/schemas.js';
import * as invitations from './invitations.service.js';
import { InvitationPreview, InvitationTokenBody, Member, MyInvitationList, MyInvitationParams } from './schemas.js';

const tags = ['Invitations'];
const NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Invitation not found' };

export function inviteeRoutes(deps: Infra) {
  return [
    route({
      method: 'POST',
      url: '/invitations/preview',
      auth: 'none',
      bucket: 'auth',
      operationId: 'previewInvitation',
      tags,
      summary: 'What an invitation offers, by its token (no account needed)',
      description:
        'For the invitation page: the organization, who invited, the role and when the link expires. An unknown, expired, used or revoked token answers 404. Nothing changes.',
      schema: { body: ref(InvitationTokenBody), response: { 200: ref(InvitationPreview, 'The invitation') } },
      errors: [NOT_FOUND],
      handler: (_ctx, { body }) => invitations.previewInvitation(deps, body.token),
    }),
    route({
      method: 'GET',
      url: '/users/me/invitations',
      auth: 'user',
      operationId: 'listMyInvitations',
      tags,
      summary: 'The pending invitations to your verified email address',
      description:
        'Newest first, across organizations. While the address is unverified the list is empty: an invitation goes to whoever proves the address.',
      schema: { response: { 200: ref(MyInvitationList, 'The pending invitations') } },
      handler: (ctx) => invitations.listMyInvitations(deps, ctx.user),
    }),
    route({
      method: 'POST',
      url: '/users/me/invitations/:invitationId/accept',
      auth: 'user',
      operationId: 'acceptMyInvitation',
      tags,
      summary: 'Accept one of your pending invitations (no link needed)',
      description:
        'As `POST /invitations/accept` with the link: the membership with the invited role, member.added and an audit entry. An invitation to another address, or no longer pending: 404; already a member: 409.',
      schema: { params: MyInvitationParams, response: { 200: ref(Member, 'The new membership') } },
      errors: [NOT_FOUND, { code: 'CONFLICT', message: 'You are already a member of this organization' }],
      handler: (ctx, { params }) => invitations.acceptMyInvitation(deps, ctx.user, params.invitationId, ctx.context),
    }),
    route({
      method: 'POST',
      url: '/users/me/invitations/:invitationId/decline',
      auth: 'user',
      operationId: 'declineMyInvitation',
      tags,
      summary: 'Decline one of your pending invitations',
      description: 'An invitation to another address, or no longer pending: 404.',
      schema: { params: MyInvitationParams, response: { 200: ref(Message, 'Declined') } },
      errors: [NOT_FOUND],
      handler: async (ctx, { params }) => {
        await invitations.declineMyInvitation(deps, ctx.user, params.invitationId);
        return { message: 'Invitation declined' };
      },
    }),
  ];
}
