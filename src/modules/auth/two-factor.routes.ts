import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Infra } from '../../infra.js';
import { requireUser } from '../../http/access.js';
import { errors } from '../../http/errors-doc.js';
import { bearerAuth, ref } from '../../http/schemas.js';
import { sessionCookies } from '../../http/session-cookie.js';
import { CodeBody, DisableTwoFactorBody, LoginResponse, TwoFactorLoginBody, TwoFactorSetupBody, TwoFactorSetupResponse, TwoFactorState } from './schemas.js';
import { clientMeta, COOKIE_MODE, INVALID_CODE, INVALID_SECOND_FACTOR, LOCKED, open, signedIn, USER_NOT_FOUND } from './route-options.js';
import { completeTwoFactorLogin } from './two-factor-login.service.js';
import * as twoFactor from './two-factor.service.js';

const tags = ['Two-factor'];
const WRONG_PASSWORD = { code: 'AUTHENTICATION_ERROR', name: 'wrongPassword', message: 'Password is incorrect' } as const;

export const twoFactorRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  const security = bearerAuth;
  const cookies = sessionCookies(deps.config);
  app.post('/auth/two-factor/setup', {
    config: signedIn,
    schema: {
      tags,
      security,
      operationId: 'setUpTwoFactor',
      summary: 'Start (or restart) two-factor setup: a new secret and 10 new backup codes',
      description:
        'Answers a pending secret, its `otpauthUrl` to show as a QR code (`qrCode` is the same URI under its former name, deprecated) and 10 new backup codes; the old backup codes stop working at once. A wrong password counts toward the sign-in lockout (423 once locked). While two-factor is enabled a current code is required, and the current secret stays in force until a code of the new one is verified (docs/api.md#two-factor-authentication).',
      body: ref(TwoFactorSetupBody),
      response: {
        200: ref(TwoFactorSetupResponse, 'A pending secret: confirm it with POST /auth/two-factor/verify'),
        ...errors(
          WRONG_PASSWORD,
          { code: 'VALIDATION_ERROR', name: 'codeRequired', message: 'A current two-factor code is required', details: 'code: is required while two-factor authentication is enabled' },
          INVALID_CODE,
          USER_NOT_FOUND,
          LOCKED,
        ),
      },
    },
    handler: async (req) => {
      const { secret, otpauthUrl, backupCodes } = await twoFactor.setupTwoFactor(deps, requireUser(req), req.body);
      // qrCode: the former name of otpauthUrl, still sent (docs/decisions.md#renamed-and-unnested-fields).
      return { secret, otpauthUrl, qrCode: otpauthUrl, backupCodes };
    },
  });

  app.post('/auth/two-factor/verify', {
    config: signedIn,
    schema: {
      tags,
      security,
      operationId: 'verifyTwoFactor',
      summary: 'Confirm the pending secret with a code; enables two-factor',
      description: 'Takes a 6-digit code of the secret from the last setup. No pending setup, or a wrong code: 400.',
      body: ref(CodeBody),
      response: {
        200: ref(TwoFactorState, 'Two-factor is on'),
        ...errors(INVALID_CODE, { code: 'VALIDATION_ERROR', name: 'noPendingSetup', message: 'No two-factor setup is pending', details: 'Call POST /auth/two-factor/setup first' }),
      },
    },
    handler: async (req) => twoFactor.verifyTwoFactorSetup(deps, requireUser(req), req.body.code),
  });

  app.post('/auth/two-factor/disable', {
    config: signedIn,
    schema: {
      tags,
      security,
      operationId: 'disableTwoFactor',
      summary: 'Turn two-factor off (password and a current code or backup code)',
      description: 'A wrong password (401) or code (400) counts toward the sign-in lockout (423 once locked). When two-factor is not on: 400.',
      body: ref(DisableTwoFactorBody),
      response: {
        200: ref(TwoFactorState, 'Two-factor is off'),
        ...errors(WRONG_PASSWORD, INVALID_CODE, { code: 'VALIDATION_ERROR', name: 'notEnabled', message: 'Two-factor authentication is not enabled' }, USER_NOT_FOUND, LOCKED),
      },
    },
    handler: async (req) => twoFactor.disableTwoFactor(deps, requireUser(req), req.body),
  });

  app.post('/auth/two-factor/login', {
    config: open,
    schema: {
      tags: ['Social sign-in'],
      operationId: 'completeTwoFactorLogin',
      summary: 'Finish a social sign-in that asked for a two-factor code',
      description:
        `The social sign-in callback (or the hand-off's exchange) answers 401 with \`requiresTwoFactor\` and a \`twoFactorToken\` when the account has two-factor on; send that short-lived, single-use token with a TOTP or backup code. A token takes at most 5 wrong codes, each counted by the account's lockout (docs/api.md#social-sign-in). ${COOKIE_MODE}`,
      body: ref(TwoFactorLoginBody),
      response: {
        200: ref(LoginResponse, 'Signed in'),
        ...errors(
          { code: 'VALIDATION_ERROR', message: 'Invalid or expired token', details: 'twoFactorToken: is unknown, already used or expired' },
          { ...INVALID_SECOND_FACTOR, name: undefined },
          LOCKED,
        ),
      },
    },
    handler: async (req, reply) => cookies.deliver(req, reply, await completeTwoFactorLogin(deps, req.body, clientMeta(req))),
  });
};
