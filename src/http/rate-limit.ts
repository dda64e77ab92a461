// Rate limits of DECISIONS §7 on every /api/v1 response: /auth/* per client IP, other Bearer requests
// per user, API-key requests per key (its own limit, else the default), anonymous ones per IP. Counters live in
// memory, or in Redis when REDIS_URL is set so all instances share them.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from './errors.js';

const WINDOW_MS = 60_000;

function bucketOf(request: FastifyRequest): { key: string; max: number; kind: string } | null {
  return (request as unknown as { rateBucket?: { key: string; max: number; kind: string } }).rateBucket ?? null;
}

export async function registerRateLimit(app: FastifyInstance, deps: Deps) {
  const limits = deps.config.rateLimit;

  function classify(request: FastifyRequest) {
    const url = request.routeOptions.url ?? '';
    let bucket: { key: string; max: number; kind: string };
    const cred = request.credential;
    if (url.startsWith('/api/v1/auth/')) bucket = { key: `auth:${request.ip}`, max: limits.authPerMin, kind: 'auth' };
    else if (cred?.kind === 'apiKey' && cred.check.ok) {
      bucket = { key: `key:${cred.check.key.id}`, max: cred.check.key.rateLimit ?? limits.keyDefaultPerMin, kind: 'key' };
    }
    else if (cred?.kind === 'user') bucket = { key: `user:${cred.claims.userId}`, max: limits.userPerMin, kind: 'user' };
    else bucket = { key: `ip:${request.ip}`, max: limits.anonPerMin, kind: 'ip' };
    (request as unknown as { rateBucket: typeof bucket }).rateBucket = bucket;
    return bucket;
  }

  await app.register(rateLimit, {
    global: true,
    hook: 'preParsing',
    timeWindow: WINDOW_MS,
    keyGenerator: (request) => classify(request).key,
    max: (request) => bucketOf(request)?.max ?? limits.anonPerMin,
    ...(deps.redis ? { redis: deps.redis, nameSpace: `${deps.redisPrefix}rl:` } : {}),
    skipOnError: false,
    errorResponseBuilder: (_request, ctx) =>
      new AppError(429, 'RATE_LIMIT_EXCEEDED', 'Too many requests', `Limit of ${ctx.max} requests per minute reached; retry in ${ctx.after}`),
  });

  // The plugin sends seconds until the reset; DECISIONS §7 wants the Unix time of the reset.
  app.addHook('onSend', async (_request, reply, payload) => {
    const reset = reply.getHeader('x-ratelimit-reset');
    if (reset !== undefined) reply.header('x-ratelimit-reset', Math.ceil(Date.now() / 1000) + Number(reset));
    return payload;
  });
}
