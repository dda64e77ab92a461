// The only reader of process.env. Every variable (docs/configuration.md) is parsed and validated
// here once, at boot. A bad value stops the start with a one-line message that names the variable,
// and so does a production start with a setting that is only safe in development (see
// `checkProduction`).
import { parseBranding } from './config/branding.js';
import path from 'node:path';
import { loadDevSecrets } from './config/dev-secrets.js';
import {
  bool,
  checkSecret,
  defaultHashConcurrency,
  type Env,
  int,
  optional,
  parseEncryptionKeys,
  parseTrustProxy,
  str,
  url,
} from './config/env.js';
import {
  type Config,
  ConfigError,
  JWT_ALGORITHMS,
  type JwtAlgorithm,
  type OAuthProviderConfig,
  type PasswordPolicy,
} from './config/types.js';

export { parseEncryptionKey, parseEncryptionKeys } from './config/env.js';
export {
  type AsymmetricAlgorithm,
  type Config,
  ConfigError,
  type JwtAlgorithm,
  type OAuthProviderConfig,
  type PasswordPolicy,
} from './config/types.js';

function parseJwtAlgorithm(env: Env): JwtAlgorithm {
  const raw = str(env, 'JWT_ALGORITHM', 'HS256');
  if (!(JWT_ALGORITHMS as readonly string[]).includes(raw))
    throw new ConfigError('JWT_ALGORITHM', `must be one of ${JWT_ALGORITHMS.join(', ')}, got "${raw.slice(0, 20)}"`);
  return raw as JwtAlgorithm;
}

const APP_PERMISSION = /^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*$/;
const MAX_APP_PERMISSIONS = 100;

/** APP_PERMISSIONS: the product's own permissions, `resource:action` each; a bad one is named. */
function parseAppPermissions(env: Env): string[] {
  const raw = optional(env, 'APP_PERMISSIONS');
  if (raw === null) return [];
  const list = raw.split(',').map((p) => p.trim());
  const seen = new Set<string>();
  for (const p of list) {
    if (p === '')
      throw new ConfigError('APP_PERMISSIONS', 'has an empty entry: separate the permissions with single commas');
    if (!APP_PERMISSION.test(p) || p.length > 100) {
      throw new ConfigError(
        'APP_PERMISSIONS',
        `has "${p.slice(0, 100)}", which is not resource:action in lowercase letters, digits and dashes`,
      );
    }
    if (seen.has(p)) throw new ConfigError('APP_PERMISSIONS', `lists "${p}" twice`);
    seen.add(p);
  }
  if (list.length > MAX_APP_PERMISSIONS)
    throw new ConfigError('APP_PERMISSIONS', `lists ${list.length} permissions; at most ${MAX_APP_PERMISSIONS}`);
  return list;
}

function parseBillingProvider(env: Env, stripeSecretKey: string | null): Config['billingProvider'] {
  const raw = optional(env, 'BILLING_PROVIDER');
  if (raw !== null && raw !== 'stripe' && raw !== 'test')
    throw new ConfigError('BILLING_PROVIDER', 'must be "stripe" or "test"');
  if (raw === 'stripe' && !stripeSecretKey)
    throw new ConfigError('STRIPE_SECRET_KEY', 'is required when BILLING_PROVIDER=stripe');
  return raw ?? (stripeSecretKey ? 'stripe' : 'test');
}

/**
 * Settings that are fine on a developer's machine and dangerous in production refuse the start
 * there, one at a time, each naming its variable: mails printed to the log (with their sign-in
 * links), links and redirect URIs pointing at localhost, webhooks allowed to reach internal
 * addresses, and the built-in test checkout, whose unauthenticated `complete` route upgrades any
 * organization without payment (only an explicit BILLING_PROVIDER=test allows it).
 */
