// The only reader of process.env. Every variable (README, "Configuration") is parsed and validated
// here once, at boot. A bad value stops the start with a one-line message that names the variable,
// and so does a production start with a setting that is only safe in development (see
// `checkProduction`).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export interface PasswordPolicy {
  minLength: number;
  maxLength: number;
  requireUppercase: boolean;
  requireLowercase: boolean;
  requireNumber: boolean;
  requireSpecial: boolean;
}

export interface OAuthProviderConfig {
  clientId: string;
  clientSecret: string;
  authorizationUrl: string;
  tokenUrl: string;
  /** Google: the OIDC userinfo endpoint; GitHub: the REST API base (…/user, …/user/emails). */
  userInfoUrl: string;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl: string | null;
  dataDir: string;
  redisUrl: string | null;
  jwtSecret: string;
  jwtRefreshSecret: string;
  /** The first key of ENCRYPTION_KEY: everything encrypted from now on uses it. */
  encryptionKey: Buffer;
  /** Every key of ENCRYPTION_KEY, the first one first: a stored value is decrypted with whichever opens it. */
  encryptionKeys: Buffer[];
  appOrigin: string;
  /** Where this API is reached from outside: OAuth redirect URIs and the test payment page. */
  publicApiUrl: string;
  smtpUrl: string | null;
  mailFrom: string;
  trustProxy: boolean | number | string;
  webhook: {
    allowPrivateUrls: boolean;
    retryDelaysS: number[];
    timeoutMs: number;
    worker: 'inline' | 'off';
  };
  /** `stripe`: Stripe with STRIPE_SECRET_KEY; `test`: the built-in test checkout (no payment at all). */
  billingProvider: 'stripe' | 'test';
  stripe: {
    secretKey: string | null;
    webhookSecret: string | null;
    apiBase: string | null;
    pricePro: string;
    priceEnterprise: string;
  };
  apiKey: { prefix: string; mode: 'live' | 'test' };
  auth: {
    requireEmailVerification: boolean;
    refreshReuseGraceS: number;
    maxSessions: number;
    accessTtlS: number;
    refreshTtlS: number;
    passwordPolicy: PasswordPolicy;
    hashConcurrency: number;
    hashQueueLimit: number;
    /** Each sign-in method can be switched off; its routes then answer 404. */
    methods: { password: boolean; magicLink: boolean; twoFactor: boolean; sessionManagement: boolean };
    oauth: { google: OAuthProviderConfig | null; github: OAuthProviderConfig | null };
  };
  rateLimit: {
    authPerMin: number;
    userPerMin: number;
    anonPerMin: number;
    keyDefaultPerMin: number;
  };
  logLevel: string;
  bodyLimitBytes: number;
}

type Env = Record<string, string | undefined>;

const MIN_SECRET_LENGTH = 32;

function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

function optional(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v === '' ? null : v;
}

/**
 * Argon2id hashes in flight by default: the cores divided by the 4 lanes of each hash (p=4,
 * ARGON2_OPTIONS in modules/auth/passwords.ts), at least 1. @node-rs/argon2 runs a hash's lanes on
 * parallel threads, so one hash already fills 2 cores; measured there, a second one in flight adds
 * no throughput, only thrashing, and doubles each sign-in's wait.
 */
function defaultHashConcurrency(): number {
  return Math.max(1, Math.floor(os.availableParallelism() / 4));
}

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const raw = optional(env, name) ?? fallback;
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use one of ${protocols.join(', ')}`);
  }
  return raw;
}

/** A secret is weak when it is short or has almost no variety ("aaaa…", "1234…"). */
function checkSecret(name: string, value: string): string {
  if (value.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(name, `must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  if (new Set(value).size < 10) throw new ConfigError(name, 'is too weak (too few distinct characters)');
  return value;
}

export function parseEncryptionKey(name: string, raw: string): Buffer {
  const trimmed = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const buf = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (buf.length === 32) return buf;
  }
  throw new ConfigError(name, 'must be 32 bytes, as 64 hex characters or base64');
}

/**
 * ENCRYPTION_KEY is one key or a comma-separated list of them (to change keys without losing what
 * the old one encrypted): the first encrypts, every one decrypts. Errors say which entry is wrong
 * and never echo a key.
 */
export function parseEncryptionKeys(name: string, raw: string): Buffer[] {
  const entries = raw.split(',').map((e) => e.trim());
  if (entries.length === 1) return [parseEncryptionKey(name, entries[0]!)];
  const keys = entries.map((entry, i) => {
    const which = `entry ${i + 1} of ${entries.length}`;
    if (entry === '') throw new ConfigError(name, `has an empty ${which}: separate the keys with single commas`);
    try {
      return parseEncryptionKey(name, entry);
    } catch {
      throw new ConfigError(name, `${which} must be 32 bytes, as 64 hex characters or base64`);
    }
  });
  keys.forEach((key, i) => {
    const first = keys.findIndex((k) => k.equals(key));
    if (first !== i) throw new ConfigError(name, `lists the same key twice (entries ${first + 1} and ${i + 1})`);
  });
  return keys;
}

