// The account's life outside sign-in: moving it to a new email address, and deleting it
// (docs/api.md#email-change, docs/api.md#account-deletion).
import { Type } from 'typebox';
import type { Infra } from '../../infra.js';
import type { ErrorExample } from '../../http/errors-doc.js';
import { route } from '../../http/route.js';
import { Body, Message, named, ref, Timestamp } from '../../http/schemas.js';
import { sessionCookies } from '../../http/session-cookie.js';
import { deleteAccount } from './account-deletion.service.js';
import { confirmEmailChange, requestEmailChange } from './email-change.service.js';
import { reauthenticate } from './reauthentication.js';
import { INVALID_SECOND_FACTOR, INVALID_TOKEN, LOCKED, USER_NOT_FOUND } from './route-options.js';
import { Email, Password, Token, TwoFactorCode } from './schemas.js';

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

const WRONG_PASSWORD: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'wrongPassword',
  message: 'Password is incorrect',
};
const REQUIRED = { reauthenticationRequired: true };
const WRONG_PROOF: ErrorExample = { ...WRONG_PASSWORD, extra: REQUIRED };
const WRONG_CODE: ErrorExample = { ...INVALID_SECOND_FACTOR, extra: REQUIRED };
const CANNOT_PROVE: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'signInAgain',
  message: 'Re-authentication required',
  details:
    'This account has no password or two-factor code to confirm with: sign in again, and do this within 600 seconds',
  extra: REQUIRED,
};
const TAKEN: ErrorExample = {
  code: 'CONFLICT',
  message: 'An account with this email already exists',
  details: 'newEmail: is already registered',
};

export function accountRoutes(deps: Infra) {
  const tags = ['Users'];
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'POST',
      url: '/users/me/email',
      auth: 'user',
      operationId: 'requestEmailChange',
      tags,
      summary: 'Move the account to a new email address (confirmed by a mailed link)',
      description:
        'Mails `{APP_ORIGIN}/confirm-email?token=…` (single use, 24 hours) to `newEmail`; nothing changes until POST /auth/confirm-email-change. A wrong password answers 401 and counts toward the sign-in lockout; an address already registered 409; an account without a password 400 (docs/api.md#email-change).',
      schema: {
        body: ref(EmailChangeBody),
        response: { 202: ref(Message, 'The link is on its way to the new address') },
      },
      errors: [
        WRONG_PASSWORD,
        TAKEN,
        {
          code: 'VALIDATION_ERROR',
          message: 'The new address is the current one',
          details: 'newEmail: is already the address of the account',
        },
        USER_NOT_FOUND,
        LOCKED,
      ],
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
      operationId: 'reauthenticate',
      tags: ['Sessions'],
      summary: 'Prove the person behind this session again',
      description:
        'With the password, or for an account without one a two-factor code. The session then counts as freshly signed in for `AUTH_REAUTH_WINDOW_S` seconds (600 by default), as it does after its sign-in: steps that need a recent proof (adding a passkey) take no password meanwhile. A refresh of the session never counts. A wrong password or code answers 401 with `reauthenticationRequired` and counts toward the sign-in lockout (423 once locked); an account with neither a password nor two-factor answers 401: it signs in again instead (docs/api.md#re-authentication).',
      schema: {
        body: ref(ReauthenticateBody),
        response: { 200: ref(Reauthenticated, 'The session counts as freshly signed in until expiresAt') },
      },
      errors: [
        WRONG_PROOF,
        WRONG_CODE,
        CANNOT_PROVE,
        { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'password: is required' },
        USER_NOT_FOUND,
        LOCKED,
      ],
      handler: (ctx, { body }) => reauthenticate(deps, ctx.user, body),
    }),
    route({
      method: 'POST',
      url: '/auth/confirm-email-change',
      auth: 'user',
      bucket: 'auth',
      operationId: 'confirmEmailChange',
      tags,
      summary: 'Confirm an email change with the token from the mail, signed in to the account that asked',
      description:
        'Needs the access token of the account that asked for the change: without one 401, with another account’s 403 (the token stays usable). The account moves to the address the link was mailed to, which counts as verified; a notice goes to the old address. Sessions stay; sign-in and reset links still pending are voided. An address registered meanwhile answers 409 (docs/api.md#email-change).',
      schema: { body: ref(ConfirmEmailChangeBody), response: { 200: ref(Message, 'The address is changed') } },
      errors: [
        INVALID_TOKEN,
        {
          code: 'AUTHORIZATION_ERROR',
          message: 'This link is for another account',
          details: 'Sign in to the account that asked for the change, then confirm',
        },
        TAKEN,
      ],
      handler: async (ctx, { body }) => {
        await confirmEmailChange(deps, ctx.user, body.token);
        return { message: 'Email address changed' };
      },
    }),
    route({
      method: 'DELETE',
      url: '/users/me',
      auth: 'user',
      operationId: 'deleteMe',
      tags,
      summary: 'Delete your account',
      description:
        'With the password, or for an account without one a two-factor code (a wrong one answers 401 and counts toward the lockout). Refused (409) while you own an organization that has other members. Otherwise, in one transaction: the organizations where you are alone are deleted (their subscriptions canceled first), you leave the others (`member.removed`, your API keys there revoked), your sessions, passkeys, social links and keys go, and your audit entries keep only your id. The address may register again. With `X-Session-Mode: cookie` the answer also removes the refresh cookie (docs/api.md#account-deletion).',
      schema: { body: ref(DeleteAccountBody), response: { 200: ref(Deleted, 'The account is deleted') } },
      errors: [
        WRONG_PASSWORD,
        INVALID_SECOND_FACTOR,
        {
          code: 'CONFLICT',
          message: 'You own an organization that has other members',
          details: 'Transfer the ownership of acme, or remove its other members, first',
        },
        { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'password: is required' },
        USER_NOT_FOUND,
        LOCKED,
        'PAYMENT_PROVIDER_ERROR',
      ],
      handler: async (ctx, { body }) => {
        await deleteAccount(deps, ctx.user, body, ctx.context);
        cookies.clear(ctx.request, ctx.reply);
        return { deleted: true as const };
      },
    }),
  ];
}
