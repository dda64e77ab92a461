// The auth feature's routes (docs/api.md#auth-and-sessions): the password sign-in, two-factor, the
// sign-in links, the account's life, then what every sign-in method shares (verification, refresh,
// logout). A switched-off sign-in method is simply not routed: it answers 404 and is not documented
// (docs/api.md#sign-in-method-switches).
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Message, ref } from '../../http/schemas.js';
import { sessionCookies } from '../../http/session-cookie.js';
import { type AppError, authenticationError, validationError } from '../../lib/errors.js';
import {
  ChangePasswordBody,
  EmailBody,
  LoginBody,
  LoginResponse,
  LogoutBody,
  RefreshBody,
  RegisterBody,
  RegisterResponse,
  ResetBody,
  TokenBody,
  TokenPair,
} from './schemas.js';
import * as account from './account.service.js';
import * as auth from './service.js';
import * as signIn from './sign-in.js';
import { clientMeta } from './route-options.js';
import { magicLinkRoutes, oauthRoutes } from './link.routes.js';
import { twoFactorRoutes } from './two-factor.routes.js';
import { accountRoutes } from './account.routes.js';
import { NO_REFRESH_TOKEN, docs } from './docs.js';

export { clientMeta } from './route-options.js';

const password = (config: Config) => config.auth.methods.password;

export function authRoutes(deps: Infra) {
  const cookies = sessionCookies(deps.config);
  // No refresh token at all: refresh's 400 as ever (logout's 401). A cookie ignored, or cookie mode
  // without one: 401, as a refused token.
  const noRefreshToken = (req: FastifyRequest, otherwise: AppError) =>
    cookies.attempted(req) ? authenticationError(NO_REFRESH_TOKEN.message, NO_REFRESH_TOKEN.details) : otherwise;

  return [
    ...passwordRoutes(deps),
    ...twoFactorRoutes(deps),
    ...magicLinkRoutes(deps),
    ...oauthRoutes(deps),
    ...accountRoutes(deps),
    route({
      method: 'POST',
      url: '/auth/verify-email',
      auth: 'none',
      bucket: 'auth',
      doc: docs.verifyEmail,
      schema: { body: ref(TokenBody), response: { 200: ref(Message, 'The address is verified') } },
      handler: async (_ctx, { body }) => {
        await auth.verifyEmail(deps, body.token);
        return { message: 'Email verified' };
      },
    }),
    route({
      method: 'POST',
      url: '/auth/resend-verification',
      auth: 'none',
      bucket: 'auth',
      doc: docs.resendVerificationEmail,
      schema: {
        body: ref(EmailBody),
        response: { 200: ref(Message, 'Sent, if the account exists and is not yet verified') },
      },
      handler: async (_ctx, { body }) => {
        await auth.resendVerification(deps, body.email);
        return { message: 'If the account exists and is not yet verified, a verification email has been sent' };
      },
    }),
    route({
      method: 'POST',
      url: '/auth/refresh',
      auth: 'none',
      bucket: 'auth',
      doc: docs.refreshTokens,
      // A bodiless POST (cookie mode's refresh) validates as an empty body.
      optionalBody: true,
      schema: { body: ref(RefreshBody), response: { 200: ref(TokenPair, 'A new token pair') } },
      handler: async (ctx, { body }) => {
        const token = cookies.refreshToken(ctx.request, body.refreshToken);
        if (token === undefined)
          throw noRefreshToken(ctx.request, validationError('Invalid request body', 'refreshToken: is required'));
        return cookies.deliver(ctx.request, ctx.reply, await auth.refresh(deps, token, body.organizationId));
      },
    }),
    route({
      method: 'POST',
      url: '/auth/logout',
      auth: 'optionalUser',
      bucket: 'auth',
      doc: docs.logout,
      // With an access token no body is needed.
      optionalBody: true,
      schema: { body: ref(LogoutBody), response: { 200: ref(Message, 'Logged out') } },
      handler: async (ctx, { body }) => {
        // An API key has no session to end: the guard refuses it.
        if (ctx.user) {
          await auth.logout(deps, ctx.user.sessionId);
        } else {
          const token = cookies.refreshToken(ctx.request, body.refreshToken);
          if (token === undefined)
            throw noRefreshToken(
              ctx.request,
              authenticationError(
                'Authentication required',
                'Send an access token as Authorization: Bearer <token>, or a refresh token',
              ),
            );
          await auth.logoutWithRefreshToken(deps, token);
        }
        cookies.clear(ctx.request, ctx.reply);
        return { message: 'Logged out' };
      },
    }),
  ];
}

function passwordRoutes(deps: Infra) {
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'POST',
      url: '/auth/register',
      auth: 'none',
      bucket: 'auth',
      enabled: password,
      doc: docs.register,
      schema: {
        body: ref(RegisterBody),
        response: { 201: ref(RegisterResponse, 'The account is created; a verification email is on its way') },
      },
      handler: (_ctx, { body }) => auth.register(deps, body),
    }),
    route({
      method: 'POST',
      url: '/auth/login',
      auth: 'none',
      bucket: 'auth',
      enabled: password,
      doc: docs.login,
      schema: { body: ref(LoginBody), response: { 200: ref(LoginResponse, 'Signed in') } },
      handler: async (ctx, { body }) =>
        cookies.deliver(ctx.request, ctx.reply, await signIn.login(deps, body, clientMeta(ctx.request))),
    }),
    route({
      method: 'POST',
      url: '/auth/password/forgot',
      auth: 'none',
      bucket: 'auth',
      enabled: password,
      doc: docs.forgotPassword,
      schema: { body: ref(EmailBody), response: { 200: ref(Message, 'Sent, if the account exists') } },
      handler: async (_ctx, { body }) => {
        await auth.forgotPassword(deps, body.email);
        return { message: 'If an account exists for this email, a password reset link has been sent' };
      },
    }),
    route({
      method: 'POST',
      url: '/auth/password/reset',
      auth: 'none',
      bucket: 'auth',
      enabled: password,
      doc: docs.resetPassword,
      schema: { body: ref(ResetBody), response: { 200: ref(Message, 'The password is reset') } },
      handler: async (_ctx, { body }) => {
        await auth.resetPassword(deps, body);
        return { message: 'Password has been reset' };
      },
    }),
    route({
      method: 'PUT',
      url: '/users/me/password',
      auth: 'user',
      enabled: password,
      doc: docs.changePassword,
      schema: { body: ref(ChangePasswordBody), response: { 200: ref(Message, 'Changed') } },
      handler: async (ctx, { body }) => {
        await account.changePassword(deps, ctx.user, body);
        return { message: 'Password changed; other sessions have been signed out' };
      },
    }),
  ];
}
