// The account's life outside sign-in: moving it to a new email address, and deleting it
// (docs/api.md#email-change, docs/api.md#account-deletion).
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Body, Message, named, ref, Timestamp } from '../../http/schemas.js';
import { sessionCookies } from '../../http/session-cookie.js';
import { deleteAccount } from './account-deletion.service.js';
import { confirmEmailChange, requestEmailChange } from './email-change.service.js';
import { reauthenticate } from './reauthentication.js';
import { Email, Password, Token, TwoFactorCode } from './schemas.js';
import { docs } from './docs.js';

const EmailChangeBody = named('EmailChangeRequest', Body({ newEmail: Email, password: Password }), {
  examples: [{ newEmail: 'ada.king@example.com', password: 'Analytical-Engine-1' }],
});
const ConfirmEmailChangeBody = named('ConfirmEmailChangeRequest', Body({ token: Token }));
const DeleteAccountBody = named(
  'DeleteAccountRequest',
  Body({
    password: Type.Optional({ ...Password, description: 'The account’s password' }),
    twoFactorCode: Type.Optional({
      ...TwoFactorCode,
      description: 'For an account without a password: a TOTP or backup code',
    }),
  }),
  { examples: [{ password: 'Analytical-Engine-1' }] },
);
const ReauthenticateBody = named(
  'ReauthenticateRequest',
  Body({
    password: Type.Optional({ ...Password, description: 'The account’s password' }),
    twoFactorCode: Type.Optional({
      ...TwoFactorCode,
      description: 'For an account without a password: a TOTP or backup code',
    }),
  }),
  { examples: [{ password: 'Analytical-Engine-1' }] },
);
const Reauthenticated = named(
  'Reauthentication',
  Type.Object({
    authenticatedAt: Timestamp,
    expiresAt: {
      ...Timestamp,
      description: 'Until then (AUTH_REAUTH_WINDOW_S later) the session counts as freshly signed in',
    },
  }),
  { examples: [{ authenticatedAt: '2026-03-01T12:00:00.000Z', expiresAt: '2026-03-01T12:10:00.000Z' }] },
);
const Deleted = named('AccountDeleted', Type.Object({ deleted: Type.Literal(true) }), {
  examples: [{ deleted: true }],
});

export function accountRoutes(deps: Infra) {
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'POST',
      url: '/users/me/email',
      auth: 'user',
      doc: docs.requestEmailChange,
      schema: {
        body: ref(EmailChangeBody),
        response: { 202: ref(Message, 'The link is on its way to the new address') },
      },
      handler: async (ctx, { body }) => {
        await requestEmailChange(deps, ctx.user, body);
        return { message: 'A confirmation link has been sent to the new address' };
      },
    }),
    route({
      method: 'POST',
      url: '/auth/reauthenticate',
      auth: 'user',
      bucket: 'auth',
      doc: docs.reauthenticate,
      schema: {
        body: ref(ReauthenticateBody),
        response: { 200: ref(Reauthenticated, 'The session counts as freshly signed in until expiresAt') },
      },
      handler: (ctx, { body }) => reauthenticate(deps, ctx.user, body),
    }),
    route({
      method: 'POST',
      url: '/auth/confirm-email-change',
      auth: 'user',
      bucket: 'auth',
      doc: docs.confirmEmailChange,
      schema: { body: ref(ConfirmEmailChangeBody), response: { 200: ref(Message, 'The address is changed') } },
      handler: async (ctx, { body }) => {
        await confirmEmailChange(deps, ctx.user, body.token);
        return { message: 'Email address changed' };
      },
    }),
    route({
      method: 'DELETE',
      url: '/users/me',
      auth: 'user',
      doc: docs.deleteMe,
      schema: { body: ref(DeleteAccountBody), response: { 200: ref(Deleted, 'The account is deleted') } },
      handler: async (ctx, { body }) => {
        await deleteAccount(deps, ctx.user, body, ctx.context);
        cookies.clear(ctx.request, ctx.reply);
        return { deleted: true as const };
      },
    }),
  ];
}
