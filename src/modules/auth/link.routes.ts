// Sign-in by a link: the magic link mailed to the address, and the social providers' redirects.
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Infra } from '../../infra.js';
import { internalError, toAppError } from '../../http/error-handler.js';
import { route } from '../../http/route.js';
import { Message, ref } from '../../http/schemas.js';
import { readCookie, sessionCookies } from '../../http/session-cookie.js';
import {
  CallbackQuery,
  EmailBody,
  HandoffExchangeBody,
  LoginResponse,
  MagicLinkVerifyBody,
  StartSocialQuery,
} from './schemas.js';
import * as magicLink from './magic-link.service.js';
import { handoffLocation } from './oauth-handoff.js';
import * as oauth from './oauth.service.js';
import { clientMeta } from './route-options.js';
import { docs } from './docs.js';

export function magicLinkRoutes(deps: Infra) {
  const enabled = (config: Config) => config.auth.methods.magicLink;
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'POST',
      url: '/auth/magic-link',
      auth: 'none',
      bucket: 'auth',
      enabled,
      doc: docs.requestMagicLink,
      schema: { body: ref(EmailBody), response: { 200: ref(Message, 'Sent, if the account exists') } },
      handler: async (_ctx, { body }) => {
        await magicLink.requestMagicLink(deps, body.email);
        return { message: 'If an account exists for this email, a sign-in link has been sent' };
      },
    }),
    route({
      method: 'POST',
      url: '/auth/magic-link/verify',
      auth: 'none',
      bucket: 'auth',
      enabled,
      doc: docs.verifyMagicLink,
      schema: { body: ref(MagicLinkVerifyBody), response: { 200: ref(LoginResponse, 'Signed in') } },
      handler: async (ctx, { body }) =>
        cookies.deliver(ctx.request, ctx.reply, await magicLink.verifyMagicLink(deps, body, clientMeta(ctx.request))),
    }),
  ];
}

const configured = (config: Config) => oauth.PROVIDERS.filter((p) => config.auth.oauth[p]);

export function oauthRoutes(deps: Infra) {
  // With no provider configured (or all switched off) social sign-in is not routed nor documented.
  const enabled = (config: Config) => configured(config).length > 0;
  const providers = configured(deps.config);
  const ProviderParams = Type.Object({
    provider: Type.String({
      maxLength: 32,
      description: `A configured provider: ${providers.join(', ')}`,
      examples: providers,
    }),
  });
  const secure = deps.config.publicApiUrl.startsWith('https:') ? '; Secure' : '';
  const cookiePath = '/api/v1/auth/oauth';
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'GET',
      url: '/auth/oauth/:provider',
      auth: 'none',
      bucket: 'auth',
      enabled,
      doc: docs.startSocialSignIn,
      schema: {
        params: ProviderParams,
        querystring: StartSocialQuery,
        response: { 302: Type.Null({ description: 'Redirect to the provider (Location), with the state cookie' }) },
      },
      handler: async (ctx, { params, query }) => {
        const { url, state } = await oauth.startOAuth(deps, params.provider, query.redirectTo, query.codeChallenge);
        ctx.reply.header(
          'set-cookie',
          `${oauth.STATE_COOKIE}=${state}; Path=${cookiePath}; Max-Age=600; HttpOnly; SameSite=Lax${secure}`,
        );
        return ctx.reply.redirect(url, 302);
      },
    }),
    route({
      method: 'GET',
      url: '/auth/oauth/:provider/callback',
      auth: 'none',
      bucket: 'auth',
      enabled,
      doc: docs.finishSocialSignIn,
      schema: {
        params: ProviderParams,
        querystring: CallbackQuery,
        response: {
          200: ref(LoginResponse, 'Signed in'),
          302: Type.Null({
            description: 'The hand-off: redirect to the flow’s redirectTo with #code=… or #error=…&error_description=…',
          }),
        },
      },
      handler: async (ctx, { params, query }) => {
        const { request, reply } = ctx;
        // The state cookie has done its job whatever happens next.
        reply.header(
          'set-cookie',
          `${oauth.STATE_COOKIE}=; Path=${cookiePath}; Max-Age=0; HttpOnly; SameSite=Lax${secure}`,
        );
        const flow = await oauth.takeFlow(
          deps,
          params.provider,
          readCookie(request.headers.cookie, oauth.STATE_COOKIE),
        );
        if (flow.redirectTo === null) return oauth.finishOAuth(deps, flow, query, clientMeta(request));
        let fragment: Record<string, string>;
        try {
          fragment = { code: await oauth.finishOAuthHandoff(deps, flow, query) };
        } catch (err) {
          const known = toAppError(err as Error);
          if (!known) request.log.error({ err }, 'social sign-in hand-off failed');
          const failure = known ?? internalError(request);
          fragment = { error: failure.code, error_description: failure.message };
        }
        return reply.redirect(handoffLocation(flow.redirectTo, fragment), 302);
      },
    }),
    route({
      method: 'POST',
      url: '/auth/oauth/exchange',
      auth: 'none',
      bucket: 'auth',
      enabled,
      doc: docs.exchangeSocialSignInCode,
      schema: { body: ref(HandoffExchangeBody), response: { 200: ref(LoginResponse, 'Signed in') } },
      handler: async (ctx, { body }) =>
        cookies.deliver(ctx.request, ctx.reply, await oauth.exchangeHandoff(deps, body, clientMeta(ctx.request))),
    }),
  ];
}
