import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireUser } from '../../http/actor.js';
import { bearerAuth, errors, Message } from '../../http/schemas.js';
import { EmailBody, LoginBody, LoginResponse, RefreshBody, RegisterBody, RegisterResponse, ResetBody, TokenBody, TokenPair } from './schemas.js';
import * as auth from './service.js';

const tags = ['auth'];
const open = { auth: 'none' as const };

export const clientMeta = (request: FastifyRequest): auth.ClientMeta => ({
  userAgent: request.headers['user-agent'] ?? null,
  ipAddress: request.ip ?? null,
});

export const authRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post('/auth/register', {
    config: open,
    schema: { tags, summary: 'Create an account and send a verification email', body: RegisterBody, response: { 201: RegisterResponse, ...errors(409) } },
    handler: async (req, reply) => reply.status(201).send(await auth.register(deps, req.body)),
  });

  app.post('/auth/verify-email', {
    config: open,
    schema: { tags, summary: 'Verify an email address with the token from the email', body: TokenBody, response: { 200: Message, ...errors() } },
    handler: async (req) => auth.verifyEmail(deps, req.body.token),
  });

  app.post('/auth/resend-verification', {
    config: open,
    schema: { tags, summary: 'Send a new verification email (200 whether or not the account exists)', body: EmailBody, response: { 200: Message, ...errors() } },
    handler: async (req) => auth.resendVerification(deps, req.body.email),
  });

  app.post('/auth/login', {
    config: open,
    schema: {
      tags,
      summary: 'Sign in with email and password',
      description: 'Five consecutive failures lock the account for 15 minutes (423). With two-factor enabled and no code: 401 with requiresTwoFactor.',
      body: LoginBody,
      response: { 200: LoginResponse, ...errors(401, 403, 423) },
    },
    handler: async (req) => auth.login(deps, req.body, clientMeta(req)),
  });

  app.post('/auth/refresh', {
    config: open,
    schema: { tags, summary: 'Rotate a refresh token for a new token pair', body: RefreshBody, response: { 200: TokenPair, ...errors(401) } },
    handler: async (req) => auth.refresh(deps, req.body.refreshToken),
  });

  app.post('/auth/logout', {
    schema: { tags, summary: 'Revoke the current session', security: bearerAuth, response: { 200: Message, ...errors(401) } },
    handler: async (req) => auth.logout(deps, requireUser(req).sessionId),
  });

  app.post('/auth/password/forgot', {
    config: open,
    schema: { tags, summary: 'Email a password reset link (200 whether or not the account exists)', body: EmailBody, response: { 200: Message, ...errors() } },
    handler: async (req) => auth.forgotPassword(deps, req.body.email),
  });

  app.post('/auth/password/reset', {
    config: open,
    schema: { tags, summary: 'Set a new password with a reset token; revokes every session', body: ResetBody, response: { 200: Message, ...errors() } },
    handler: async (req) => auth.resetPassword(deps, req.body),
  });
};
