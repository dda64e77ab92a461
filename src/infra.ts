// Everything a service may touch, built once from the config. Tests build the same thing with a
// fake clock, their own database and a local SMTP sink.
import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import { type DbHandle, openPglite, openPostgres } from './db/client.js';
import { runMigrations } from './db/migrate.js';
import { type AuthorizeOrg, createAuthorizer } from './platform/tenancy.js';
import { createCatalogue, type PermissionCatalogue } from './platform/permissions.js';
import { type Clock, systemClock } from './lib/clock.js';
import { createKeyStore, type KeyStore } from './platform/identity/key-store.js';
import { type AuditWriter, createAuditWriter } from './platform/audit/writer.js';
import { createQuotaGuard, type QuotaGuard } from './platform/quota.js';
import { createPasswordHasher, type HashCost, type PasswordHasher } from './platform/identity/passwords.js';
import { createSessionStore, type SessionStore } from './platform/identity/sessions.js';
import { createTokenService, type TokenService } from './platform/identity/tokens.js';
import { createSigningKeyRing, ensureSigningKey, type SigningKeyRing } from './platform/identity/signing-keys.js';
import { createUserCache, type UserCache } from './platform/identity/user-cache.js';
import { type CheckWaits, createCheckWaits } from './platform/identity/check-waits.js';
import { createSharedState, type SharedState } from './platform/cache/shared-state.js';
import type { PaymentProvider } from './providers/payments/provider.js';
import { createStripeProvider } from './providers/payments/stripe.js';
import { createTestProvider } from './providers/payments/test-provider.js';
import { createMailer, type Mailer, type MailTransport, withLater } from './providers/mail/mailer.js';
import { createServiceMetrics, type ServiceMetrics } from './platform/metrics.js';
import { createMailCap, type MailCap } from './platform/mail-cap.js';
import { prettyDestination } from './lib/pretty-log.js';

export interface Infra {
  config: Config;
  logger: Logger;
  clock: Clock;
  dbHandle: DbHandle;
  db: DbHandle['db'];
  redis: Redis | null;
  /** Prefix of every Redis key and channel (tests give each file its own). */
  redisPrefix: string;
  mailer: Mailer;
  /** At most 5 mails of one kind to one address an hour (platform/mail-cap.ts): send through sendCapped. */
  mailCap: MailCap;
  shared: SharedState;
  sessions: SessionStore;
  /** GET /users/me reads through it; writes to a user's row call `changed` after the commit. */
  userCache: UserCache;
  tokens: TokenService;
  passwords: PasswordHasher;
  /** Checks of a secret waiting for a place in their account's lockout budget (modules/auth/sign-in.ts). */
  checkWaits: CheckWaits;
  /** The permission catalogue: the built-in permissions and APP_PERMISSIONS. */
  permissions: PermissionCatalogue;
  authorizeOrg: AuthorizeOrg;
  apiKeys: KeyStore;
  audit: AuditWriter;
  payments: PaymentProvider;
  quota: QuotaGuard;
  /** Counters kept outside HTTP requests (the worker's delivery outcomes), exported by GET /metrics. */
  metrics: ServiceMetrics;
  close(): Promise<void>;
}

// Never log a secret: these paths are censored wherever they appear in a log object.
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.currentPassword',
  '*.newPassword',
  '*.token',
  '*.refreshToken',
  '*.accessToken',
  '*.secret',
  '*.plainKey',
];

