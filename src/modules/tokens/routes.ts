// The public keys of the access tokens (docs/tokens.md): what another service needs to verify them
// without any secret. Served from memory (platform/identity/signing-keys.ts), cacheable for 5 minutes.
// The same document is at /.well-known/jwks.json, outside /api/v1 (app.ts).
import type { FastifyReply } from 'fastify';
import type { Infra } from '../../infra.js';
import { route } from '../../http/route.js';
import { ref } from '../../http/schemas.js';
import { Jwks } from './schemas.js';
import { docs } from './docs.js';

// The root route of the same document (app.ts) shares the prose.
export { JWKS_DESCRIPTION, JWKS_SUMMARY } from './docs.js';

export const JWKS_CACHE_CONTROL = 'public, max-age=300';

/** Sends the JWKS document as it is held in memory. */
export async function sendJwks(deps: Infra, reply: FastifyReply): Promise<FastifyReply> {
  const text = await deps.tokens.jwks();
  return reply.header('cache-control', JWKS_CACHE_CONTROL).type('application/json; charset=utf-8').send(text);
}

export function tokenRoutes(deps: Infra) {
  return [
    route({
      method: 'GET',
      url: '/.well-known/jwks.json',
      auth: 'none',
      doc: docs.getJwks,
      schema: { response: { 200: ref(Jwks, 'The published public keys') } },
      handler: (ctx) => sendJwks(deps, ctx.reply),
    }),
  ];
}
