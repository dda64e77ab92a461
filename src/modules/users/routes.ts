// The signed-in person's own account: the profile, the account export, and the sessions
// (docs/api.md#user-resource, #session-management). Every route is the person's: API keys get 403.
import type { Config } from '../../config.js';
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { Message, ref } from '../../http/schemas.js';
import { sessionCookies } from '../../http/session-cookie.js';
import { PageQuery } from '../../platform/pagination.js';
import { PatchMeBody, RevokedAll, SessionList, SessionParams, User } from './schemas.js';
import * as users from './service.js';
import { AccountExport } from './export.schemas.js';
import { exportAccount } from './export.service.js';
import { docs } from './docs.js';

// Session management can be switched off (docs/api.md#sign-in-method-switches); its routes then answer 404.
const sessionManagement = (config: Config) => config.auth.methods.sessionManagement;

export function userRoutes(deps: Infra) {
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'GET',
      url: '/users/me',
      auth: 'user',
      doc: docs.getMe,
      schema: { response: { 200: ref(User, 'The signed-in user') } },
      handler: (ctx) => users.getMe(deps, ctx.user),
    }),
    route({
      method: 'PATCH',
      url: '/users/me',
      auth: 'user',
      doc: docs.updateMe,
      schema: { body: ref(PatchMeBody), response: { 200: ref(User, 'The updated user') } },
      handler: (ctx, { body }) => users.updateMe(deps, ctx.user, body),
    }),
    route({
      method: 'GET',
      url: '/users/me/export',
      auth: 'user',
      doc: docs.exportMe,
      schema: { response: { 200: ref(AccountExport, 'The export') } },
      handler: (ctx) => exportAccount(deps, ctx.user),
    }),
    route({
      method: 'GET',
      url: '/users/me/sessions',
      auth: 'user',
      enabled: sessionManagement,
      doc: docs.listSessions,
      schema: { querystring: PageQuery, response: { 200: ref(SessionList, 'A page of sessions') } },
      handler: (ctx, { query }) => users.listSessions(deps, ctx.user, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'DELETE',
      url: '/users/me/sessions/:sessionId',
      auth: 'user',
      enabled: sessionManagement,
      doc: docs.revokeSession,
      schema: { params: SessionParams, response: { 200: ref(Message, 'Revoked') } },
      handler: async (ctx, { params }) => {
        await users.revokeSession(deps, ctx.user, params.sessionId);
        return { message: 'Session revoked' };
      },
    }),
    route({
      method: 'DELETE',
      url: '/users/me/sessions',
      auth: 'user',
      enabled: sessionManagement,
      aliases: [
        {
          url: '/users/sessions',
          operationId: 'revokeAllSessionsAlias',
          ownSummary: 'Alias of DELETE /users/me/sessions',
        },
      ],
      doc: docs.revokeAllSessions,
      schema: { response: { 200: ref(RevokedAll, 'Every session is revoked') } },
      handler: async (ctx) => {
        const revoked = await users.revokeAllSessions(deps, ctx.user);
        cookies.clear(ctx.request, ctx.reply);
        return { message: 'All sessions revoked', ...revoked };
      },
    }),
  ];
}
