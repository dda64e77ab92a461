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
import {
  clientMeta,
  COOKIE_MODE,
  INVALID_SECOND_FACTOR,
  INVALID_TOKEN,
  LOCKED,
  TWO_FACTOR_REQUIRED,
} from './route-options.js';

export function magicLinkRoutes(deps: Infra) {
  const tags = ['Magic link'];
  const enabled = (config: Config) => config.auth.methods.magicLink;
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'POST',
      url: '/auth/magic-link',
      auth: 'none',
      bucket: 'auth',
      enabled,
      operationId: 'requestMagicLink',
      tags,
      summary: 'Email a sign-in link (200 whether or not the account exists)',
      description:
        'Mails `{APP_ORIGIN}/magic-link?token=…` (single use, valid 15 minutes) to an existing, active account; the answer and its timing are the same either way (docs/api.md#magic-links).',
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
      operationId: 'verifyMagicLink',
      tags,
      summary: 'Sign in with the token of a magic link',
      description: `Answers as login does. With two-factor enabled and no \`twoFactorCode\`: 401 \`requiresTwoFactor\`, and the link stays usable for the request with the code. The first use on an address never verified verifies it and claims the account (docs/api.md#claiming-an-unverified-address). ${COOKIE_MODE}`,
      schema: { body: ref(MagicLinkVerifyBody), response: { 200: ref(LoginResponse, 'Signed in') } },
      errors: [INVALID_TOKEN, TWO_FACTOR_REQUIRED, INVALID_SECOND_FACTOR, LOCKED],
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
  const tags = ['Social sign-in'];
  const ProviderParams = Type.Object({
    provider: Type.String({
      maxLength: 32,
      description: `A configured provider: ${providers.join(', ')}`,
      examples: providers,
    }),
  });
  const secure = deps.config.publicApiUrl.startsWith('https:') ? '; Secure' : '';
  const cookiePath = '/api/v1/auth/oauth';
  const unavailable = {
    code: 'NOT_FOUND',
    message: 'Route not found',
    details: 'Sign-in with gitlab is not available',
  } as const;
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'GET',
      url: '/auth/oauth/:provider',
      auth: 'none',
      bucket: 'auth',
      enabled,
      operationId: 'startSocialSignIn',
      tags,
      summary: 'Start social sign-in (google or github): redirects to the provider',
      description:
        'For a browser, not a program: sets a short-lived state cookie and answers 302 to the provider’s consent page. With `redirectTo` (a page of the web app: its origin must be exactly APP_ORIGIN, else 400), the callback hands the sign-in back to that page with a one-time code instead of answering JSON. A provider that is not configured or is switched off answers 404 (docs/api.md#social-sign-in).',
      schema: {
        params: ProviderParams,
        querystring: StartSocialQuery,
        response: { 302: Type.Null({ description: 'Redirect to the provider (Location), with the state cookie' }) },
      },
      errors: [
        unavailable,
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid redirectTo',
          details: 'redirectTo: must be a URL on https://app.example.com',
        },
      ],
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
      operationId: 'finishSocialSignIn',
      tags,
      summary: 'Provider callback: links or creates the account and answers as login does, or hands it to the web app',
      description:
        'The provider sends the browser here with `code` and `state`; the state must match the cookie set by the start. Only an email the provider marks verified creates or reaches an account. With two-factor on: 401 with `requiresTwoFactor` and a `twoFactorToken` for POST /auth/two-factor/login. A flow started with `redirectTo` answers 302 to that page instead: `#code=…` (for POST /auth/oauth/exchange) or `#error=CODE&error_description=…`, never JSON (docs/api.md#social-sign-in).',
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
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid OAuth state',
          details: 'state: does not match this browser’s sign-in request',
        },
        {
          code: 'AUTHENTICATION_ERROR',
          message: 'Sign-in with the provider failed',
          details: 'The provider refused the authorization code (invalid_grant)',
        },
        {
          ...TWO_FACTOR_REQUIRED,
          extra: { requiresTwoFactor: true, twoFactorToken: 'k3J9x0bQ2mV7tY1cR8wN4pL6zH5dF0aS' },
        },
        {
          code: 'EMAIL_NOT_VERIFIED',
          message: 'The provider has not verified this email address',
          details: 'Verify the address with the provider, then sign in again',
        },
        unavailable,
        LOCKED,
        { code: 'SERVICE_UNAVAILABLE', message: 'The sign-in provider is unreachable', details: 'Try again shortly' },
      ],
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
      operationId: 'exchangeSocialSignInCode',
      tags,
      summary: 'Turn the one-time code of a social sign-in hand-off into the sign-in',
      description: `The code comes from the fragment of the page the callback redirected to (\`#code=…\`); single use, valid 60 seconds. Answers as login does: tokens and the user, or 401 with \`requiresTwoFactor\` and a \`twoFactorToken\` for POST /auth/two-factor/login. A used, expired or unknown code answers 400 and changes nothing. A flow started with \`codeChallenge\` needs its \`codeVerifier\` here; a wrong or missing verifier (or one sent for a flow without a challenge) answers 400 and spends the code (docs/api.md#social-sign-in). ${COOKIE_MODE}`,
      schema: { body: ref(HandoffExchangeBody), response: { 200: ref(LoginResponse, 'Signed in') } },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid or expired code',
          details: 'code: is unknown, already used or expired',
        },
        {
          code: 'VALIDATION_ERROR',
          name: 'verifier',
          message: 'Invalid code verifier',
          details: 'codeVerifier: does not match the codeChallenge this sign-in was started with',
        },
        {
          ...TWO_FACTOR_REQUIRED,
          extra: { requiresTwoFactor: true, twoFactorToken: 'k3J9x0bQ2mV7tY1cR8wN4pL6zH5dF0aS' },
        },
        {
          code: 'AUTHENTICATION_ERROR',
          name: 'inactive',
          message: 'Invalid email or password',
          details: 'The account was deactivated meanwhile',
        },
        LOCKED,
      ],
      handler: async (ctx, { body }) =>
        cookies.deliver(ctx.request, ctx.reply, await oauth.exchangeHandoff(deps, body, clientMeta(ctx.request))),
    }),
  ];
}
