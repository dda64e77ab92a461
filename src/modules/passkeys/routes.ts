// Passkeys (docs/api.md#passkeys): the ceremonies, the signed-in user's list, and the sign-in. The
// sign-in ends through the sign-in port the composition hands over (src/routes.ts), so it answers
// exactly as POST /auth/login does: lockout, verified address, two-factor step, session, cookie mode.
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Infra } from '../../infra.js';
import type { ErrorExample } from '../../http/errors-doc.js';
import { route } from '../../http/route.js';
import { Message, ref } from '../../http/schemas.js';
import { sessionCookies } from '../../http/session-cookie.js';
import type { SignInPort } from '../../platform/identity/sign-in-port.js';
import {
  AuthenticationBody,
  AuthenticationOptions,
  AuthenticationOptionsBody,
  CreationOptions,
  Passkey,
  PasskeyList,
  PasskeyParams,
  RegistrationBody,
  RegistrationOptionsBody,
  RenameBody,
} from './schemas.js';
import * as passkeys from './service.js';

const tags = ['Passkeys'];
const NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'Passkey not found' };
const USER_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', name: 'userNotFound', message: 'User not found' };
const INVALID_PASSKEY: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  message: 'Invalid passkey',
  details: 'The challenge is unknown, used or expired, or the passkey is unknown or does not verify',
};
const TWO_FACTOR_REQUIRED: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'twoFactorRequired',
  message: 'Two-factor code required',
  details: 'Send twoFactorToken and a code to POST /auth/two-factor/login',
  extra: { requiresTwoFactor: true, twoFactorToken: 'k3J9x0bQ2mV7tY1cR8wN4pL6zH5dF0aS' },
};
const LOCKED: ErrorExample = {
  code: 'ACCOUNT_LOCKED',
  message: 'Account is temporarily locked after too many failed sign-in attempts',
  details: 'Try again in 900 seconds',
};
const REQUIRED = { reauthenticationRequired: true };
const REAUTH_REQUIRED: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'reauthenticationRequired',
  message: 'Re-authentication required',
  details: 'password: confirm your password (in this request, or first with POST /auth/reauthenticate)',
  extra: REQUIRED,
};
const WRONG_PASSWORD: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'wrongPassword',
  message: 'Password is incorrect',
  extra: REQUIRED,
};
const WRONG_CODE: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'invalidTwoFactorCode',
  message: 'Invalid two-factor code',
  details: 'The code does not match the authenticator or an unused backup code',
  extra: REQUIRED,
};
const PROOF_MISSING: ErrorExample = {
  code: 'VALIDATION_ERROR',
  message: 'Invalid request body',
  details: 'twoFactorCode: is required for an account without a password',
};
const COOKIE_MODE =
  'With `X-Session-Mode: cookie` (the web app) the refresh token is set in the HttpOnly `tenantry_refresh` cookie and left out of the body (docs/api.md#cookie-mode).';

