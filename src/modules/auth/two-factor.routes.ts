import type { Config } from '../../config.js';
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { ref } from '../../http/schemas.js';
import { sessionCookies } from '../../http/session-cookie.js';
import {
  CodeBody,
  DisableTwoFactorBody,
  LoginResponse,
  TwoFactorLoginBody,
  TwoFactorSetupBody,
  TwoFactorSetupResponse,
  TwoFactorState,
} from './schemas.js';
import {
  clientMeta,
  COOKIE_MODE,
  INVALID_CODE,
  INVALID_SECOND_FACTOR,
  LOCKED,
  USER_NOT_FOUND,
} from './route-options.js';
import { completeTwoFactorLogin } from './two-factor-login.service.js';
import * as twoFactor from './two-factor.service.js';

const tags = ['Two-factor'];
const WRONG_PASSWORD = {
  code: 'AUTHENTICATION_ERROR',
  name: 'wrongPassword',
  message: 'Password is incorrect',
} as const;
const enabled = (config: Config) => config.auth.methods.twoFactor;

export function twoFactorRoutes(deps: Infra) {
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'POST',
      url: '/auth/two-factor/setup',
      auth: 'user',
      bucket: 'auth',
      enabled,
      operationId: 'setUpTwoFactor',
      tags,
      summary: 'Start (or restart) two-factor setup: a new secret and 10 new backup codes',
      description:
        'Answers a pending secret, its `otpauthUrl` to show as a QR code (`qrCode` is the same URI under its former name, deprecated) and 10 new backup codes; the old backup codes stop working at once. A wrong password counts toward the sign-in lockout (423 once locked). While two-factor is enabled a current code is required, and the current secret stays in force until a code of the new one is verified (docs/api.md#two-factor-authentication).',
      schema: {
        body: ref(TwoFactorSetupBody),
        response: {
          200: ref(TwoFactorSetupResponse, 'A pending secret: confirm it with POST /auth/two-factor/verify'),
        },
      },
      errors: [
        WRONG_PASSWORD,
        {
          code: 'VALIDATION_ERROR',
          name: 'codeRequired',
          message: 'A current two-factor code is required',
          details: 'code: is required while two-factor authentication is enabled',
        },
        INVALID_CODE,
        USER_NOT_FOUND,
        LOCKED,
      ],
      handler: async (ctx, { body }) => {
        const { secret, otpauthUrl, backupCodes } = await twoFactor.setupTwoFactor(deps, ctx.user, body);
        // qrCode: the former name of otpauthUrl, still sent (docs/decisions.md#renamed-and-unnested-fields).
        return { secret, otpauthUrl, qrCode: otpauthUrl, backupCodes };
      },
    }),
    route({
      method: 'POST',
      url: '/auth/two-factor/verify',
      auth: 'user',
      bucket: 'auth',
      enabled,
      operationId: 'verifyTwoFactor',
      tags,
      summary: 'Confirm the pending secret with a code; enables two-factor',
      description: 'Takes a 6-digit code of the secret from the last setup. No pending setup, or a wrong code: 400.',
      schema: { body: ref(CodeBody), response: { 200: ref(TwoFactorState, 'Two-factor is on') } },
      errors: [
        INVALID_CODE,
        {
          code: 'VALIDATION_ERROR',
          name: 'noPendingSetup',
          message: 'No two-factor setup is pending',
          details: 'Call POST /auth/two-factor/setup first',
        },
      ],
      handler: (ctx, { body }) => twoFactor.verifyTwoFactorSetup(deps, ctx.user, body.code),
    }),
    route({
      method: 'POST',
      url: '/auth/two-factor/disable',
      auth: 'user',
      bucket: 'auth',
      enabled,
      operationId: 'disableTwoFactor',
      tags,
      summary: 'Turn two-factor off (password and a current code or backup code)',
      description:
        'A wrong password (401) or code (400) counts toward the sign-in lockout (423 once locked). When two-factor is not on: 400.',
      schema: { body: ref(DisableTwoFactorBody), response: { 200: ref(TwoFactorState, 'Two-factor is off') } },
      errors: [
        WRONG_PASSWORD,
        INVALID_CODE,
        { code: 'VALIDATION_ERROR', name: 'notEnabled', message: 'Two-factor authentication is not enabled' },
        USER_NOT_FOUND,
        LOCKED,
      ],
      handler: (ctx, { body }) => twoFactor.disableTwoFactor(deps, ctx.user, body),
    }),
    route({
      method: 'POST',
      url: '/auth/two-factor/login',
      auth: 'none',
      bucket: 'auth',
      enabled,
      operationId: 'completeTwoFactorLogin',
      tags: ['Social sign-in'],
      summary: 'Finish a social sign-in that asked for a two-factor code',
      description: `The social sign-in callback (or the hand-off's exchange) answers 401 with \`requiresTwoFactor\` and a \`twoFactorToken\` when the account has two-factor on; send that short-lived, single-use token with a TOTP or backup code. A token takes at most 5 wrong codes, each counted by the account's lockout (docs/api.md#social-sign-in). ${COOKIE_MODE}`,
      schema: { body: ref(TwoFactorLoginBody), response: { 200: ref(LoginResponse, 'Signed in') } },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid or expired token',
          details: 'twoFactorToken: is unknown, already used or expired',
        },
        { ...INVALID_SECOND_FACTOR, name: undefined },
        LOCKED,
      ],
      handler: async (ctx, { body }) =>
        cookies.deliver(ctx.request, ctx.reply, await completeTwoFactorLogin(deps, body, clientMeta(ctx.request))),
    }),
  ];
}
