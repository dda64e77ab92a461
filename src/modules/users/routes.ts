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

const tags = ['Users'];
const sessionTags = ['Sessions'];
const USER_NOT_FOUND = { code: 'NOT_FOUND', message: 'User not found' } as const;
// Session management can be switched off (docs/api.md#sign-in-method-switches); its routes then answer 404.
const sessionManagement = (config: Config) => config.auth.methods.sessionManagement;

export function userRoutes(deps: Infra) {
  const cookies = sessionCookies(deps.config);
  return [
    route({
      method: 'GET',
      url: '/users/me',
      auth: 'user',
      operationId: 'getMe',
      tags,
      summary: 'The signed-in user',
      description: 'The person the access token belongs to (docs/api.md#user-resource). API keys get 403.',
      schema: { response: { 200: ref(User, 'The signed-in user') } },
      errors: [USER_NOT_FOUND],
      handler: (ctx) => users.getMe(deps, ctx.user),
    }),
    route({
      method: 'PATCH',
      url: '/users/me',
      auth: 'user',
      operationId: 'updateMe',
      tags,
      summary: 'Update the profile; preferences are merged',
      description:
        'Any of `fullName`, `avatarUrl` (null removes it) and `preferences`, merged one level deep into `notifications`; `timezone` must be an IANA zone name. Answers the whole updated user (docs/api.md#profile).',
      schema: { body: ref(PatchMeBody), response: { 200: ref(User, 'The updated user') } },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid request body',
          details: 'preferences.timezone: must be an IANA time zone such as Europe/Paris',
        },
        USER_NOT_FOUND,
      ],
      handler: (ctx, { body }) => users.updateMe(deps, ctx.user, body),
    }),
    route({
      method: 'GET',
      url: '/users/me/export',
      auth: 'user',
      operationId: 'exportMe',
      tags,
      summary: 'Everything the service holds about you, as one JSON document',
      description:
        'The profile, sessions (revoked ones too), memberships, social links, passkeys and the audit entries of your changes, without any secret: no password hash, two-factor secret, backup code, token or key material (docs/api.md#account-export).',
      schema: { response: { 200: ref(AccountExport, 'The export') } },
      errors: [USER_NOT_FOUND],
      handler: (ctx) => exportAccount(deps, ctx.user),
    }),
    route({
      method: 'GET',
      url: '/users/me/sessions',
      auth: 'user',
      enabled: sessionManagement,
      operationId: 'listSessions',
      tags: sessionTags,
      summary: 'Active sessions, most recently used first',
      description:
        'Sessions neither revoked nor expired; `isCurrent` marks the one making the request. `lastUsedAt` may lag by up to 15 seconds (docs/api.md#session-management).',
      schema: { querystring: PageQuery, response: { 200: ref(SessionList, 'A page of sessions') } },
      handler: (ctx, { query }) => users.listSessions(deps, ctx.user, query.page ?? 1, query.pageSize ?? 20),
    }),
    route({
      method: 'DELETE',
      url: '/users/me/sessions/:sessionId',
      auth: 'user',
      enabled: sessionManagement,
      operationId: 'revokeSession',
      tags: sessionTags,
      summary: 'Revoke one of your other sessions',
      description:
        'Its tokens stop working at once, on every instance. The current session cannot be revoked this way (400: use POST /auth/logout); a session that is not one of your active ones answers 404.',
      schema: { params: SessionParams, response: { 200: ref(Message, 'Revoked') } },
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'The current session cannot be revoked this way',
          details: 'sessionId: is the current session; use POST /auth/logout',
        },
        { code: 'NOT_FOUND', message: 'Session not found' },
      ],
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
      operationId: 'revokeAllSessions',
      tags: sessionTags,
      summary: 'Revoke every session, the current one included',
      description:
        'Ends every session of the caller, the current one included; `revoked` is how many were active. With `X-Session-Mode: cookie` the answer also removes the web app’s `tenantry_refresh` cookie (docs/api.md#session-management).',
      schema: { response: { 200: ref(RevokedAll, 'Every session is revoked') } },
      handler: async (ctx) => {
        const revoked = await users.revokeAllSessions(deps, ctx.user);
        cookies.clear(ctx.request, ctx.reply);
        return { message: 'All sessions revoked', ...revoked };
      },
    }),
  ];
}