function parseBillingProvider(env: Env, stripeSecretKey: string | null): Config['billingProvider'] {
  const raw = optional(env, 'BILLING_PROVIDER');
  if (raw !== null && raw !== 'stripe' && raw !== 'test') throw new ConfigError('BILLING_PROVIDER', 'must be "stripe" or "test"');
  if (raw === 'stripe' && !stripeSecretKey) throw new ConfigError('STRIPE_SECRET_KEY', 'is required when BILLING_PROVIDER=stripe');
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
    throw new ConfigError('WEBHOOK_ALLOW_PRIVATE_URLS', 'must not be true when NODE_ENV=production: it lets webhook deliveries reach loopback and private addresses');
  }
  if (!config.stripe.secretKey && optional(env, 'BILLING_PROVIDER') !== 'test') {
    throw new ConfigError(
      'STRIPE_SECRET_KEY',
      'is required when NODE_ENV=production, unless BILLING_PROVIDER=test is set explicitly: the built-in test checkout upgrades any organization without payment',
    );
  }
}

function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw.trim() === '') return false;
  const v = raw.trim();
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (/^\d+$/.test(v)) return Number(v);
  // Comma-separated addresses or CIDRs: Fastify (proxy-addr) validates them when the app starts.
  for (const part of v.split(',')) {
    if (!/^[0-9a-fA-F.:/]+$|^(loopback|linklocal|uniquelocal)$/.test(part.trim())) {
      throw new ConfigError('TRUST_PROXY', `has an invalid entry "${part.trim()}"`);
    }
  }
  return v;
}

interface DevSecrets {
  jwtSecret: string;
  jwtRefreshSecret: string;
  encryptionKey: string;
}

/** Development secrets are generated once and kept in DATA_DIR so tokens survive a restart. */
function loadDevSecrets(dataDir: string): DevSecrets {
  const file = path.join(dataDir, 'secrets.json');
  const read = (): DevSecrets | null => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new ConfigError('DATA_DIR', `cannot read ${file}: ${(err as Error).message}`);
    }
    let parsed: Partial<DevSecrets> | null = null;
    try {
      parsed = JSON.parse(text) as Partial<DevSecrets>;
    } catch {
      // reported below
    }
    const ok = parsed && (['jwtSecret', 'jwtRefreshSecret', 'encryptionKey'] as const).every((k) => typeof parsed[k] === 'string');
    if (!ok) {
      throw new ConfigError('DATA_DIR', `has a damaged ${file}: delete it to generate new development secrets (signs everyone out)`);
    }
    return parsed as DevSecrets;
  };
  const existing = read();
  if (existing) return existing;
  const secrets: DevSecrets = {
    jwtSecret: randomBytes(48).toString('base64url'),
    jwtRefreshSecret: randomBytes(48).toString('base64url'),
    encryptionKey: randomBytes(32).toString('hex'),
  };
  fs.mkdirSync(dataDir, { recursive: true });
  // Written whole to a temporary file, then linked into place: a process starting at the same
  // moment either wins the link or reads the winner's complete file.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return read()!;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return secrets;
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

export function loadConfig(env: Env = process.env): Config {
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
  const jwtRefreshSecret = checkSecret('JWT_REFRESH_SECRET', optional(env, 'JWT_REFRESH_SECRET') ?? dev!.jwtRefreshSecret);
  if (jwtSecret === jwtRefreshSecret) throw new ConfigError('JWT_REFRESH_SECRET', 'must differ from JWT_SECRET');
  const encryptionKeys = parseEncryptionKeys('ENCRYPTION_KEY', optional(env, 'ENCRYPTION_KEY') ?? dev!.encryptionKey);

  const appOrigin = url(env, 'APP_ORIGIN', 'http://localhost:3000', ['http:', 'https:'])!;
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

  const logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', 'must be one of fatal, error, warn, info, debug, trace, silent');
  }

  const port = int(env, 'PORT', 3000, 0, 65535);
  const publicApiUrl = url(env, 'PUBLIC_API_URL', `http://localhost:${port}`, ['http:', 'https:'])!.replace(/\/$/, '');

  const stripeSecretKey = optional(env, 'STRIPE_SECRET_KEY');
  const billingProvider = parseBillingProvider(env, stripeSecretKey);
  const databaseUrl = url(env, 'DATABASE_URL', null, ['postgres:', 'postgresql:']);
  const redisUrl = url(env, 'REDIS_URL', null, ['redis:', 'rediss:']);
  const smtpUrl = url(env, 'SMTP_URL', null, ['smtp:', 'smtps:']);

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
    encryptionKey: encryptionKeys[0]!,
    encryptionKeys,
    appOrigin: appOrigin.replace(/\/$/, ''),
    publicApiUrl,
    smtpUrl,
    mailFrom: str(env, 'MAIL_FROM', 'Tenantry <no-reply@localhost>'),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    webhook: {
      allowPrivateUrls: bool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', false),
      retryDelaysS: retryDelaysS.map(Number),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 30_000, 1),
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
    bodyLimitBytes: 1024 * 1024,
  };
  if (production) checkProduction(env, config);
  return config;
}
