// GET /auth/session: the live view of the caller's session (docs/api.md#the-session-now), beside the
// access token's claims, which are a copy made when it was signed.
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { ref } from '../../http/schemas.js';
import { SessionNow } from './schemas.js';
import { sessionNow } from './session.service.js';

export function sessionRoutes(deps: Infra) {
  return [
    route({
      method: 'GET',
      url: '/auth/session',
      auth: 'user',
      operationId: 'getSession',
      tags: ['Tokens'],
      summary: "The caller's session now: its active organization, role and permissions",
      description:
        'Read from the database on each call: a revoked session answers 401, and a membership lost or a role changed since the access token was signed shows at once (the token keeps its claims until its next refresh). `role` and `permissions` are those of the active organization, else null and []; `organizationId` is null once the membership has ended. `amr` says how the session signed in; `impersonatorId` is null. API keys get 403.',
      schema: { response: { 200: ref(SessionNow, 'The session') } },
      handler: (ctx) => sessionNow(deps, ctx.user),
    }),
  ];
}
