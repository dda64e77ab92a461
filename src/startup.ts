// Waiting at start for PostgreSQL and Redis (boot.ts): an orchestrator often starts the service
// before its database answers. Each is tried until it answers or STARTUP_TIMEOUT_S has passed, with
// one log line per failed try (what, where without credentials, which attempt); then the start ends
// with one line (StartupError). A refusal that waiting cannot mend (a wrong password, an unknown
// database) ends it at once.
import pg from 'pg';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from './config.js';

export class StartupError extends Error {}

const RETRY_DELAY_MS = 1000;
const PROBE_TIMEOUT_MS = 5000;

/** host:port/path of a URL, never its user or password. */
export function whereOf(url: string): string {
  const u = new URL(url);
  const port = u.port || (u.protocol.startsWith('redis') ? '6379' : '5432');
  return `${u.hostname}:${port}${u.pathname.length > 1 ? u.pathname : ''}`;
}

interface Service {
  name: 'PostgreSQL' | 'Redis';
  variable: 'DATABASE_URL' | 'REDIS_URL';
  url: string;
  /** Resolves when the service answers; rejects with the reason otherwise. */
  probe(timeoutMs: number): Promise<void>;
  /** Whether waiting may help (the server is not there yet), rather than a refusal. */
  retryable(err: unknown): boolean;
}

const sqlState = (err: unknown) => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null;
};

export const postgres = (url: string): Service => ({
  name: 'PostgreSQL',
  variable: 'DATABASE_URL',
  url,
  async probe(timeoutMs) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
    } finally {
      await client.end().catch(() => {});
    }
  },
  // Starting up, shutting down, too many connections: wait. Any other answer of the server is final.
  retryable: (err) => {
    const state = sqlState(err);
    return state === null || state === '57P03' || state === '53300';
  },
});

export const redis = (url: string): Service => ({
  name: 'Redis',
  variable: 'REDIS_URL',
  url,
  async probe(timeoutMs) {
    const client = new Redis(url, {
      lazyConnect: true,
      connectTimeout: timeoutMs,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
    } finally {
      client.disconnect();
    }
  },
  // A reply (NOAUTH, WRONGPASS…) is final; a connection that fails or closes is not.
  retryable: (err) => (err as Error).name !== 'ReplyError',
});

const reason = (err: unknown) => ((err as Error).message || String(err)).split('\n')[0]!;

/** Tries `service` until it answers or `timeoutS` has passed; throws StartupError then. */
export async function waitFor(
  service: Service,
  timeoutS: number,
  logger: Pick<Logger, 'warn' | 'info'>,
  retryDelayMs = RETRY_DELAY_MS,
): Promise<void> {
  const where = whereOf(service.url);
  const deadline = Date.now() + timeoutS * 1000;
  for (let attempt = 1; ; attempt++) {
    const left = deadline - Date.now();
    try {
      await service.probe(Math.max(1000, Math.min(PROBE_TIMEOUT_MS, left)));
      if (attempt > 1)
        logger.info({ service: service.name, at: where, attempt }, `${service.name} at ${where} answers`);
      return;
    } catch (err) {
      if (!service.retryable(err)) {
        throw new StartupError(
          `${service.name} at ${where} refused the connection: ${reason(err)}. Check ${service.variable}.`,
        );
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new StartupError(
          `Cannot reach ${service.name} at ${where} after ${timeoutS} s (${attempt} ${attempt === 1 ? 'attempt' : 'attempts'}): ${reason(err)}. ` +
            `Check ${service.variable} and that the server runs, or wait longer with STARTUP_TIMEOUT_S.`,
        );
      }
      logger.warn(
        { service: service.name, at: where, attempt, err: { message: reason(err) } },
        `${service.name} at ${where} does not answer (attempt ${attempt}); trying again for up to ${Math.ceil(remaining / 1000)} s`,
      );
      await new Promise((r) => setTimeout(r, Math.min(retryDelayMs, remaining)));
    }
  }
}

/** PostgreSQL (DATABASE_URL) then Redis (REDIS_URL), each given STARTUP_TIMEOUT_S. */
export async function waitForServices(
  config: Pick<Config, 'databaseUrl' | 'redisUrl' | 'startupTimeoutS'>,
  logger: Pick<Logger, 'warn' | 'info'>,
): Promise<void> {
  if (config.databaseUrl) await waitFor(postgres(config.databaseUrl), config.startupTimeoutS, logger);
  if (config.redisUrl) await waitFor(redis(config.redisUrl), config.startupTimeoutS, logger);
}
