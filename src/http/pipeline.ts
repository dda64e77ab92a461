// The request pipeline of every /api/v1 route, in the order it runs. A route declares what it needs
// in its own config: `auth`, who may call it ('user', the default: a signed-in person or, where the
// handler allows, an API key; 'optional'; 'none' for public routes), and `bucket`, which rate limit
// counts it ('auth': per client IP at the sign-in limit; otherwise per key, per user, or per IP; an
// IPv6 client counts by its /64).
//
//   1. credential     onRequest    the Authorization / X-API-Key header read: a verified access token's
//                                  claims or the key's (cached) state; nothing is refused yet
//   2. rate limit     preParsing   the route's bucket; a refused request still carries X-RateLimit-*
//   3. guard          preParsing   the route's `auth`: 401 without a live session or a usable key;
//                                  sets request.actor
//   4. quota          preParsing   an API-key request counts against its organization's monthly
//                                  quota (429 QUOTA_EXCEEDED past it; a person's publish of an event
//                                  counts in its route, once its access is known)
//   5. handler                     body validated by the route's schema; organization routes ask
//                                  for access (access.ts, platform/tenancy.ts)
//   6. request audit  onSend       every request made with a known API key, refused ones included,
//                                  leaves an audit entry, committed before the answer leaves
//   7. clean-up       onSend       an account found deactivated behind a live session loses its
//                                  sessions, so the next request fails at the guard everywhere
//
// Rate limits, quotas and the audit of key requests are described in docs/api.md#rate-limits,
// docs/api.md#monthly-api-request-quota and docs/api.md#audit-log.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { Infra } from '../infra.js';
import { clientBucketOf } from '../lib/client-ip.js';
import { AppError, authenticationError } from '../lib/errors.js';
import type { Actor } from '../platform/identity/actor.js';
import type { KeyCheck } from '../platform/identity/key-store.js';
import type { AccessClaims } from '../platform/identity/tokens.js';
import { requestContext } from './access.js';
import { internalError, prepareError, toAppError } from './error-handler.js';

export type Credential =
  | { kind: 'none' }
  | { kind: 'invalid' }
  | { kind: 'user'; claims: AccessClaims }
  | { kind: 'api_key'; check: KeyCheck };

export type AuthMode = 'user' | 'optional' | 'none';
export type Bucket = 'auth' | 'caller';

declare module 'fastify' {
  interface FastifyRequest {
    credential: Credential;
    actor: Actor;
    /** Set when a check found the signed-in account deactivated behind a live session. */
    deactivatedUser: string | null;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
    bucket?: Bucket;
    /** Set by the pipeline from the route's schema: the first 2xx it answers. */
    successStatus?: number;
  }
}

const ANONYMOUS: Actor = { kind: 'anonymous' };
const WINDOW_MS = 60_000;

// 1. The credential, read once; a JWT is verified here, a key looked up (its limit is its own).
async function readCredential(deps: Pick<Infra, 'tokens' | 'apiKeys'>, request: FastifyRequest): Promise<Credential> {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '')
    return { kind: 'api_key', check: await deps.apiKeys.check(apiKey.trim()) };
  const header = request.headers.authorization;
  if (header === undefined || header === '') return { kind: 'none' };
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!match) return { kind: 'invalid' };
  if (deps.apiKeys.looksLikeKey(match[1]!)) return { kind: 'api_key', check: await deps.apiKeys.check(match[1]!) };
  try {
    return { kind: 'user', claims: await deps.tokens.verifyAccess(match[1]!) };
  } catch {
    return { kind: 'invalid' };
  }
}

// 2. The counter a request takes from: the route's bucket, else who is calling.
function bucketOf(deps: Pick<Infra, 'config'>, request: FastifyRequest): { key: string; max: number } {
  const limits = deps.config.rateLimit;
  const cred = request.credential;
  // Per IP: an IPv6 client by its /64, an IPv4-mapped one as IPv4 (lib/client-ip.ts).
  if (request.routeOptions.config.bucket === 'auth')
    return { key: `auth:${clientBucketOf(request.ip)}`, max: limits.authPerMin };
  if (cred?.kind === 'api_key' && cred.check.ok)
    return { key: `key:${cred.check.key.id}`, max: cred.check.key.rateLimit ?? limits.keyDefaultPerMin };
  if (cred?.kind === 'user') return { key: `user:${cred.claims.userId}`, max: limits.userPerMin };
  return { key: `ip:${clientBucketOf(request.ip)}`, max: limits.anonPerMin };
}

// 3. The guard of a route that needs a caller.
function guardFor(deps: Pick<Infra, 'sessions' | 'userCache'>, mode: AuthMode) {
  return async (request: FastifyRequest) => {
    const cred = request.credential;
    if (cred.kind === 'none') {
      if (mode === 'optional') return;
      throw authenticationError('Authentication required', 'Send an access token as Authorization: Bearer <token>');
    }
    if (cred.kind === 'invalid') throw authenticationError('Invalid or expired token');
    if (cred.kind === 'api_key') {
      if (!cred.check.ok) throw authenticationError(cred.check.message);
      const { id, organizationId, scopes, createdBy } = cred.check.key;
      request.actor = { kind: 'api_key', keyId: id, organizationId, scopes, createdBy };
      return;
    }
    const { userId, email, sessionId } = cred.claims;
    if (!(await deps.sessions.isActive(sessionId, userId))) throw authenticationError('Session is no longer active');
    // The cached row (a version check, no database round trip while cached): deactivation moves the
    // cache on, so a deactivated account is refused here on every instance.
    const user = await deps.userCache.get(userId);
    if (!user?.isActive) {
      request.deactivatedUser = userId;
      throw authenticationError('This account is no longer active');
    }
    deps.sessions.touch(sessionId, userId);
    request.actor = { kind: 'user', userId, email, sessionId, user };
  };
}

