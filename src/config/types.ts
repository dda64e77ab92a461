import type { Branding } from '../providers/mail/templates.js';
// The shape of the configuration loadConfig (index.ts) builds once, at boot.

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
export const JWT_ALGORITHMS = ['HS256', 'ES256', 'EdDSA', 'RS256'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];
export type AsymmetricAlgorithm = Exclude<JwtAlgorithm, 'HS256'>;

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl: string | null;
  dataDir: string;
  redisUrl: string | null;
  jwtSecret: string;
  jwtRefreshSecret: string;
  /**
   * How access tokens are signed: HS256 under JWT_SECRET, or an asymmetric algorithm whose private
   * keys live in the database (platform/identity/signing-keys.ts) and whose public keys are published.
   */
  jwtAlgorithm: JwtAlgorithm;
  /** The product's own permissions (APP_PERMISSIONS), beside the built-in ones. */
  appPermissions: string[];
  /** The first key of ENCRYPTION_KEY: everything encrypted from now on uses it. */
  encryptionKey: Buffer;
  /** Every key of ENCRYPTION_KEY, the first one first: a stored value is decrypted with whichever opens it. */
  encryptionKeys: Buffer[];
  appOrigin: string;
  /** Where this API is reached from outside: OAuth redirect URIs and the test payment page. */
  publicApiUrl: string;
  smtpUrl: string | null;
  mailFrom: string;
  /** The product's name, logo, colour, support address and mail texts (config/branding.ts). */
  branding: Branding;
  trustProxy: boolean | number | string;
  webhook: {
    allowPrivateUrls: boolean;
    retryDelaysS: number[];
    timeoutMs: number;
    /** Deliveries one organization may have in flight in one worker. */
    orgConcurrency: number;
    /** Hours of nothing but failed attempts after which an endpoint is turned off (auto-disable). */
    disableAfterH: number;
    /** Days finished deliveries (and their attempts and events) are kept (jobs/retention.ts). */
    retentionDays: number;
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
    /** How long a session's sign-in (or re-authentication) counts as fresh proof (AUTH_REAUTH_WINDOW_S). */
    reauthWindowS: number;
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
  /** `pretty`: one readable line per event (development at a terminal); `json`: pino's JSON lines. */
  logFormat: 'json' | 'pretty';
  bodyLimitBytes: number;
  /** GET /metrics asks for `Authorization: Bearer <it>` when set; open otherwise. */
  metricsToken: string | null;
  /** `npm run worker` serves GET /metrics (and /health) on this port of HOST when set; no HTTP otherwise. */
  workerMetricsPort: number | null;
  /** Seconds PostgreSQL and Redis are waited for at start before giving up. */
  startupTimeoutS: number;
}
