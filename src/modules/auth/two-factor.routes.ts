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
import { clientMeta } from './route-options.js';
import { completeTwoFactorLogin } from './two-factor-login.service.js';
import * as twoFactor from './two-factor.service.js';
import { docs } from './docs.js';

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
      doc: docs.setUpTwoFactor,
      schema: {
        body: ref(TwoFactorSetupBody),
        response: {
          200: ref(TwoFactorSetupResponse, 'A pending secret: confirm it with POST /auth/two-factor/verify'),
        },
      },
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
      doc: docs.verifyTwoFactor,
      schema: { body: ref(CodeBody), response: { 200: ref(TwoFactorState, 'Two-factor is on') } },
      handler: (ctx, { body }) => twoFactor.verifyTwoFactorSetup(deps, ctx.user, body.code),
    }),
    route({
      method: 'POST',
      url: '/auth/two-factor/disable',
      auth: 'user',
      bucket: 'auth',
      enabled,
      doc: docs.disableTwoFactor,
      schema: { body: ref(DisableTwoFactorBody), response: { 200: ref(TwoFactorState, 'Two-factor is off') } },
      handler: (ctx, { body }) => twoFactor.disableTwoFactor(deps, ctx.user, body),
    }),
    route({
      method: 'POST',
      url: '/auth/two-factor/login',
      auth: 'none',
      bucket: 'auth',
      enabled,
      doc: docs.completeTwoFactorLogin,
      schema: { body: ref(TwoFactorLoginBody), response: { 200: ref(LoginResponse, 'Signed in') } },
      handler: async (ctx, { body }) =>
        cookies.deliver(ctx.request, ctx.reply, await completeTwoFactorLogin(deps, body, clientMeta(ctx.request))),
    }),
  ];
}