export function passkeyRoutes(deps: Infra, signIn: SignInPort) {
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'POST',
      url: '/auth/passkeys/registration/options',
      auth: 'user',
      bucket: 'auth',
      operationId: 'passkeyRegistrationOptions',
      tags,
      summary: 'Start registering a passkey for the signed-in user',
      description:
        'Answers PublicKeyCredentialCreationOptionsJSON for `navigator.credentials.create()`: the rp id is the host of APP_ORIGIN, the user’s passkeys are excluded, no attestation is asked. Its challenge is single use and lives 5 minutes. A new passkey signs in on its own (as both factors with user verification), so it needs a recent proof of the person: `password` in the body (for an account without one, `twoFactorCode`), unless this session signed in, or re-authenticated with POST /auth/reauthenticate, within `AUTH_REAUTH_WINDOW_S` seconds (a refresh does not count). Otherwise 401 with `reauthenticationRequired: true`; a wrong password or code counts toward the sign-in lockout (docs/api.md#passkeys).',
      // A bodiless POST sends no proof: the session's sign-in must be recent.
      optionalBody: true,
      schema: { body: ref(RegistrationOptionsBody), response: { 200: ref(CreationOptions, 'The creation options') } },
      errors: [REAUTH_REQUIRED, WRONG_PASSWORD, WRONG_CODE, PROOF_MISSING, USER_NOT_FOUND, LOCKED],
      handler: async (ctx, { body }) => {
        await signIn.requireRecentAuthentication(ctx.user, body);
        return passkeys.registrationOptions(deps, ctx.user);
      },
    }),
    route({
      method: 'POST',
      url: '/auth/passkeys/registration/verify',
      auth: 'user',
      bucket: 'auth',
      operationId: 'passkeyRegistrationVerify',
      tags,
      summary: 'Finish registering a passkey',
      description:
        'Checks the authenticator’s answer against a live challenge of the caller, APP_ORIGIN and its host, and stores the passkey (`name` defaults to "Passkey"). A challenge unknown, used or expired, or an answer that does not verify, answers 400; a credential registered already 409 (docs/api.md#passkeys).',
      schema: { body: ref(RegistrationBody), response: { 201: ref(Passkey, 'The passkey is registered') } },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid passkey registration',
          details: 'response: its challenge is unknown, already used or expired',
        },
        {
          code: 'CONFLICT',
          message: 'This passkey is already registered',
          details: 'response: the credential is registered already',
        },
        USER_NOT_FOUND,
      ],
      handler: (ctx, { body }) =>
        passkeys.registrationVerify(deps, ctx.user, {
          response: body.response as unknown as RegistrationResponseJSON,
          name: body.name,
        }),
    }),
    route({
      method: 'GET',
      url: '/users/me/passkeys',
      auth: 'user',
      operationId: 'listPasskeys',
      tags,
      summary: 'The signed-in user’s passkeys, oldest first',
      description: 'Names and dates only: key material is never answered (docs/api.md#passkeys).',
      schema: { response: { 200: ref(PasskeyList, 'The passkeys') } },
      handler: (ctx) => passkeys.listPasskeys(deps, ctx.user),
    }),
    route({
      method: 'PATCH',
      url: '/users/me/passkeys/:id',
      auth: 'user',
      operationId: 'renamePasskey',
      tags,
      summary: 'Rename a passkey',
      description: 'Another user’s passkey, or none, answers 404 (docs/api.md#passkeys).',
      schema: { params: PasskeyParams, body: ref(RenameBody), response: { 200: ref(Passkey, 'The renamed passkey') } },
      errors: [
        { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'name: must not be blank' },
        NOT_FOUND,
      ],
      handler: (ctx, { params, body }) => passkeys.renamePasskey(deps, ctx.user, params.id, body.name),
    }),
    route({
      method: 'DELETE',
      url: '/users/me/passkeys/:id',
      auth: 'user',
      operationId: 'deletePasskey',
      tags,
      summary: 'Delete a passkey',
      description:
        'It signs in no more, at once. Sessions it started stay (revoke them in the session list). Another user’s passkey, or none, answers 404 (docs/api.md#passkeys).',
      schema: { params: PasskeyParams, response: { 200: ref(Message, 'Deleted') } },
      errors: [NOT_FOUND],
      handler: async (ctx, { params }) => {
        await passkeys.deletePasskey(deps, ctx.user, params.id);
        return { message: 'Passkey deleted' };
      },
    }),
    route({
      method: 'POST',
      url: '/auth/passkeys/authentication/options',
      auth: 'none',
      bucket: 'auth',
      operationId: 'passkeyAuthenticationOptions',
      tags,
      summary: 'Start a passkey sign-in',
      description:
        'Without `email`: options for a discoverable passkey (no allowCredentials). With it: that account’s passkeys as allowCredentials; an unknown address answers the same shape with none. `challengeId` goes back with the assertion; single use, 5 minutes (docs/api.md#passkeys).',
      // A bodiless POST asks for a discoverable passkey.
      optionalBody: true,
      schema: {
        body: ref(AuthenticationOptionsBody),
        response: { 200: ref(AuthenticationOptions, 'The request options and their challenge') },
      },
      handler: (_ctx, { body }) => passkeys.authenticationOptions(deps, body),
    }),
    route({
      method: 'POST',
      url: '/auth/passkeys/authentication/verify',
      auth: 'none',
      bucket: 'auth',
      operationId: 'passkeyAuthenticationVerify',
      tags,
      summary: 'Sign in with a passkey',
      description: `Answers as login does. A passkey that verified the user (UV) is both factors; without UV, an account with two-factor answers 401 \`requiresTwoFactor\` with a \`twoFactorToken\` for POST /auth/two-factor/login. An unknown, used or expired challenge, an unknown or deleted passkey, a wrong origin or rp id, a bad signature or a signature counter that did not move forward answer 401 (docs/api.md#passkeys). ${COOKIE_MODE}`,
      schema: { body: ref(AuthenticationBody), response: { 200: ref(signIn.answerSchema, 'Signed in') } },
      errors: [INVALID_PASSKEY, TWO_FACTOR_REQUIRED, 'EMAIL_NOT_VERIFIED', LOCKED],
      handler: async (ctx, { body }) => {
        const { request } = ctx;
        const client = { userAgent: request.headers['user-agent'] ?? null, ipAddress: request.ip ?? null };
        const input = {
          challengeId: body.challengeId,
          response: body.response as unknown as AuthenticationResponseJSON,
        };
        return cookies.deliver(request, ctx.reply, await passkeys.authenticationVerify(deps, signIn, input, client));
      },
    }),
  ];
}
