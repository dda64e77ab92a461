import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import { requireUser } from '../../http/actor.js';
import { bearerAuth, errors, Message } from '../../http/schemas.js';
import { PageQuery } from '../../platform/pagination.js';
import { ChangePasswordBody, PatchMeBody, RevokedAll, SessionList, SessionParams, User } from './schemas.js';
import * as users from './service.js';

const tags = ['users'];
const security = bearerAuth;

export const userRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get('/users/me', {
    schema: { tags, security, summary: 'The signed-in user', response: { 200: User, ...errors(401, 404) } },
    handler: async (req) => users.getMe(deps, requireUser(req)),
  });

  app.patch('/users/me', {
    schema: { tags, security, summary: 'Update the profile; preferences are merged', body: PatchMeBody, response: { 200: User, ...errors(401, 404) } },
    handler: async (req) => users.updateMe(deps, requireUser(req), req.body),
  });

  if (deps.config.auth.methods.password) {
    app.put('/users/me/password', {
      schema: {
        tags,
        security,
        summary: 'Change the password; every other session is signed out',
        body: ChangePasswordBody,
        response: { 200: Message, ...errors(401, 404) },
      },
      handler: async (req) => users.changePassword(deps, requireUser(req), req.body),
    });
  }

  // Session management can be switched off (spec §5.2.6); its routes then answer 404.
  if (!deps.config.auth.methods.sessionManagement) return;

  app.get('/users/me/sessions', {
    schema: {
      tags,
      security,
      summary: 'Active sessions, most recently used first',
      querystring: PageQuery,
      response: { 200: SessionList, ...errors(401) },
    },
    handler: async (req) => users.listSessions(deps, requireUser(req), req.query.page ?? 1, req.query.pageSize ?? 20),
  });

  app.delete('/users/me/sessions/:sessionId', {
    schema: {
      tags,
      security,
      summary: 'Revoke one of your other sessions',
      params: SessionParams,
      response: { 200: Message, ...errors(401, 404) },
    },
    handler: async (req) => users.revokeSession(deps, requireUser(req), req.params.sessionId),
  });

  for (const url of ['/users/me/sessions', '/users/sessions']) {
    app.delete(url, {
      schema: {
        tags,
        security,
        summary: url === '/users/sessions' ? 'Alias of DELETE /users/me/sessions' : 'Revoke every session, the current one included',
        response: { 200: RevokedAll, ...errors(401) },
      },
      handler: async (req) => users.revokeAllSessions(deps, requireUser(req)),
    });
  }
};
