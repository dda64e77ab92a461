// Passkeys (docs/api.md#passkeys): the ceremonies, the signed-in user's list, and the sign-in. The
// sign-in ends through the sign-in port the composition hands over (src/routes.ts), so it answers
// exactly as POST /auth/login does: lockout, verified address, two-factor step, session, cookie mode.
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Infra } from '../../infra.js';
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
import { docs } from './docs.js';

export function passkeyRoutes(deps: Infra, signIn: SignInPort) {
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'POST',
      url: '/auth/passkeys/registration/options',
      auth: 'user',
      bucket: 'auth',
      doc: docs.passkeyRegistrationOptions,
      // A bodiless POST sends no proof: the session's sign-in must be recent.
      optionalBody: true,
      schema: { body: ref(RegistrationOptionsBody), response: { 200: ref(CreationOptions, 'The creation options') } },
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
      doc: docs.passkeyRegistrationVerify,
      schema: { body: ref(RegistrationBody), response: { 201: ref(Passkey, 'The passkey is registered') } },
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
      doc: docs.listPasskeys,
      schema: { response: { 200: ref(PasskeyList, 'The passkeys') } },
      handler: (ctx) => passkeys.listPasskeys(deps, ctx.user),
    }),
    route({
      method: 'PATCH',
      url: '/users/me/passkeys/:id',
      auth: 'user',
      doc: docs.renamePasskey,
      schema: { params: PasskeyParams, body: ref(RenameBody), response: { 200: ref(Passkey, 'The renamed passkey') } },
      handler: (ctx, { params, body }) => passkeys.renamePasskey(deps, ctx.user, params.id, body.name),
    }),
    route({
      method: 'DELETE',
      url: '/users/me/passkeys/:id',
      auth: 'user',
      doc: docs.deletePasskey,
      schema: { params: PasskeyParams, response: { 200: ref(Message, 'Deleted') } },
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
      doc: docs.passkeyAuthenticationOptions,
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
      doc: docs.passkeyAuthenticationVerify,
      schema: { body: ref(AuthenticationBody), response: { 200: ref(signIn.answerSchema, 'Signed in') } },
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
