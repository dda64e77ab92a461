import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireUser } from '../../http/actor.js';
import { bearerAuth, errors, Message } from '../../http/schemas.js';
import { Type } from 'typebox';
import {
  CallbackQuery,
  CodeBody,
  DisableTwoFactorBody,
  EmailBody,
  LoginBody,
  LoginResponse,
  MagicLinkVerifyBody,
  RefreshBody,
  RegisterBody,
  RegisterResponse,
  ResetBody,
  TokenBody,
  TokenPair,
  TwoFactorLoginBody,
  TwoFactorSetupBody,
  TwoFactorSetupResponse,
  TwoFactorState,
} from './schemas.js';
import * as magicLink from './magic-link.service.js';
import * as oauth from './oauth.service.js';
import * as auth from './service.js';
import { completeTwoFactorLogin } from './two-factor-login.service.js';
import * as twoFactor from './two-factor.service.js';

const tags = ['auth'];
const open = { auth: 'none' as const };

export const clientMeta = (request: FastifyRequest): auth.ClientMeta => ({
  userAgent: request.headers['user-agent'] ?? null,
  ipAddress: request.ip ?? null,
});

export const authRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const methods = deps.config.auth.methods;
  // A switched-off sign-in method is simply not routed: it answers 404 (spec §5.2.6).
  if (methods.password) await app.register(passwordRoutes, { deps });
  if (methods.twoFactor) await app.register(twoFactorRoutes, { deps });
  if (methods.magicLink) await app.register(magicLinkRoutes, { deps });
  await app.register(oauthRoutes, { deps });

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

  app.post('/auth/refresh', {
    config: open,
    schema: { tags, summary: 'Rotate a refresh token for a new token pair', body: RefreshBody, response: { 200: TokenPair, ...errors(401) } },
    handler: async (req) => auth.refresh(deps, req.body.refreshToken),
  });

  app.post('/auth/logout', {
    schema: { tags, summary: 'Revoke the current session', security: bearerAuth, response: { 200: Message, ...errors(401) } },
    handler: async (req) => auth.logout(deps, requireUser(req).sessionId),
  });
};

const passwordRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post('/auth/register', {
    config: open,
    schema: { tags, summary: 'Create an account and send a verification email', body: RegisterBody, response: { 201: RegisterResponse, ...errors(409) } },
    handler: async (req, reply) => reply.status(201).send(await auth.register(deps, req.body)),
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

const twoFactorRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const security = bearerAuth;
  app.post('/auth/two-factor/setup', {
    schema: {
      tags,
      security,
      summary: 'Start (or restart) two-factor setup: a new secret and 10 new backup codes',
      description:
        'A wrong password counts toward the sign-in lockout (423 once locked). While two-factor is enabled a current code is required, the current secret stays in force until a code of the new one is verified, and the old backup codes stop working at once.',
      body: TwoFactorSetupBody,
      response: { 200: TwoFactorSetupResponse, ...errors(401, 404, 423) },
    },
    handler: async (req) => twoFactor.setupTwoFactor(deps, requireUser(req), req.body),
  });

  app.post('/auth/two-factor/verify', {
    schema: { tags, security, summary: 'Confirm the pending secret with a code; enables two-factor', body: CodeBody, response: { 200: TwoFactorState, ...errors(401) } },
    handler: async (req) => twoFactor.verifyTwoFactorSetup(deps, requireUser(req), req.body.code),
  });

  app.post('/auth/two-factor/disable', {
    schema: {
      tags,
      security,
      summary: 'Turn two-factor off (password and a current code or backup code)',
      description: 'A wrong password or code counts toward the sign-in lockout (423 once locked).',
      body: DisableTwoFactorBody,
      response: { 200: TwoFactorState, ...errors(401, 404, 423) },
    },
    handler: async (req) => twoFactor.disableTwoFactor(deps, requireUser(req), req.body),
  });

  app.post('/auth/two-factor/login', {
    config: open,
    schema: {
      tags,
      summary: 'Finish a social sign-in that asked for a two-factor code',
      body: TwoFactorLoginBody,
      response: { 200: LoginResponse, ...errors(401, 423) },
    },
    handler: async (req) => completeTwoFactorLogin(deps, req.body, clientMeta(req)),
  });
};

const magicLinkRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post('/auth/magic-link', {
    config: open,
    schema: { tags, summary: 'Email a sign-in link (200 whether or not the account exists)', body: EmailBody, response: { 200: Message, ...errors() } },
    handler: async (req) => magicLink.requestMagicLink(deps, req.body.email),
  });

  app.post('/auth/magic-link/verify', {
    config: open,
    schema: {
      tags,
      summary: 'Sign in with the token of a magic link',
      description: 'Answers as login does. With two-factor enabled and no twoFactorCode: 401 requiresTwoFactor, and the link stays usable.',
      body: MagicLinkVerifyBody,
      response: { 200: LoginResponse, ...errors(401, 423) },
    },
    handler: async (req) => magicLink.verifyMagicLink(deps, req.body, clientMeta(req)),
  });
};

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

const oauthRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  // With no provider configured (or all switched off) social sign-in is not routed nor documented.
  const enabled = oauth.PROVIDERS.filter((p) => deps.config.auth.oauth[p]);
  if (enabled.length === 0) return;
  const ProviderParams = Type.Object({ provider: Type.String({ maxLength: 32, description: `A configured provider: ${enabled.join(', ')}`, examples: enabled }) });
  const secure = deps.config.publicApiUrl.startsWith('https:') ? '; Secure' : '';
  const cookiePath = '/api/v1/auth/oauth';

  app.get('/auth/oauth/:provider', {
    config: open,
    schema: {
      tags,
      summary: 'Start social sign-in (google or github): redirects to the provider',
      description: 'Answers 404 for a provider that is not configured or switched off.',
      params: ProviderParams,
      response: { 302: Type.Null(), ...errors(404) },
    },
    handler: async (req, reply) => {
      const { url, state } = await oauth.startOAuth(deps, req.params.provider);
      reply.header('set-cookie', `${oauth.STATE_COOKIE}=${state}; Path=${cookiePath}; Max-Age=600; HttpOnly; SameSite=Lax${secure}`);
      return reply.redirect(url, 302);
    },
  });

  app.get('/auth/oauth/:provider/callback', {
    config: open,
    schema: {
      tags,
      summary: 'Provider callback: links or creates the account and answers as login does',
      params: ProviderParams,
      querystring: CallbackQuery,
      response: { 200: LoginResponse, ...errors(401, 403, 404, 409, 423) },
    },
    handler: async (req, reply) => {
      // The state cookie has done its job whatever happens next.
      reply.header('set-cookie', `${oauth.STATE_COOKIE}=; Path=${cookiePath}; Max-Age=0; HttpOnly; SameSite=Lax${secure}`);
      return oauth.finishOAuth(deps, req.params.provider, { ...req.query, cookieState: readCookie(req.headers.cookie, oauth.STATE_COOKIE) }, clientMeta(req));
    },
  });
};
