import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Infra } from '../../infra.js';
import { requireUser } from '../../http/access.js';
import { errors } from '../../http/errors-doc.js';
import { bearerAuth, Message, ref } from '../../http/schemas.js';
import { sessionCookies } from '../../http/session-cookie.js';
import { PageQuery } from '../../platform/pagination.js';
import { PatchMeBody, RevokedAll, SessionList, SessionParams, User } from './schemas.js';
import * as users from './service.js';
import { AccountExport } from './export.schemas.js';
import { exportAccount } from './export.service.js';

const tags = ['Users'];
const security = bearerAuth;
const USER_NOT_FOUND = { code: 'NOT_FOUND', message: 'User not found' } as const;

export const userRoutes: FastifyPluginAsyncTypebox<{ deps: Infra }> = async (app, { deps }) => {
  app.get('/users/me', {
    schema: {
      tags,
      security,
      operationId: 'getMe',
      summary: 'The signed-in user',
      description: 'The person the access token belongs to (docs/api.md#user-resource). API keys get 403.',
      response: { 200: ref(User, 'The signed-in user'), ...errors(USER_NOT_FOUND) },
    },
    handler: async (req) => users.getMe(deps, requireUser(req)),
  });

  app.patch('/users/me', {
    schema: {
      tags,
      security,
      operationId: 'updateMe',
      summary: 'Update the profile; preferences are merged',
      description:
        'Any of `fullName`, `avatarUrl` (null removes it) and `preferences`, merged one level deep into `notifications`; `timezone` must be an IANA zone name. Answers the whole updated user (docs/api.md#profile).',
      body: ref(PatchMeBody),
      response: {
        200: ref(User, 'The updated user'),
        ...errors(
          { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: 'preferences.timezone: must be an IANA time zone such as Europe/Paris' },
          USER_NOT_FOUND,
        ),
      },
    },
    handler: async (req) => users.updateMe(deps, requireUser(req), req.body),
  });

  app.get('/users/me/export', {
    schema: {
      tags,
      security,
      operationId: 'exportMe',
      summary: 'Everything the service holds about you, as one JSON document',
      description:
        'The profile, sessions (revoked ones too), memberships, social links, passkeys and the audit entries of your changes, without any secret: no password hash, two-factor secret, backup code, token or key material (docs/api.md#account-export).',
      response: { 200: ref(AccountExport, 'The export'), ...errors(USER_NOT_FOUND) },
    },
    handler: async (req) => exportAccount(deps, requireUser(req)),
  });

  // Session management can be switched off (docs/api.md#sign-in-method-switches); its routes then answer 404.
  if (!deps.config.auth.methods.sessionManagement) return;
  const sessionTags = ['Sessions'];

  app.get('/users/me/sessions', {
    schema: {
      tags: sessionTags,
      security,
      operationId: 'listSessions',
      summary: 'Active sessions, most recently used first',
      description: 'Sessions neither revoked nor expired; `isCurrent` marks the one making the request. `lastUsedAt` may lag by up to 15 seconds (docs/api.md#session-management).',
      querystring: PageQuery,
      response: { 200: ref(SessionList, 'A page of sessions') },
    },
    handler: async (req) => users.listSessions(deps, requireUser(req), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  app.delete('/users/me/sessions/:sessionId', {
    schema: {
      tags: sessionTags,
      security,
      operationId: 'revokeSession',
      summary: 'Revoke one of your other sessions',
      description: 'Its tokens stop working at once, on every instance. The current session cannot be revoked this way (400: use POST /auth/logout); a session that is not one of your active ones answers 404.',
      params: SessionParams,
      response: {
        200: ref(Message, 'Revoked'),
        ...errors(
          { code: 'VALIDATION_ERROR', message: 'The current session cannot be revoked this way', details: 'sessionId: is the current session; use POST /auth/logout' },
          { code: 'NOT_FOUND', message: 'Session not found' },
        ),
      },
    },
    handler: async (req) => {
      await users.revokeSession(deps, requireUser(req), req.params.sessionId);
      return { message: 'Session revoked' };
    },
  });

  const cookies = sessionCookies(deps.config);
  for (const url of ['/users/me/sessions', '/users/sessions']) {
    const alias = url === '/users/sessions';
    app.delete(url, {
      schema: {
        tags: sessionTags,
        security,
        operationId: alias ? 'revokeAllSessionsAlias' : 'revokeAllSessions',
        summary: alias ? 'Alias of DELETE /users/me/sessions' : 'Revoke every session, the current one included',
        description:
          'Ends every session of the caller, the current one included; `revoked` is how many were active. With `X-Session-Mode: cookie` the answer also removes the web app’s `tenantry_refresh` cookie (docs/api.md#session-management).',
        response: { 200: ref(RevokedAll, 'Every session is revoked') },
      },
      handler: async (req, reply) => {
        const revoked = await users.revokeAllSessions(deps, requireUser(req));
        cookies.clear(req, reply);
        return { message: 'All sessions revoked', ...revoked };
      },
    });
  }
};