function checkProduction(env: Env, config: Config): void {
  const required = (name: string, why: string) => {
    if (!optional(env, name)) throw new ConfigError(name, `is required when NODE_ENV=production: ${why}`);
  };
  required('SMTP_URL', 'without it mails, and the sign-in links in them, would only be written to the log');
  required('APP_ORIGIN', 'links in mails and the allowed checkout URLs would point at localhost');
  required('PUBLIC_API_URL', 'OAuth redirect URIs would point at localhost');
  if (config.webhook.allowPrivateUrls) {
    throw new ConfigError(
      'WEBHOOK_ALLOW_PRIVATE_URLS',
      'must not be true when NODE_ENV=production: it lets webhook deliveries reach loopback and private addresses',
    );
  }
  if (!config.stripe.secretKey && optional(env, 'BILLING_PROVIDER') !== 'test') {
    throw new ConfigError(
      'STRIPE_SECRET_KEY',
      'is required when NODE_ENV=production, unless BILLING_PROVIDER=test is set explicitly: the built-in test checkout upgrades any organization without payment',
    );
  }
}

function oauthProvider(
  env: Env,
  name: 'GOOGLE' | 'GITHUB',
  defaults: { authorizationUrl: string; tokenUrl: string; userInfoUrl: string; userInfoVar: string },
): OAuthProviderConfig | null {
  if (!bool(env, `AUTH_${name}_ENABLED`, true)) return null;
  const clientId = optional(env, `${name}_CLIENT_ID`);
  const clientSecret = optional(env, `${name}_CLIENT_SECRET`);
  if (!clientId && !clientSecret) return null;
  if (!clientId) throw new ConfigError(`${name}_CLIENT_ID`, `is required when ${name}_CLIENT_SECRET is set`);
  if (!clientSecret) throw new ConfigError(`${name}_CLIENT_SECRET`, `is required when ${name}_CLIENT_ID is set`);
  return {
    clientId,
    clientSecret,
    authorizationUrl: url(env, `${name}_AUTHORIZATION_URL`, defaults.authorizationUrl, ['http:', 'https:'])!,
    tokenUrl: url(env, `${name}_TOKEN_URL`, defaults.tokenUrl, ['http:', 'https:'])!,
    userInfoUrl: url(env, defaults.userInfoVar, defaults.userInfoUrl, ['http:', 'https:'])!.replace(/\/$/, ''),
  };
}

