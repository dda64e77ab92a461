// CORS for the front end at APP_ORIGIN (DECISIONS §0): that origin, and only it, may call the API
// from a browser. Credentials travel in the Authorization header, not in cookies, so no
// Access-Control-Allow-Credentials. Preflights are answered here, before routing and rate limits.
import type { FastifyInstance } from 'fastify';

const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE';
const ALLOW_HEADERS = 'Authorization, Content-Type, X-API-Key, X-Request-Id';
// What a browser script may read from a response besides the CORS-safelisted headers.
const EXPOSE_HEADERS = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id';
const MAX_AGE_S = '600';

export function registerCors(app: FastifyInstance, appOrigin: string) {
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    reply.header('vary', 'Origin');
    const allowed = origin === appOrigin;
    if (allowed) {
      reply.header('access-control-allow-origin', origin);
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