// 4. The monthly quota of the key's organization.
function quotaOf(deps: Pick<Infra, 'quota'>) {
  return async (request: FastifyRequest) => {
    if (request.actor.kind === 'api_key') await deps.quota.take(request.actor.organizationId);
  };
}

// 6. The audit entry of an API-key request.
async function auditKeyRequest(
  deps: Pick<Infra, 'clock' | 'audit'>,
  request: FastifyRequest,
  statusCode: number,
): Promise<void> {
  const cred = request.credential;
  if (cred?.kind !== 'api_key' || !cred.check.key) return;
  const ctx = requestContext(request);
  await deps.audit.write({
    organizationId: cred.check.key.organizationId,
    keyId: cred.check.key.id,
    action: `${ctx.method} ${ctx.route}`,
    method: ctx.method,
    path: ctx.path,
    statusCode,
    ipAddress: ctx.ipAddress,
    userAgent: ctx.userAgent,
    createdAt: deps.clock.now(),
  });
}

// 7. An account deactivated behind a live session (an operator's direct update, or a sign-in racing
// the deactivation): its sessions are revoked and every instance's cached copy dropped. Best effort:
// the request is refused either way.
async function endDeactivatedSessions(
  deps: Pick<Infra, 'db' | 'sessions' | 'userCache'>,
  request: FastifyRequest,
  userId: string,
) {
  try {
    await deps.sessions.revokeAllOfUser(deps.db, userId, 'deactivated');
    await deps.userCache.changed(userId);
  } catch (err) {
    request.log.warn(
      { err: { message: (err as Error).message } },
      'revoking the sessions of a deactivated account failed',
    );
  }
}

const asList = <T>(hooks: T | T[] | undefined): T[] => (Array.isArray(hooks) ? hooks : hooks ? [hooks] : []);

function firstSuccessStatus(route: RouteOptions): number | undefined {
  const statuses = Object.keys((route.schema?.response as Record<string, unknown> | undefined) ?? {}).map(Number);
  return statuses.filter((s) => s >= 200 && s < 300).sort((a, b) => a - b)[0];
}

export async function registerPipeline(
  app: FastifyInstance,
  deps: Pick<
    Infra,
    | 'config'
    | 'clock'
    | 'db'
    | 'redis'
    | 'redisPrefix'
    | 'sessions'
    | 'userCache'
    | 'tokens'
    | 'apiKeys'
    | 'audit'
    | 'quota'
  >,
) {
  app.decorateRequest('credential', null as never);
  app.decorateRequest('actor', null as never);
  app.decorateRequest('deactivatedUser', null);

  app.addHook('onRequest', async (request) => {
    request.actor = ANONYMOUS;
    request.credential = await readCredential(deps, request);
  });

  // Counters live in memory, or in Redis when REDIS_URL is set so all instances share them. The
  // plugin adds its preParsing hook to every route as it is declared, before the guard's below.
  await app.register(rateLimit, {
    global: true,
    hook: 'preParsing',
    timeWindow: WINDOW_MS,
    keyGenerator: (request) => bucketOf(deps, request).key,
    max: (request) => bucketOf(deps, request).max,
    ...(deps.redis ? { redis: deps.redis, nameSpace: `${deps.redisPrefix}rl:` } : {}),
    skipOnError: false,
    errorResponseBuilder: (_request, ctx) =>
      new AppError(
        'RATE_LIMIT_EXCEEDED',
        'Too many requests',
        `Limit of ${ctx.max} requests per minute reached; retry in ${ctx.after}`,
      ),
  });

  const quota = quotaOf(deps);
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, successStatus: firstSuccessStatus(route) };
    const mode: AuthMode = route.config.auth ?? 'user';
    if (mode === 'none') return;
    route.preParsing = [...asList(route.preParsing), guardFor(deps, mode), quota];
  });

  app.addHook('onSend', async (request, reply, payload) => {
    // The plugin sends the seconds until the window resets; clients get its Unix time.
    const reset = reply.getHeader('x-ratelimit-reset');
    if (reset !== undefined) reply.header('x-ratelimit-reset', Math.ceil(Date.now() / 1000) + Number(reset));
    if (request.deactivatedUser !== null) await endDeactivatedSessions(deps, request, request.deactivatedUser);
    try {
      await auditKeyRequest(deps, request, reply.statusCode);
    } catch (err) {
      // Not committed, so not acknowledged: the response becomes the error, in the envelope. (Thrown
      // from here, a failure while sending an error response would reach Fastify's own handler,
      // whose body carries the SQL.)
      request.log.error({ err }, 'audit entry of an API-key request could not be committed');
      const body = prepareError(reply, toAppError(err as Error) ?? internalError(request));
      reply.header('content-type', 'application/json; charset=utf-8');
      return JSON.stringify(body);
    }
    return payload;
  });
}
