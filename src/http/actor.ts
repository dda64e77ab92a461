// Who is calling. `onRequest` reads the credential before the rate limiter, which needs the user id
// or the API key (a JWT is only verified there; a key is looked up, cached, since its limit is its
// own); the guard, which runs after the rate limiter, checks the session or the key's state and sets
// `request.actor`. Routes say what they need in `config.auth`; the default is a signed-in user.
// A signed-in user's account must also be active: the guard reads it from the user cache (no database
// round trip while cached), and the organization check re-reads the flag in its own lookup. Either
// finding an account deactivated behind a live session revokes its sessions.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import type { AccessClaims } from '../modules/auth/tokens.js';
import type { KeyCheck } from '../modules/api-keys/key-store.js';
import type { UserRow } from '../db/tables/users.js';
import { requestContext } from '../platform/tenancy.js';
import { toAppError } from './error-handler.js';
import { AppError, authenticationError, authorizationError } from './errors.js';

export type Credential = { kind: 'none' } | { kind: 'invalid' } | { kind: 'user'; claims: AccessClaims } | { kind: 'apiKey'; check: KeyCheck };

export type Actor =
  | { kind: 'anonymous' }
  // `user`: the account's row as the guard found it (active), for GET /users/me to reuse.
  | { kind: 'user'; userId: string; email: string; sessionId: string; user?: UserRow }
  | { kind: 'apiKey'; keyId: string; organizationId: string; scopes: string[]; createdBy: string };

export type UserActor = Extract<Actor, { kind: 'user' }>;

/** `user`: a signed-in user is required (401 otherwise); `optional`: anonymous allowed; `none`: public. */
export type AuthMode = 'user' | 'optional' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    credential: Credential;
    actor: Actor;
    /** Set when a check found the signed-in account deactivated behind a live session. */
    deactivatedUser: string | null;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
}

const ANONYMOUS: Actor = { kind: 'anonymous' };

async function readCredential(deps: Deps, request: FastifyRequest): Promise<Credential> {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return { kind: 'apiKey', check: await deps.apiKeys.check(apiKey.trim()) };
  const header = request.headers.authorization;
  if (header === undefined || header === '') return { kind: 'none' };
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!match) return { kind: 'invalid' };
  if (deps.apiKeys.looksLikeKey(match[1]!)) return { kind: 'apiKey', check: await deps.apiKeys.check(match[1]!) };
  try {
    return { kind: 'user', claims: deps.tokens.verifyAccess(match[1]!) };
  } catch {
    return { kind: 'invalid' };
  }
}

/**
 * An account deactivated behind a live session (an operator's direct update, or a sign-in racing
 * the deactivation): its sessions are revoked and every instance's cached copy dropped, so the
 * tokens fail at the session check from now on. Best effort: the request is refused either way.
 */
async function endDeactivatedSessions(deps: Deps, request: FastifyRequest, userId: string) {
  try {
    await deps.sessions.revokeAllOfUser(deps.db, userId, 'deactivated');
    await deps.users.changed(userId);
  } catch (err) {
    request.log.warn({ err: { message: (err as Error).message } }, 'revoking the sessions of a deactivated account failed');
  }
}

export function registerActor(app: FastifyInstance, deps: Deps) {
  app.decorateRequest('credential', null as never);
  app.decorateRequest('actor', null as never);
  app.decorateRequest('deactivatedUser', null);

  app.addHook('onRequest', async (request) => {
    request.actor = ANONYMOUS;
    request.credential = await readCredential(deps, request);
  });

  // The organization check (authorize.ts) found the account deactivated: finish the job before the
  // 401 goes out, so the next request fails at the session check on every instance.
  app.addHook('onSend', async (request, _reply, payload) => {
    if (request.deactivatedUser !== null) await endDeactivatedSessions(deps, request, request.deactivatedUser);
    return payload;
  });

  // DECISIONS §4: every request made with a known API key, refused ones included, leaves an audit
  // entry, committed (group commit) before the response goes out.
  app.addHook('onSend', async (request, reply, payload) => {
    const cred = request.credential;
    if (cred?.kind !== 'apiKey' || !cred.check.key) return payload;
    const ctx = requestContext(request);
    try {
      await deps.audit.write({
        organizationId: cred.check.key.organizationId,
        keyId: cred.check.key.id,
        action: `${ctx.method} ${ctx.route}`,
        method: ctx.method,
        path: ctx.path,
        statusCode: reply.statusCode,
        ipAddress: ctx.ipAddress,
        userAgent: ctx.userAgent,
        createdAt: deps.clock.now(),
      });
    } catch (err) {
      // Not committed, so not acknowledged: the response becomes the error, in the envelope. (Thrown
      // from here, a failure while sending an error response would reach Fastify's own handler,
      // whose body carries the SQL.)
      request.log.error({ err }, 'audit entry of an API-key request could not be committed');
      const e = toAppError(err as Error) ?? new AppError(500, 'INTERNAL_ERROR', 'An unexpected error occurred', `Reference: ${request.id}`);
      for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
      reply.code(e.statusCode).header('content-type', 'application/json; charset=utf-8');
      return JSON.stringify({ success: false, error: { code: e.code, message: e.message, details: e.details } });
    }
    return payload;
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
      if (cred.kind === 'apiKey') {
        if (!cred.check.ok) throw authenticationError(cred.check.message);
        const { id, organizationId, scopes, createdBy } = cred.check.key;
        await deps.quota.take(organizationId);
        request.actor = { kind: 'apiKey', keyId: id, organizationId, scopes, createdBy };
        return;
      }
      const { userId, email, sessionId } = cred.claims;
      if (!(await deps.sessions.isActive(sessionId, userId))) throw authenticationError('Session is no longer active');
      // The cached row (a version check, no database round trip while cached): deactivation moves
      // the cache on, so a deactivated account is refused here on every instance.
      const user = await deps.users.get(userId);
      if (!user?.isActive) {
        await endDeactivatedSessions(deps, request, userId);
        throw authenticationError('This account is no longer active');
      }
      deps.sessions.touch(sessionId, userId);
      request.actor = { kind: 'user', userId, email, sessionId, user };
    };
    route.preParsing = [...(Array.isArray(route.preParsing) ? route.preParsing : route.preParsing ? [route.preParsing] : []), guard];
  });
}

export function requireUser(request: FastifyRequest): UserActor {
  if (request.actor.kind === 'apiKey') throw authorizationError('API keys cannot use this route', 'Sign in as a user and send an access token');
  if (request.actor.kind !== 'user') throw authenticationError();
  return request.actor;
}
