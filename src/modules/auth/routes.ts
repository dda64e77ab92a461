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
import {
  clientMeta,
  COOKIE_MODE,
  INVALID_SECOND_FACTOR,
  NOT_A_MEMBER,
  INVALID_TOKEN,
  LOCKED,
  TWO_FACTOR_REQUIRED,
  USER_NOT_FOUND,
  WEAK_PASSWORD,
} from './route-options.js';
import { magicLinkRoutes, oauthRoutes } from './link.routes.js';
import { twoFactorRoutes } from './two-factor.routes.js';
import { accountRoutes } from './account.routes.js';

export { clientMeta } from './route-options.js';

const tags = ['Email and password'];
const sessionTags = ['Sessions'];
const password = (config: Config) => config.auth.methods.password;

export function authRoutes(deps: Infra) {
  const cookies = sessionCookies(deps.config);
  const NO_REFRESH_TOKEN = {
    code: 'AUTHENTICATION_ERROR',
    name: 'noRefreshToken',
    message: 'Refresh token required',
    details: 'Send refreshToken in the body, or the tenantry_refresh cookie with X-Session-Mode: cookie',
  } as const;
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
      operationId: 'verifyEmail',
      tags,
      summary: 'Verify an email address with the token from the email',
      description:
        'The token comes from the link `{APP_ORIGIN}/verify-email?token=…` mailed at registration; it is single use, valid 24 hours, and verifies nothing once the password of the registration that asked for it has changed (docs/api.md#registration-and-email-verification).',
      schema: { body: ref(TokenBody), response: { 200: ref(Message, 'The address is verified') } },
      errors: [INVALID_TOKEN],
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
      operationId: 'resendVerificationEmail',
      tags,
      summary: 'Send a new verification email (200 whether or not the account exists)',
      description:
        'Mails a new link to an existing, active, unverified account and voids the unused one; the answer and its timing are the same whether or not the account exists.',
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
      operationId: 'refreshTokens',
      tags: sessionTags,
      summary: 'Rotate a refresh token for a new token pair',
      description: `Each refresh token works once: the answer carries a new pair and moves the session expiry 7 days ahead. A spent token replayed after the grace window (\`AUTH_REFRESH_REUSE_GRACE_S\`) revokes the whole session (docs/api.md#tokens-and-refresh). Without \`refreshToken\` in the body, the \`tenantry_refresh\` cookie counts only with \`X-Session-Mode: cookie\` and an Origin that is APP_ORIGIN or this service's own (or none): a cookie that does not count answers 401, no token at all 400 (docs/api.md#cookie-mode). ${COOKIE_MODE}`,
      // A bodiless POST (cookie mode's refresh) validates as an empty body.
      optionalBody: true,
      schema: { body: ref(RefreshBody), response: { 200: ref(TokenPair, 'A new token pair') } },
      errors: [
        { code: 'AUTHENTICATION_ERROR', message: 'Invalid or expired refresh token' },
        NO_REFRESH_TOKEN,
        { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'refreshToken: is required' },
        NOT_A_MEMBER,
      ],
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
      operationId: 'logout',
      tags: sessionTags,
      summary: 'Revoke the current session',
      description:
        "Ends the session of the access token, or without one the session of the refresh token (the body's, or in cookie mode the `tenantry_refresh` cookie, under the same rule as POST /auth/refresh): its access and refresh tokens stop working at once, on every instance. With an access token no body is needed. With `X-Session-Mode: cookie` a successful answer also removes the cookie (docs/api.md#logout).",
      // With an access token no body is needed.
      optionalBody: true,
      schema: { body: ref(LogoutBody), response: { 200: ref(Message, 'Logged out') } },
      errors: [{ code: 'AUTHENTICATION_ERROR', message: 'Invalid or expired refresh token' }, NO_REFRESH_TOKEN],
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
      operationId: 'register',
      tags,
      summary: 'Create an account and send a verification email',
      description:
        'Checks the password policy (400) and mails `{APP_ORIGIN}/verify-email?token=…`. An address already registered answers 409: its owner recovers it with a magic link or a password reset (docs/api.md#claiming-an-unverified-address).',
      schema: {
        body: ref(RegisterBody),
        response: { 201: ref(RegisterResponse, 'The account is created; a verification email is on its way') },
      },
      errors: [
        WEAK_PASSWORD,
        {
          code: 'CONFLICT',
          message: 'An account with this email already exists',
          details: 'email: is already registered',
        },
      ],
      handler: (_ctx, { body }) => auth.register(deps, body),
    }),
    route({
      method: 'POST',
      url: '/auth/login',
      auth: 'none',
      bucket: 'auth',
      enabled: password,
      operationId: 'login',
      tags,
      summary: 'Sign in with email and password',
      description: `Answers a token pair and the user. Five consecutive failures lock the account for 15 minutes (423). With two-factor enabled and no \`twoFactorCode\`: 401 with \`requiresTwoFactor: true\`; send the same request again with the code. An unverified address answers 403 once the password was right (docs/api.md#sign-in-with-email-and-password). ${COOKIE_MODE}`,
      schema: { body: ref(LoginBody), response: { 200: ref(LoginResponse, 'Signed in') } },
      errors: [
        { code: 'AUTHENTICATION_ERROR', message: 'Invalid email or password' },
        TWO_FACTOR_REQUIRED,
        INVALID_SECOND_FACTOR,
        'EMAIL_NOT_VERIFIED',
        LOCKED,
        NOT_A_MEMBER,
        {
          code: 'INTERNAL_ERROR',
          message: 'The two-factor secret cannot be read',
          details: 'It was encrypted with a key that ENCRYPTION_KEY no longer lists',
        },
      ],
      handler: async (ctx, { body }) =>
        cookies.deliver(ctx.request, ctx.reply, await signIn.login(deps, body, clientMeta(ctx.request))),
    }),
    route({
      method: 'POST',
      url: '/auth/password/forgot',
      auth: 'none',
      bucket: 'auth',
      enabled: password,
      operationId: 'forgotPassword',
      tags,
      summary: 'Email a password reset link (200 whether or not the account exists)',
      description:
        'Mails `{APP_ORIGIN}/reset-password?token=…` (valid 1 hour) to an existing, active account; the answer and its timing are the same either way.',
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
      operationId: 'resetPassword',
      tags,
      summary: 'Set a new password with a reset token; revokes every session',
      description:
        'Applies the password policy, clears the lockout, revokes every session and voids the unused mailed links of the account. On an address never verified it is also the first proof of the address (docs/api.md#password-reset).',
      schema: { body: ref(ResetBody), response: { 200: ref(Message, 'The password is reset') } },
      errors: [INVALID_TOKEN, WEAK_PASSWORD],
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
      operationId: 'changePassword',
      tags: ['Users'],
      summary: 'Change the password; every other session is signed out',
      description:
        'A wrong current password counts toward the sign-in lockout (423 once locked); the new one must meet the policy and differ from the current one (docs/api.md#password-change).',
      schema: { body: ref(ChangePasswordBody), response: { 200: ref(Message, 'Changed') } },
      errors: [
        { code: 'AUTHENTICATION_ERROR', name: 'wrongPassword', message: 'Current password is incorrect' },
        {
          code: 'VALIDATION_ERROR',
          message: 'New password must differ from the current one',
          details: 'newPassword: must differ from currentPassword',
        },
        WEAK_PASSWORD,
        USER_NOT_FOUND,
        LOCKED,
      ],
      handler: async (ctx, { body }) => {
        await account.changePassword(deps, ctx.user, body);
        return { message: 'Password changed; other sessions have been signed out' };
      },
    }),
  ];
}