/** A name as the display name of an address: quoted when it holds what would split or end it (RFC 5322). */
const displayName = (name: string) => (/[",;:<>@()[\]\\.]/.test(name) ? `"${name.replace(/(["\\])/g, '\\$1')}"` : name);

/** `defaults` changes what an unset variable means for one entry point (the admin commands log less). */
export function loadConfig(
  env: Env = process.env,
  defaults: { logLevel?: string; stdoutIsTTY?: boolean } = {},
): Config {
  const nodeEnv = str(env, 'NODE_ENV', 'development');
  const envName: Config['env'] = nodeEnv === 'production' ? 'production' : nodeEnv === 'test' ? 'test' : 'development';
  const production = envName === 'production';
  const dataDir = path.resolve(str(env, 'DATA_DIR', './data'));

  const secretVars = ['JWT_SECRET', 'JWT_REFRESH_SECRET', 'ENCRYPTION_KEY'] as const;
  if (production) {
    for (const name of secretVars) {
      if (!optional(env, name)) throw new ConfigError(name, 'is required when NODE_ENV=production');
    }
  }
  const needDev = secretVars.some((name) => !optional(env, name));
  const dev = needDev ? loadDevSecrets(dataDir) : null;

  const jwtSecret = checkSecret('JWT_SECRET', optional(env, 'JWT_SECRET') ?? dev!.jwtSecret);
  const jwtRefreshSecret = checkSecret(
    'JWT_REFRESH_SECRET',
    optional(env, 'JWT_REFRESH_SECRET') ?? dev!.jwtRefreshSecret,
  );
  if (jwtSecret === jwtRefreshSecret) throw new ConfigError('JWT_REFRESH_SECRET', 'must differ from JWT_SECRET');
  const encryptionKeys = parseEncryptionKeys('ENCRYPTION_KEY', optional(env, 'ENCRYPTION_KEY') ?? dev!.encryptionKey);

  const port = int(env, 'PORT', 3000, 0, 65535);
  // Unset, the front end is the web app this service serves itself (src/http/web.ts), so every mailed
  // link lands on one of its pages.
  const appOrigin = url(env, 'APP_ORIGIN', `http://localhost:${port}`, ['http:', 'https:'])!;
  if (new URL(appOrigin).origin !== appOrigin.replace(/\/$/, '')) {
    throw new ConfigError('APP_ORIGIN', 'must be an origin (scheme, host and port) without a path');
  }

  const retryRaw = str(env, 'WEBHOOK_RETRY_DELAYS', '60,300,900');
  const retryDelaysS = retryRaw.split(',').map((s) => s.trim());
  if (retryDelaysS.some((s) => !/^\d+$/.test(s))) {
    throw new ConfigError('WEBHOOK_RETRY_DELAYS', 'must be a comma-separated list of whole seconds');
  }

  const worker = str(env, 'WEBHOOK_WORKER', 'inline');
  if (worker !== 'inline' && worker !== 'off') throw new ConfigError('WEBHOOK_WORKER', 'must be "inline" or "off"');

  const mode = str(env, 'API_KEY_MODE', 'live');
  if (mode !== 'live' && mode !== 'test') throw new ConfigError('API_KEY_MODE', 'must be "live" or "test"');
  const prefix = str(env, 'API_KEY_PREFIX', 'svc');
  if (!/^[a-z][a-z0-9]{1,15}$/.test(prefix)) {
    throw new ConfigError('API_KEY_PREFIX', 'must be 2-16 lowercase letters or digits, starting with a letter');
  }

  const logLevel = str(env, 'LOG_LEVEL', defaults.logLevel ?? 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', 'must be one of fatal, error, warn, info, debug, trace, silent');
  }
  // Readable lines for a developer at a terminal; JSON lines (one object each) everywhere else.
  const logFormat = str(
    env,
    'LOG_FORMAT',
    envName !== 'production' && (defaults.stdoutIsTTY ?? Boolean(process.stdout.isTTY)) ? 'pretty' : 'json',
  );
  if (logFormat !== 'json' && logFormat !== 'pretty') throw new ConfigError('LOG_FORMAT', 'must be "json" or "pretty"');

  const publicApiUrl = url(env, 'PUBLIC_API_URL', `http://localhost:${port}`, ['http:', 'https:'])!.replace(/\/$/, '');

  const stripeSecretKey = optional(env, 'STRIPE_SECRET_KEY');
  const billingProvider = parseBillingProvider(env, stripeSecretKey);
  const databaseUrl = url(env, 'DATABASE_URL', null, ['postgres:', 'postgresql:']);
  const redisUrl = url(env, 'REDIS_URL', null, ['redis:', 'rediss:']);
  const smtpUrl = url(env, 'SMTP_URL', null, ['smtp:', 'smtps:']);
  const branding = parseBranding(env);

  const passwordPolicy: PasswordPolicy = {
    minLength: int(env, 'PASSWORD_MIN_LENGTH', 8, 8, 128),
    maxLength: 128,
    requireUppercase: bool(env, 'PASSWORD_REQUIRE_UPPERCASE', true),
    requireLowercase: bool(env, 'PASSWORD_REQUIRE_LOWERCASE', true),
    requireNumber: bool(env, 'PASSWORD_REQUIRE_NUMBER', true),
    requireSpecial: bool(env, 'PASSWORD_REQUIRE_SPECIAL', false),
  };

  const config: Config = {
    env: envName,
    port,
    host: str(env, 'HOST', '127.0.0.1'),
    databaseUrl,
    dataDir,
    redisUrl,
    jwtSecret,
    jwtRefreshSecret,
    jwtAlgorithm: parseJwtAlgorithm(env),
    appPermissions: parseAppPermissions(env),
    encryptionKey: encryptionKeys[0]!,
    encryptionKeys,
    appOrigin: appOrigin.replace(/\/$/, ''),
    publicApiUrl,
    smtpUrl,
    mailFrom: str(env, 'MAIL_FROM', `${displayName(branding.appName)} <no-reply@localhost>`),
    branding,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    webhook: {
      // Outside production a local receiver just works (docs/configuration.md); production refuses true.
      allowPrivateUrls: bool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', !production),
      retryDelaysS: retryDelaysS.map(Number),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 30_000, 1),
      orgConcurrency: int(env, 'WEBHOOK_ORG_CONCURRENCY', 32, 1),
      disableAfterH: int(env, 'WEBHOOK_DISABLE_AFTER_H', 120, 1, 24 * 365),
      retentionDays: int(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
      worker,
    },
    billingProvider,
    stripe: {
      secretKey: stripeSecretKey,
      webhookSecret: optional(env, 'STRIPE_WEBHOOK_SECRET'),
      apiBase: url(env, 'STRIPE_API_BASE', null, ['http:', 'https:']),
      pricePro: str(env, 'STRIPE_PRICE_PRO', 'price_pro'),
      priceEnterprise: str(env, 'STRIPE_PRICE_ENTERPRISE', 'price_enterprise'),
    },
    apiKey: { prefix, mode },
    auth: {
      requireEmailVerification: bool(env, 'AUTH_REQUIRE_EMAIL_VERIFICATION', true),
      refreshReuseGraceS: int(env, 'AUTH_REFRESH_REUSE_GRACE_S', 10, 0, 3600),
      maxSessions: int(env, 'AUTH_MAX_SESSIONS', 5, 1, 1000),
      reauthWindowS: int(env, 'AUTH_REAUTH_WINDOW_S', 600, 0, 86_400),
      accessTtlS: 15 * 60,
      refreshTtlS: 7 * 24 * 60 * 60,
      passwordPolicy,
      hashConcurrency: int(env, 'AUTH_HASH_CONCURRENCY', defaultHashConcurrency(), 1, 64),
      hashQueueLimit: int(env, 'AUTH_HASH_QUEUE_LIMIT', 64, 1, 100_000),
      methods: {
        password: bool(env, 'AUTH_PASSWORD_ENABLED', true),
        magicLink: bool(env, 'AUTH_MAGIC_LINK_ENABLED', true),
        twoFactor: bool(env, 'AUTH_TWO_FACTOR_ENABLED', true),
        sessionManagement: bool(env, 'AUTH_SESSION_MANAGEMENT_ENABLED', true),
      },
      oauth: {
        google: oauthProvider(env, 'GOOGLE', {
          authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
          tokenUrl: 'https://oauth2.googleapis.com/token',
          userInfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
          userInfoVar: 'GOOGLE_USERINFO_URL',
        }),
        github: oauthProvider(env, 'GITHUB', {
          authorizationUrl: 'https://github.com/login/oauth/authorize',
          tokenUrl: 'https://github.com/login/oauth/access_token',
          userInfoUrl: 'https://api.github.com',
          userInfoVar: 'GITHUB_API_URL',
        }),
      },
    },
    rateLimit: {
      authPerMin: int(env, 'RATE_LIMIT_AUTH_PER_MIN', 20, 1),
      userPerMin: int(env, 'RATE_LIMIT_USER_PER_MIN', 600, 1),
      anonPerMin: int(env, 'RATE_LIMIT_ANON_PER_MIN', 300, 1),
      keyDefaultPerMin: int(env, 'RATE_LIMIT_KEY_DEFAULT_PER_MIN', 1000, 1),
    },
    logLevel,
    logFormat,
    bodyLimitBytes: 1024 * 1024,
    metricsToken: optional(env, 'METRICS_TOKEN'),
    workerMetricsPort:
      optional(env, 'WORKER_METRICS_PORT') === null ? null : int(env, 'WORKER_METRICS_PORT', 0, 0, 65535),
    startupTimeoutS: int(env, 'STARTUP_TIMEOUT_S', 30, 0, 3600),
  };
  if (production) checkProduction(env, config);
  return config;
}