/** pino at LOG_LEVEL, in JSON lines or, under LOG_FORMAT=pretty, readable lines (lib/pretty-log.ts). */
export function createLogger(
  config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logFormat'>>,
  destination?: pino.DestinationStream,
): Logger {
  const options = { level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  if (config.logFormat === 'pretty')
    return pino(options, destination ? prettyDestination(destination, false) : prettyDestination());
  return destination ? pino(options, destination) : pino(options);
}

export interface InfraOverrides {
  logger?: Logger;
  clock?: Clock;
  dbHandle?: DbHandle;
  mailer?: MailTransport;
  redisPrefix?: string;
  migrate?: boolean;
  payments?: PaymentProvider;
  /** The cost of new password hashes (the test harness's cheap one); ARGON2_OPTIONS otherwise. */
  hashCost?: HashCost;
}

export async function createInfra(config: Config, overrides: InfraOverrides = {}): Promise<Infra> {
  // First: an APP_PERMISSIONS entry that names a built-in permission stops the start before anything opens.
  const permissions = createCatalogue(config.appPermissions);
  const logger = overrides.logger ?? createLogger(config);
  const clock = overrides.clock ?? systemClock;
  // Start-up progress: a first start spends seconds here (PGlite's initdb, then every migration).
  if (!overrides.dbHandle)
    logger.info(config.databaseUrl ? 'connecting to PostgreSQL' : `opening the embedded database in ${config.dataDir}`);
  const dbHandle =
    overrides.dbHandle ??
    (config.databaseUrl ? openPostgres(config.databaseUrl, logger) : await openPglite({ dataDir: config.dataDir }));
  let redis: Redis | null = null;
  try {
    if (overrides.migrate !== false) {
      const applied = await runMigrations(dbHandle, (pending) =>
        logger.info(
          `applying ${pending.length} migration(s): ${pending[0]}${pending.length > 1 ? ` … ${pending.at(-1)}` : ''}`,
        ),
      );
      if (applied.length > 0) logger.info(`applied ${applied.length} migration(s)`);
    }
    if (config.redisUrl) {
      // No offline queue: while Redis is down, commands fail at once (callers fall back or answer 503)
      // instead of waiting for a reconnect.
      redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
      redis.on('error', (err) => logger.warn({ err: { message: err.message } }, 'redis error'));
      await redis.connect();
    }
  } catch (err) {
    await dbHandle.close();
    redis?.disconnect();
    throw err;
  }
  // Under an asymmetric JWT_ALGORITHM, the first start creates the signing key (signing-keys.ts).
  let ring: SigningKeyRing | null = null;
  if (config.jwtAlgorithm !== 'HS256') {
    try {
      await ensureSigningKey(dbHandle.db, config, clock, config.jwtAlgorithm);
      ring = createSigningKeyRing(dbHandle.db, config, clock, logger, config.jwtAlgorithm);
      await ring.reload();
    } catch (err) {
      await dbHandle.close();
      redis?.disconnect();
      throw err;
    }
  }
  const redisPrefix = overrides.redisPrefix ?? 'tenantry:';
  const shared = createSharedState(redis, redisPrefix, logger);
  const mailer = withLater(overrides.mailer ?? createMailer(config, logger), logger);
  const checkWaits = createCheckWaits(redis, redisPrefix, logger);
  const sessions = createSessionStore(dbHandle.db, config, clock, shared);
  const audit = createAuditWriter(dbHandle.db, logger);
  // BILLING_PROVIDER (config.ts): production gets the test checkout only when BILLING_PROVIDER=test asks for it.
  const payments =
    overrides.payments ??
    (config.billingProvider === 'stripe'
      ? createStripeProvider(config)
      : createTestProvider(config.publicApiUrl, clock));

  return {
    config,
    logger,
    clock,
    dbHandle,
    db: dbHandle.db,
    redis,
    redisPrefix,
    mailer,
    mailCap: createMailCap(redis, redisPrefix, clock, logger),
    shared,
    sessions,
    userCache: createUserCache(dbHandle.db, shared),
    tokens: createTokenService(config, clock, ring),
    passwords: createPasswordHasher(config.auth.hashConcurrency, config.auth.hashQueueLimit, overrides.hashCost),
    checkWaits,
    permissions,
    authorizeOrg: createAuthorizer(dbHandle.db, permissions),
    apiKeys: createKeyStore(dbHandle.db, config, clock, shared),
    audit,
    quota: createQuotaGuard(dbHandle.db, clock),
    payments,
    metrics: createServiceMetrics(),
    async close() {
      await audit.close();
      await sessions
        .close()
        .catch((err: Error) => logger.warn({ err: { message: err.message } }, 'flushing session touches failed'));
      await mailer.close();
      await checkWaits.close();
      if (redis) await redis.quit().catch(() => redis!.disconnect());
      await dbHandle.close();
    },
  };
}
