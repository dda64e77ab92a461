// The invitee's side of invitations (docs/api.md#invitation-preview): what an invitation offers
// before joining, by the link's token; and, signed in with a verified address, the pending
// invitations to it, accepted or declined without the link.
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Message, ref } from '../../http/schemas.js';
import { docs } from './docs.js';
import * as invitations from './invitations.service.js';
import { InvitationPreview, InvitationTokenBody, Member, MyInvitationList, MyInvitationParams } from './schemas.js';

export function inviteeRoutes(deps: Infra) {
  return [
    route({
      method: 'POST',
      url: '/invitations/preview',
      auth: 'none',
      bucket: 'auth',
      doc: docs.previewInvitation,
      schema: { body: ref(InvitationTokenBody), response: { 200: ref(InvitationPreview, 'The invitation') } },
      handler: (_ctx, { body }) => invitations.previewInvitation(deps, body.token),
    }),
    route({
      method: 'GET',
      url: '/users/me/invitations',
      auth: 'user',
      doc: docs.listMyInvitations,
      schema: { response: { 200: ref(MyInvitationList, 'The pending invitations') } },
      handler: (ctx) => invitations.listMyInvitations(deps, ctx.user),
    }),
    route({
      method: 'POST',
      url: '/users/me/invitations/:invitationId/accept',
      auth: 'user',
      doc: docs.acceptMyInvitation,
      schema: { params: MyInvitationParams, response: { 200: ref(Member, 'The new membership') } },
      handler: (ctx, { params }) => invitations.acceptMyInvitation(deps, ctx.user, params.invitationId, ctx.context),
    }),
    route({
      method: 'POST',
      url: '/users/me/invitations/:invitationId/decline',
      auth: 'user',
      doc: docs.declineMyInvitation,
      schema: { params: MyInvitationParams, response: { 200: ref(Message, 'Declined') } },
      handler: async (ctx, { params }) => {
        await invitations.declineMyInvitation(deps, ctx.user, params.invitationId);
        return { message: 'Invitation declined' };
      },
    }),
  ];
}
