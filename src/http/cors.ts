// CORS for the front end at APP_ORIGIN (docs/api.md#cors): that origin, and only it, may call the API
// from a browser. Access tokens travel in the Authorization header; the web app's refresh token in
// cookie mode is a cookie (docs/api.md#cookie-mode), so that origin is also allowed credentials and
// the X-Session-Mode header: what a front end on another origin (of the same site) needs for it.
// Preflights are answered here, before routing and rate limits.
import type { FastifyInstance } from 'fastify';

const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE';
const ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, X-API-Key, X-Request-Id, X-Session-Mode';
// What a browser script may read from a response besides the CORS-safelisted headers.
const EXPOSE_HEADERS =
  'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id, Idempotent-Replayed';
const MAX_AGE_S = '600';

export function registerCors(app: FastifyInstance, appOrigin: string) {
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    reply.header('vary', 'Origin');
    const allowed = origin === appOrigin;
    if (allowed) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-credentials', 'true');
      reply.header('access-control-expose-headers', EXPOSE_HEADERS);
    }
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      if (allowed) {
        reply.header('access-control-allow-methods', ALLOW_METHODS);
        reply.header('access-control-allow-headers', ALLOW_HEADERS);
        reply.header('access-control-max-age', MAX_AGE_S);
      }
      // Another origin gets no allow headers, so the browser stops there.
      return reply.status(204).send();
    }
  });
}
