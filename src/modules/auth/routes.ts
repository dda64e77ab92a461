import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Infra } from '../../infra.js';
import { requireUser } from '../../http/access.js';
import { errors } from '../../http/errors-doc.js';
import { OPTIONAL_BODY } from '../../http/openapi.js';
import { bearerAuth, Message, ref } from '../../http/schemas.js';
import { sessionCookies } from '../../http/session-cookie.js';
import type { FastifyRequest } from 'fastify';
import { type AppError, authenticationError, validationError } from '../../lib/errors.js';
import { ChangePasswordBody, EmailBody, LoginBody, LoginResponse, LogoutBody, RefreshBody, RegisterBody, RegisterResponse, ResetBody, TokenBody, TokenPair } from './schemas.js';
import * as account from './account.service.js';
import * as auth from './service.js';
import * as signIn from './sign-in.js';
import { clientMeta, COOKIE_MODE, NOT_A_MEMBER, INVALID_SECOND_FACTOR, INVALID_TOKEN, LOCKED, open, TWO_FACTOR_REQUIRED, USER_NOT_FOUND, WEAK_PASSWORD } from './route-options.js';
import { magicLinkRoutes, oauthRoutes } from './link.routes.js';
import { twoFactorRoutes } from './two-factor.routes.js';
import { accountRoutes } from './account.routes.js';

export { clientMeta } from './route-options.js';

const tags = ['Email and password'];
const sessionTags = ['Sessions'];
// A bodiless POST (cookie mode's refresh, a logout) validates as an empty body; the document says
// the body is optional (OPTIONAL_BODY).
const noBodyIsEmpty = async (req: { body: unknown }) => {
  if (req.body === undefined) req.body = {};
};

export const authRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const methods = deps.config.auth.methods;
  // A switched-off sign-in method is simply not routed: it answers 404 (docs/api.md#sign-in-method-switches).
  if (methods.password) await app.register(passwordRoutes, { deps });
  if (methods.twoFactor) await app.register(twoFactorRoutes, { deps });
  if (methods.magicLink) await app.register(magicLinkRoutes, { deps });
  await app.register(oauthRoutes, { deps });
  await app.register(accountRoutes, { deps });

  app.post('/auth/verify-email', {
    config: open,
    schema: {
      tags,
      operationId: 'verifyEmail',
      summary: 'Verify an email address with the token from the email',
      description:
        'The token comes from the link `{APP_ORIGIN}/verify-email?token=…` mailed at registration; it is single use, valid 24 hours, and verifies nothing once the password of the registration that asked for it has changed (docs/api.md#registration-and-email-verification).',
      body: ref(TokenBody),
      response: { 200: ref(Message, 'The address is verified'), ...errors(INVALID_TOKEN) },
    },
    handler: async (req) => {
      await auth.verifyEmail(deps, req.body.token);
      return { message: 'Email verified' };
    },
  });

  app.post('/auth/resend-verification', {
    config: open,
    schema: {
      tags,
      operationId: 'resendVerificationEmail',
      summary: 'Send a new verification email (200 whether or not the account exists)',
      description: 'Mails a new link to an existing, active, unverified account and voids the unused one; the answer and its timing are the same whether or not the account exists.',
      body: ref(EmailBody),
      response: { 200: ref(Message, 'Sent, if the account exists and is not yet verified') },
    },
    handler: async (req) => {
      await auth.resendVerification(deps, req.body.email);
      return { message: 'If the account exists and is not yet verified, a verification email has been sent' };
    },
  });

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

  app.post('/auth/refresh', {
    config: open,
    schema: {
      tags: sessionTags,
      operationId: 'refreshTokens',
      summary: 'Rotate a refresh token for a new token pair',
      description: `Each refresh token works once: the answer carries a new pair and moves the session expiry 7 days ahead. A spent token replayed after the grace window (\`AUTH_REFRESH_REUSE_GRACE_S\`) revokes the whole session (docs/api.md#tokens-and-refresh). Without \`refreshToken\` in the body, the \`tenantry_refresh\` cookie counts only with \`X-Session-Mode: cookie\` and an Origin that is APP_ORIGIN or this service's own (or none): a cookie that does not count answers 401, no token at all 400 (docs/api.md#cookie-mode). ${COOKIE_MODE}`,
      body: ref(RefreshBody),
      ...OPTIONAL_BODY,
      response: {
        200: ref(TokenPair, 'A new token pair'),
        ...errors(
          { code: 'AUTHENTICATION_ERROR', message: 'Invalid or expired refresh token' },
          NO_REFRESH_TOKEN,
          { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'refreshToken: is required' },
          NOT_A_MEMBER,
        ),
      },
    },
    preValidation: noBodyIsEmpty,
    handler: async (req, reply) => {
      const token = cookies.refreshToken(req, req.body.refreshToken);
      if (token === undefined) throw noRefreshToken(req, validationError('Invalid request body', 'refreshToken: is required'));
      return cookies.deliver(req, reply, await auth.refresh(deps, token, req.body.organizationId));
    },
  });

  app.post('/auth/logout', {
    config: { auth: 'optional', bucket: 'auth' },
    schema: {
      tags: sessionTags,
      operationId: 'logout',
      summary: 'Revoke the current session',
      description:
        "Ends the session of the access token, or without one the session of the refresh token (the body's, or in cookie mode the `tenantry_refresh` cookie, under the same rule as POST /auth/refresh): its access and refresh tokens stop working at once, on every instance. With an access token no body is needed. With `X-Session-Mode: cookie` a successful answer also removes the cookie (docs/api.md#logout).",
      security: [...bearerAuth, {}],
      body: ref(LogoutBody),
      ...OPTIONAL_BODY,
      response: { 200: ref(Message, 'Logged out'), ...errors({ code: 'AUTHENTICATION_ERROR', message: 'Invalid or expired refresh token' }, NO_REFRESH_TOKEN) },
    },
    preValidation: noBodyIsEmpty,
    handler: async (req, reply) => {
      if (req.actor.kind !== 'anonymous') {
        await auth.logout(deps, requireUser(req).sessionId);
      } else {
        const token = cookies.refreshToken(req, req.body.refreshToken);
        if (token === undefined) throw noRefreshToken(req, authenticationError('Authentication required', 'Send an access token as Authorization: Bearer <token>, or a refresh token'));
        await auth.logoutWithRefreshToken(deps, token);
      }
      cookies.clear(req, reply);
      return { message: 'Logged out' };
    },
  });
};

const passwordRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const cookies = sessionCookies(deps.config);
  app.post('/auth/register', {
    config: open,
    schema: {
      tags,
      operationId: 'register',
      summary: 'Create an account and send a verification email',
      description:
        'Checks the password policy (400) and mails `{APP_ORIGIN}/verify-email?token=…`. An address already registered answers 409: its owner recovers it with a magic link or a password reset (docs/api.md#claiming-an-unverified-address).',
      body: ref(RegisterBody),
      response: {
        201: ref(RegisterResponse, 'The account is created; a verification email is on its way'),
        ...errors(WEAK_PASSWORD, { code: 'CONFLICT', message: 'An account with this email already exists', details: 'email: is already registered' }),
      },
    },
    handler: async (req, reply) => reply.status(201).send(await auth.register(deps, req.body)),
  });

  app.post('/auth/login', {
    config: open,
    schema: {
      tags,
      operationId: 'login',
      summary: 'Sign in with email and password',
      description:
        `Answers a token pair and the user. Five consecutive failures lock the account for 15 minutes (423). With two-factor enabled and no \`twoFactorCode\`: 401 with \`requiresTwoFactor: true\`; send the same request again with the code. An unverified address answers 403 once the password was right (docs/api.md#sign-in-with-email-and-password). ${COOKIE_MODE}`,
      body: ref(LoginBody),
      response: {
        200: ref(LoginResponse, 'Signed in'),
        ...errors(
          { code: 'AUTHENTICATION_ERROR', message: 'Invalid email or password' },
          TWO_FACTOR_REQUIRED,
          INVALID_SECOND_FACTOR,
          'EMAIL_NOT_VERIFIED',
          LOCKED,
          NOT_A_MEMBER,
          { code: 'INTERNAL_ERROR', message: 'The two-factor secret cannot be read', details: 'It was encrypted with a key that ENCRYPTION_KEY no longer lists' },
        ),
      },
    },
    handler: async (req, reply) => cookies.deliver(req, reply, await signIn.login(deps, req.body, clientMeta(req))),
  });

  app.post('/auth/password/forgot', {
    config: open,
    schema: {
      tags,
      operationId: 'forgotPassword',
      summary: 'Email a password reset link (200 whether or not the account exists)',
      description: 'Mails `{APP_ORIGIN}/reset-password?token=…` (valid 1 hour) to an existing, active account; the answer and its timing are the same either way.',
      body: ref(EmailBody),
      response: { 200: ref(Message, 'Sent, if the account exists') },
    },
    handler: async (req) => {
      await auth.forgotPassword(deps, req.body.email);
      return { message: 'If an account exists for this email, a password reset link has been sent' };
    },
  });

  app.post('/auth/password/reset', {
    config: open,
    schema: {
      tags,
      operationId: 'resetPassword',
      summary: 'Set a new password with a reset token; revokes every session',
      description:
        'Applies the password policy, clears the lockout, revokes every session and voids the unused mailed links of the account. On an address never verified it is also the first proof of the address (docs/api.md#password-reset).',
      body: ref(ResetBody),
      response: { 200: ref(Message, 'The password is reset'), ...errors(INVALID_TOKEN, WEAK_PASSWORD) },
    },
    handler: async (req) => {
      await auth.resetPassword(deps, req.body);
      return { message: 'Password has been reset' };
    },
  });

  app.put('/users/me/password', {
    schema: {
      tags: ['Users'],
      operationId: 'changePassword',
      security: bearerAuth,
      summary: 'Change the password; every other session is signed out',
      description: 'A wrong current password counts toward the sign-in lockout (423 once locked); the new one must meet the policy and differ from the current one (docs/api.md#password-change).',
      body: ref(ChangePasswordBody),
      response: {
        200: ref(Message, 'Changed'),
        ...errors(
          { code: 'AUTHENTICATION_ERROR', name: 'wrongPassword', message: 'Current password is incorrect' },
          { code: 'VALIDATION_ERROR', message: 'New password must differ from the current one', details: 'newPassword: must differ from currentPassword' },
          WEAK_PASSWORD,
          USER_NOT_FOUND,
          LOCKED,
        ),
      },
    },
    handler: async (req) => {
      await account.changePassword(deps, requireUser(req), req.body);
      return { message: 'Password changed; other sessions have been signed out' };
    },
  });
};
