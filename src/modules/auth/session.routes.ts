// GET /auth/session: the live view of the caller's session (docs/api.md#the-session-now), beside the
// access token's claims, which are a copy made when it was signed.
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { ref } from '../../http/schemas.js';
import { SessionNow } from './schemas.js';
import { sessionNow } from './session.service.js';
import { docs } from './docs.js';

export function sessionRoutes(deps: Infra) {
  return [
    route({
      method: 'GET',
      url: '/auth/session',
      auth: 'user',
      doc: docs.getSession,
      schema: { response: { 200: ref(SessionNow, 'The session') } },
      handler: (ctx) => sessionNow(deps, ctx.user),
    }),
  ];
}
