// Who is calling. `onRequest` reads the credential without touching the database (the rate limiter
// needs the user id); the guard, which runs after the rate limiter, checks the session and sets
// `request.actor`. Routes say what they need in `config.auth`; the default is a signed-in user.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import type { AccessClaims } from '../modules/auth/tokens.js';
import { authenticationError } from './errors.js';

export type Credential = { kind: 'none' } | { kind: 'invalid' } | { kind: 'user'; claims: AccessClaims };

export type Actor = { kind: 'anonymous' } | { kind: 'user'; userId: string; email: string; sessionId: string };

export type UserActor = Extract<Actor, { kind: 'user' }>;

/** `user`: a signed-in user is required (401 otherwise); `optional`: anonymous allowed; `none`: public. */
export type AuthMode = 'user' | 'optional' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    credential: Credential;
    actor: Actor;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
}

const ANONYMOUS: Actor = { kind: 'anonymous' };

function readCredential(deps: Deps, request: FastifyRequest): Credential {
  const header = request.headers.authorization;
  if (header === undefined || header === '') return { kind: 'none' };
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!match) return { kind: 'invalid' };
  try {
    return { kind: 'user', claims: deps.tokens.verifyAccess(match[1]!) };
  } catch {
    return { kind: 'invalid' };
  }
}

export function registerActor(app: FastifyInstance, deps: Deps) {
  app.decorateRequest('credential', null as never);
  app.decorateRequest('actor', null as never);

  app.addHook('onRequest', async (request) => {
    request.credential = readCredential(deps, request);
    request.actor = ANONYMOUS;
  });

  // Registered after the rate limiter, so its preParsing hook runs first and a refused request
  // still carries the X-RateLimit-* headers.
  app.addHook('onRoute', (route) => {
    const mode: AuthMode = route.config?.auth ?? 'user';
    if (mode === 'none') return;
    const guard = async (request: FastifyRequest) => {
      const cred = request.credential;
      if (cred.kind === 'none') {
        if (mode === 'optional') return;
        throw authenticationError('Authentication required', 'Send an access token as Authorization: Bearer <token>');
      }
      if (cred.kind === 'invalid') throw authenticationError('Invalid or expired token');
      const { userId, email, sessionId } = cred.claims;
      if (!(await deps.sessions.isActive(sessionId, userId))) throw authenticationError('Session is no longer active');
      deps.sessions.touch(sessionId);
      request.actor = { kind: 'user', userId, email, sessionId };
    };
    route.preParsing = [...(Array.isArray(route.preParsing) ? route.preParsing : route.preParsing ? [route.preParsing] : []), guard];
  });
}

export function requireUser(request: FastifyRequest): UserActor {
  if (request.actor.kind !== 'user') throw authenticationError();
  return request.actor;
}
