// The configuration contract (docs/configuration.md): defaults, the billing provider, and errors
// that name the variable at fault.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { expectRefused, load, SECRETS, tempDir, useTempDirs } from '../test/fixtures/config.js';

useTempDirs();

describe('defaults', () => {
  it('gives every setting its development default', () => {
    const dataDir = tempDir();
    const c = loadConfig({ DATA_DIR: dataDir });
    expect(c.env).toBe('development');
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.databaseUrl).toBeNull();
    expect(c.dataDir).toBe(path.resolve(dataDir));
    expect(c.redisUrl).toBeNull();
    expect(c.appOrigin).toBe('http://localhost:3000');
    expect(c.smtpUrl).toBeNull();
    expect(c.mailFrom).toBe('Tenantry <no-reply@localhost>');
    expect(c.trustProxy).toBe(false);
    expect(c.webhook).toEqual({
      // A local receiver works outside production; production's default is false (config-secrets.test.ts).
      allowPrivateUrls: true,
      retryDelaysS: [60, 300, 900],
      timeoutMs: 30_000,
      orgConcurrency: 32,
      worker: 'inline',
      disableAfterH: 120,
      retentionDays: 30,
    });
    expect(c.stripe).toEqual({
      secretKey: null,
      webhookSecret: null,
      apiBase: null,
      pricePro: 'price_pro',
      priceEnterprise: 'price_enterprise',
    });
    expect(c.billingProvider).toBe('test');
    expect(c.encryptionKeys).toHaveLength(1);
    expect(c.encryptionKeys[0]!.equals(c.encryptionKey)).toBe(true);
    expect(c.apiKey).toEqual({ prefix: 'svc', mode: 'live' });
    expect(c.auth.requireEmailVerification).toBe(true);
    expect(c.auth.refreshReuseGraceS).toBe(10);
    expect(c.auth.reauthWindowS).toBe(600);
    expect(c.auth.maxSessions).toBe(5);
    expect(c.auth.accessTtlS).toBe(15 * 60);
    expect(c.auth.refreshTtlS).toBe(7 * 24 * 3600);
    expect(c.rateLimit).toEqual({ authPerMin: 20, userPerMin: 600, anonPerMin: 300, keyDefaultPerMin: 1000 });
    expect(c.logLevel).toBe('info');
    expect(c.bodyLimitBytes).toBe(1024 * 1024);
  });

  it('keeps DATA_DIR at ./data when unset', () => {
    const c = loadConfig({ ...SECRETS });
    expect(c.dataDir).toBe(path.resolve('./data'));
  });

  it('treats an empty variable as unset', () => {
    const c = load({
      PORT: '',
      HOST: '',
      APP_ORIGIN: '',
      DATABASE_URL: '',
      REDIS_URL: '',
      WEBHOOK_RETRY_DELAYS: '',
      LOG_LEVEL: '',
    });
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.appOrigin).toBe('http://localhost:3000');
    expect(c.databaseUrl).toBeNull();
    expect(c.redisUrl).toBeNull();
    expect(c.webhook.retryDelaysS).toEqual([60, 300, 900]);
    expect(c.logLevel).toBe('info');
  });

  it('defaults APP_ORIGIN to the service’s own origin on its PORT: the web app it serves', () => {
    expect(load({ PORT: '8080' }).appOrigin).toBe('http://localhost:8080');
    expect(load({ PORT: '8080', APP_ORIGIN: 'https://app.example.com' }).appOrigin).toBe('https://app.example.com');
  });

  it('reads the values it is given', () => {
    const c = load({
      NODE_ENV: 'production',
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u:p@db.internal:5432/tenantry',
      REDIS_URL: 'redis://cache.internal:6379',
      APP_ORIGIN: 'https://app.example.com/',
      PUBLIC_API_URL: 'https://api.example.com/',
      SMTP_URL: 'smtp://user:pass@mail.example.com:587',
      BILLING_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: 'sk_live_example',
      TRUST_PROXY: '10.0.0.0/8, 192.168.1.1',
      // Production refuses true (below); the spellings of a boolean are read in development.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'false',
      WEBHOOK_RETRY_DELAYS: '1, 2,3',
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_ORG_CONCURRENCY: '8',
      WEBHOOK_WORKER: 'off',
      WEBHOOK_DISABLE_AFTER_H: '48',
      WEBHOOK_RETENTION_DAYS: '7',
      API_KEY_PREFIX: 'acme',
      API_KEY_MODE: 'test',
      AUTH_REQUIRE_EMAIL_VERIFICATION: 'false',
      AUTH_MAX_SESSIONS: '2',
      AUTH_REAUTH_WINDOW_S: '0',
      RATE_LIMIT_AUTH_PER_MIN: '1',
      RATE_LIMIT_USER_PER_MIN: '2',
      RATE_LIMIT_ANON_PER_MIN: '3',
      RATE_LIMIT_KEY_DEFAULT_PER_MIN: '4',
      LOG_LEVEL: 'warn',
    });
    expect(c.env).toBe('production');
    expect(c.port).toBe(8080);
    expect(c.host).toBe('0.0.0.0');
    expect(c.databaseUrl).toBe('postgres://u:p@db.internal:5432/tenantry');
    expect(c.redisUrl).toBe('redis://cache.internal:6379');
    expect(c.appOrigin).toBe('https://app.example.com');
    expect(c.publicApiUrl).toBe('https://api.example.com');
    expect(c.smtpUrl).toBe('smtp://user:pass@mail.example.com:587');
    expect(c.billingProvider).toBe('stripe');
    expect(c.stripe.secretKey).toBe('sk_live_example');
    expect(c.trustProxy).toBe('10.0.0.0/8, 192.168.1.1');
    expect(c.webhook).toEqual({
      allowPrivateUrls: false,
      retryDelaysS: [1, 2, 3],
      timeoutMs: 5000,
      orgConcurrency: 8,
      worker: 'off',
      disableAfterH: 48,
      retentionDays: 7,
    });
    expect(c.apiKey).toEqual({ prefix: 'acme', mode: 'test' });
    expect(c.auth.requireEmailVerification).toBe(false);
    expect(c.auth.maxSessions).toBe(2);
    expect(c.auth.reauthWindowS).toBe(0);
    expect(c.rateLimit).toEqual({ authPerMin: 1, userPerMin: 2, anonPerMin: 3, keyDefaultPerMin: 4 });
    expect(c.logLevel).toBe('warn');
  });

  it('reads TRUST_PROXY as a flag, a hop count or a list of addresses', () => {
    expect(load({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(load({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(load({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(load({ TRUST_PROXY: '127.0.0.1' }).trustProxy).toBe('127.0.0.1');
    expect(load({ TRUST_PROXY: 'loopback, ::1' }).trustProxy).toBe('loopback, ::1');
    expectRefused(() => load({ TRUST_PROXY: 'everyone' }), 'TRUST_PROXY');
  });
});

describe('BILLING_PROVIDER', () => {
  it('defaults to stripe with STRIPE_SECRET_KEY and to the built-in test provider without (outside production)', () => {
    expect(load({ STRIPE_SECRET_KEY: 'sk_test_example' }).billingProvider).toBe('stripe');
    expect(load().billingProvider).toBe('test');
    expect(load({ NODE_ENV: 'test' }).billingProvider).toBe('test');
  });

  it('takes an explicit choice', () => {
    expect(load({ BILLING_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_example' }).billingProvider).toBe('stripe');
    expect(load({ BILLING_PROVIDER: 'test' }).billingProvider).toBe('test');
    // An explicit test provider wins over a key left in the environment.
    expect(load({ BILLING_PROVIDER: 'test', STRIPE_SECRET_KEY: 'sk_test_example' }).billingProvider).toBe('test');
  });

  it('refuses stripe without STRIPE_SECRET_KEY, naming both', () => {
    const msg = expectRefused(() => load({ BILLING_PROVIDER: 'stripe' }), 'STRIPE_SECRET_KEY');
    expect(msg).toContain('BILLING_PROVIDER=stripe');
  });

  it('refuses any other value', () => {
    for (const value of ['paypal', 'Stripe', 'none'])
      expectRefused(() => load({ BILLING_PROVIDER: value }), 'BILLING_PROVIDER');
  });
});

describe('invalid values name their variable', () => {
  const cases: [string, string][] = [
    ['PORT', 'abc'],
    ['PORT', '3000abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['WEBHOOK_TIMEOUT_MS', '0'],
    ['WEBHOOK_TIMEOUT_MS', '30s'],
    ['AUTH_MAX_SESSIONS', '0'],
    ['AUTH_MAX_SESSIONS', 'five'],
    ['AUTH_REFRESH_REUSE_GRACE_S', '-5'],
    ['AUTH_REAUTH_WINDOW_S', '-1'],
    ['AUTH_REAUTH_WINDOW_S', '86401'],
    ['RATE_LIMIT_AUTH_PER_MIN', '0'],
    ['RATE_LIMIT_USER_PER_MIN', '1e3'],
    ['RATE_LIMIT_ANON_PER_MIN', 'many'],
    ['RATE_LIMIT_KEY_DEFAULT_PER_MIN', '0x10'],
    ['AUTH_REQUIRE_EMAIL_VERIFICATION', 'maybe'],
    ['WEBHOOK_ALLOW_PRIVATE_URLS', 'yes please'],
    ['DATABASE_URL', 'http://db.example.com:5432/tenantry'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'localhost:6379'],
    ['REDIS_URL', 'http://cache:6379'],
    ['SMTP_URL', 'https://mail.example.com'],
    ['APP_ORIGIN', 'localhost:3000'],
    ['APP_ORIGIN', 'ftp://app.example.com'],
    ['APP_ORIGIN', 'https://app.example.com/some/path'],
    ['STRIPE_API_BASE', 'stripe.local'],
    ['WEBHOOK_RETRY_DELAYS', '60,five,900'],
    ['WEBHOOK_RETRY_DELAYS', '60,,900'],
    ['WEBHOOK_RETRY_DELAYS', '-60'],
    ['WEBHOOK_WORKER', 'both'],
    ['WEBHOOK_DISABLE_AFTER_H', '0'],
    ['WEBHOOK_RETENTION_DAYS', 'a month'],
    ['API_KEY_MODE', 'prod'],
    ['API_KEY_PREFIX', 'Has Spaces'],
    ['API_KEY_PREFIX', 'svc_'],
    ['LOG_LEVEL', 'verbose'],
  ];
  for (const [name, value] of cases) {
    it(`${name}=${JSON.stringify(value)}`, () => {
      expectRefused(() => load({ [name]: value }), name);
    });
  }

  it('accepts the spellings of a boolean', () => {
    for (const v of ['true', 'TRUE', '1', 'yes', 'on'])
      expect(load({ WEBHOOK_ALLOW_PRIVATE_URLS: v }).webhook.allowPrivateUrls).toBe(true);
    for (const v of ['false', 'False', '0', 'no', 'off'])
      expect(load({ WEBHOOK_ALLOW_PRIVATE_URLS: v }).webhook.allowPrivateUrls).toBe(false);
  });

  it('accepts postgresql:// and rediss:// URLs', () => {
    expect(load({ DATABASE_URL: 'postgresql://db/tenantry' }).databaseUrl).toBe('postgresql://db/tenantry');
    expect(load({ REDIS_URL: 'rediss://cache:6380' }).redisUrl).toBe('rediss://cache:6380');
  });

  it('reports a bad value with the message prefix operators look for', () => {
    expect(expectRefused(() => load({ PORT: 'abc' }), 'PORT')).toMatch(/^Invalid configuration: PORT /);
  });
});
