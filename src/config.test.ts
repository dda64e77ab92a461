// The configuration contract: defaults, development secrets kept in DATA_DIR, the secrets and
// settings production requires, the ENCRYPTION_KEY list, and errors that name the variable at fault.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-config-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const SECRETS = {
  JWT_SECRET: 'access-secret-0123456789-abcdefghijklmnopqrstuvwxyz',
  JWT_REFRESH_SECRET: 'refresh-secret-0123456789-abcdefghijklmnopqrstuvwxyz',
  ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
};

/** What production requires besides the secrets (a mail server, its public addresses, a billing provider). */
const PRODUCTION = {
  SMTP_URL: 'smtp://user:pass@mail.example.com:587',
  APP_ORIGIN: 'https://app.example.com',
  PUBLIC_API_URL: 'https://api.example.com',
  STRIPE_SECRET_KEY: 'sk_live_example',
};

/** A configuration with the secrets given and a fresh DATA_DIR, plus the overrides. */
const load = (env: Record<string, string | undefined> = {}) => loadConfig({ DATA_DIR: tempDir(), ...SECRETS, ...env });

/** The call throws a ConfigError whose message names the variable. */
function expectRefused(fn: () => unknown, variable: string) {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected ${variable} to be refused`).toBeInstanceOf(ConfigError);
  expect((caught as Error).message).toContain(variable);
  return (caught as Error).message;
}

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
    expect(c.webhook).toEqual({ allowPrivateUrls: false, retryDelaysS: [60, 300, 900], timeoutMs: 30_000, worker: 'inline' });
    expect(c.stripe).toEqual({ secretKey: null, webhookSecret: null, apiBase: null, pricePro: 'price_pro', priceEnterprise: 'price_enterprise' });
    expect(c.billingProvider).toBe('test');
    expect(c.encryptionKeys).toHaveLength(1);
    expect(c.encryptionKeys[0]!.equals(c.encryptionKey)).toBe(true);
    expect(c.apiKey).toEqual({ prefix: 'svc', mode: 'live' });
    expect(c.auth.requireEmailVerification).toBe(true);
    expect(c.auth.refreshReuseGraceS).toBe(10);
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
    const c = load({ PORT: '', HOST: '', APP_ORIGIN: '', DATABASE_URL: '', REDIS_URL: '', WEBHOOK_RETRY_DELAYS: '', LOG_LEVEL: '' });
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.appOrigin).toBe('http://localhost:3000');
    expect(c.databaseUrl).toBeNull();
    expect(c.redisUrl).toBeNull();
    expect(c.webhook.retryDelaysS).toEqual([60, 300, 900]);
    expect(c.logLevel).toBe('info');
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
      WEBHOOK_WORKER: 'off',
      API_KEY_PREFIX: 'acme',
      API_KEY_MODE: 'test',
      AUTH_REQUIRE_EMAIL_VERIFICATION: 'false',
      AUTH_MAX_SESSIONS: '2',
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
    expect(c.webhook).toEqual({ allowPrivateUrls: false, retryDelaysS: [1, 2, 3], timeoutMs: 5000, worker: 'off' });
    expect(c.apiKey).toEqual({ prefix: 'acme', mode: 'test' });
    expect(c.auth.requireEmailVerification).toBe(false);
    expect(c.auth.maxSessions).toBe(2);
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

describe('development secrets', () => {
  it('are generated once into DATA_DIR/secrets.json and reused on the next load', () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    const first = loadConfig({ DATA_DIR: dataDir });
    const file = path.join(dataDir, 'secrets.json');
    expect(fs.existsSync(file)).toBe(true);
    if (process.platform !== 'win32') expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    expect(first.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(first.jwtRefreshSecret.length).toBeGreaterThanOrEqual(32);
    expect(first.jwtSecret).not.toBe(first.jwtRefreshSecret);
    expect(first.encryptionKey).toBeInstanceOf(Buffer);
    expect(first.encryptionKey.length).toBe(32);

    const again = loadConfig({ DATA_DIR: dataDir });
    expect(again.jwtSecret).toBe(first.jwtSecret);
    expect(again.jwtRefreshSecret).toBe(first.jwtRefreshSecret);
    expect(again.encryptionKey.equals(first.encryptionKey)).toBe(true);

    // Another directory gets other secrets.
    const other = loadConfig({ DATA_DIR: tempDir() });
    expect(other.jwtSecret).not.toBe(first.jwtSecret);
    expect(other.encryptionKey.equals(first.encryptionKey)).toBe(false);
  });

  it('fill in only what the environment leaves unset', () => {
    const dataDir = tempDir();
    const c = loadConfig({ DATA_DIR: dataDir, JWT_SECRET: SECRETS.JWT_SECRET });
    expect(c.jwtSecret).toBe(SECRETS.JWT_SECRET);
    const stored = JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
    expect(c.jwtRefreshSecret).toBe(stored.jwtRefreshSecret);
  });

  it('are not written when every secret is given', () => {
    const dataDir = tempDir();
    loadConfig({ DATA_DIR: dataDir, ...SECRETS });
    expect(fs.existsSync(path.join(dataDir, 'secrets.json'))).toBe(false);
  });

  it('refuse a damaged secrets file with a message that names it', () => {
    const dataDir = tempDir();
    fs.writeFileSync(path.join(dataDir, 'secrets.json'), '{ not json');
    expect(expectRefused(() => loadConfig({ DATA_DIR: dataDir }), 'secrets.json')).toContain(dataDir);
    fs.writeFileSync(path.join(dataDir, 'secrets.json'), JSON.stringify({ jwtSecret: 'x' }));
    expectRefused(() => loadConfig({ DATA_DIR: dataDir }), 'secrets.json');
  });
});

describe('production secrets', () => {
  for (const name of ['JWT_SECRET', 'JWT_REFRESH_SECRET', 'ENCRYPTION_KEY'] as const) {
    it(`refuses to start without ${name}, naming it`, () => {
      const dataDir = tempDir();
      // Even with development secrets on disk, production does not fall back to them.
      loadConfig({ DATA_DIR: dataDir });
      const env: Record<string, string | undefined> = { NODE_ENV: 'production', DATA_DIR: dataDir, ...SECRETS };
      delete env[name];
      expectRefused(() => loadConfig(env), name);
      expectRefused(() => loadConfig({ ...env, [name]: '' }), name);
    });
  }

  it('starts with all three (and the settings production requires)', () => {
    const dataDir = tempDir();
    const c = loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir, ...SECRETS, ...PRODUCTION });
    expect(c.env).toBe('production');
    expect(c.jwtSecret).toBe(SECRETS.JWT_SECRET);
    expect(fs.existsSync(path.join(dataDir, 'secrets.json'))).toBe(false);
  });
});

describe('secret strength', () => {
  for (const env of ['development', 'production']) {
    it(`refuses short or low-variety JWT secrets, naming the variable (${env})`, () => {
      for (const name of ['JWT_SECRET', 'JWT_REFRESH_SECRET']) {
        const short = 'Ab1-short-secret';
        let msg = expectRefused(() => load({ NODE_ENV: env, [name]: short }), name);
        expect(msg).not.toContain(short);
        expectRefused(() => load({ NODE_ENV: env, [name]: randomBytes(24).toString('base64url').slice(0, 31) }), name);
        msg = expectRefused(() => load({ NODE_ENV: env, [name]: 'a'.repeat(64) }), name);
        expect(msg).not.toContain('a'.repeat(64));
        expectRefused(() => load({ NODE_ENV: env, [name]: '12341234123412341234123412341234' }), name);
      }
    });
  }

  it('accepts a 32-character random secret', () => {
    const secret = randomBytes(24).toString('base64url');
    expect(secret).toHaveLength(32);
    expect(load({ JWT_SECRET: secret }).jwtSecret).toBe(secret);
  });

  it('refuses equal access and refresh secrets', () => {
    const msg = expectRefused(() => load({ JWT_SECRET: SECRETS.JWT_SECRET, JWT_REFRESH_SECRET: SECRETS.JWT_SECRET }), 'JWT_REFRESH_SECRET');
    expect(msg).toContain('JWT_SECRET');
    expect(msg).not.toContain(SECRETS.JWT_SECRET);
  });
});

describe('ENCRYPTION_KEY', () => {
  const key = randomBytes(32);

  it('accepts 64 hex characters, either case', () => {
    expect(load({ ENCRYPTION_KEY: key.toString('hex') }).encryptionKey.equals(key)).toBe(true);
    expect(load({ ENCRYPTION_KEY: key.toString('hex').toUpperCase() }).encryptionKey.equals(key)).toBe(true);
  });

  it('accepts base64 of 32 bytes, padded or not, standard or URL-safe', () => {
    const b64 = key.toString('base64');
    expect(b64).toHaveLength(44);
    expect(load({ ENCRYPTION_KEY: b64 }).encryptionKey.equals(key)).toBe(true);
    expect(load({ ENCRYPTION_KEY: b64.replace(/=$/, '') }).encryptionKey.equals(key)).toBe(true);
    expect(load({ ENCRYPTION_KEY: key.toString('base64url') }).encryptionKey.equals(key)).toBe(true);
  });

  it('refuses anything else, naming the variable and not echoing the value', () => {
    const bad = [
      key.toString('hex').slice(0, 62),
      `${key.toString('hex')}00`,
      'g'.repeat(64),
      randomBytes(31).toString('base64'),
      randomBytes(33).toString('base64'),
      randomBytes(48).toString('base64'),
      'this is not a key at all, not even close to one',
      'x'.repeat(32),
    ];
    for (const value of bad) {
      const msg = expectRefused(() => load({ ENCRYPTION_KEY: value }), 'ENCRYPTION_KEY');
      expect(msg).not.toContain(value);
    }
  });
});

describe('ENCRYPTION_KEY as a list (rotation)', () => {
  const a = randomBytes(32);
  const b = randomBytes(32);
  const c = randomBytes(32);

  it('takes comma-separated keys: the first encrypts, every one is kept to decrypt', () => {
    const conf = load({ ENCRYPTION_KEY: `${b.toString('hex')},${a.toString('hex')}` });
    expect(conf.encryptionKey.equals(b)).toBe(true);
    expect(conf.encryptionKeys.map((k) => k.toString('hex'))).toEqual([b.toString('hex'), a.toString('hex')]);
  });

  it('accepts blanks around the commas and mixes hex and base64 entries', () => {
    const conf = load({ ENCRYPTION_KEY: ` ${c.toString('base64')} , ${b.toString('hex').toUpperCase()},${a.toString('base64url')} ` });
    expect(conf.encryptionKeys.map((k) => k.toString('hex'))).toEqual([c, b, a].map((k) => k.toString('hex')));
    expect(conf.encryptionKey.equals(c)).toBe(true);
  });

  it('keeps one key as a list of one', () => {
    const conf = load({ ENCRYPTION_KEY: a.toString('hex') });
    expect(conf.encryptionKeys).toHaveLength(1);
    expect(conf.encryptionKeys[0]!.equals(a)).toBe(true);
  });

  it('refuses a bad entry, naming the variable and the entry, echoing no key', () => {
    const good = a.toString('hex');
    for (const [value, entry] of [
      [`${good},${good.slice(0, 62)}`, 2],
      [`${randomBytes(31).toString('base64')},${good}`, 1],
      [`${good},${b.toString('hex')},not-a-key-at-all`, 3],
    ] as const) {
      const msg = expectRefused(() => load({ ENCRYPTION_KEY: value }), 'ENCRYPTION_KEY');
      expect(msg).toContain(`entry ${entry}`);
      for (const part of value.split(',')) expect(msg).not.toContain(part);
    }
  });

  it('refuses empty entries and a key listed twice', () => {
    const good = a.toString('hex');
    for (const value of [`${good},`, `,${good}`, `${good},,${b.toString('hex')}`, ',']) {
      const msg = expectRefused(() => load({ ENCRYPTION_KEY: value }), 'ENCRYPTION_KEY');
      expect(msg).toMatch(/empty/);
      expect(msg).not.toContain(good);
    }
    // The same key in two spellings is still the same key.
    const msg = expectRefused(() => load({ ENCRYPTION_KEY: `${good},${b.toString('hex')},${a.toString('base64')}` }), 'ENCRYPTION_KEY');
    expect(msg).toMatch(/twice/);
    expect(msg).not.toContain(good);
  });

  it('is required in production as a list too', () => {
    const conf = loadConfig({ NODE_ENV: 'production', DATA_DIR: tempDir(), ...SECRETS, ...PRODUCTION, ENCRYPTION_KEY: `${b.toString('hex')},${a.toString('hex')}` });
    expect(conf.encryptionKeys).toHaveLength(2);
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
    for (const value of ['paypal', 'Stripe', 'none']) expectRefused(() => load({ BILLING_PROVIDER: value }), 'BILLING_PROVIDER');
  });
});

describe('production refuses unsafe settings with one line naming the variable', () => {
  const prod = (env: Record<string, string | undefined> = {}) => loadConfig({ NODE_ENV: 'production', DATA_DIR: tempDir(), ...SECRETS, ...PRODUCTION, ...env });
  const refused = (env: Record<string, string | undefined>, variable: string) => {
    const msg = expectRefused(() => prod(env), variable);
    expect(msg).toMatch(/^Invalid configuration: /);
    expect(msg).not.toContain('\n');
    return msg;
  };

  it('starts with every required setting', () => {
    const c = prod();
    expect(c.env).toBe('production');
    expect(c.billingProvider).toBe('stripe');
    expect(c.webhook.allowPrivateUrls).toBe(false);
  });

  for (const name of ['SMTP_URL', 'APP_ORIGIN', 'PUBLIC_API_URL'] as const) {
    it(`refuses to start without ${name} (unset or empty)`, () => {
      expect(refused({ [name]: undefined }, name)).toContain('NODE_ENV=production');
      refused({ [name]: '' }, name);
    });
  }

  it('refuses to start without STRIPE_SECRET_KEY unless BILLING_PROVIDER=test is explicit (the test checkout upgrades for free)', () => {
    const msg = refused({ STRIPE_SECRET_KEY: undefined }, 'STRIPE_SECRET_KEY');
    expect(msg).toContain('BILLING_PROVIDER=test');
    refused({ STRIPE_SECRET_KEY: '' }, 'STRIPE_SECRET_KEY');
    refused({ STRIPE_SECRET_KEY: undefined, BILLING_PROVIDER: '' }, 'STRIPE_SECRET_KEY');
    refused({ STRIPE_SECRET_KEY: undefined, BILLING_PROVIDER: 'stripe' }, 'STRIPE_SECRET_KEY');
    const c = prod({ STRIPE_SECRET_KEY: undefined, BILLING_PROVIDER: 'test' });
    expect(c.billingProvider).toBe('test');
    expect(c.stripe.secretKey).toBeNull();
  });

  it('refuses WEBHOOK_ALLOW_PRIVATE_URLS=true', () => {
    for (const v of ['true', '1', 'yes', 'on']) refused({ WEBHOOK_ALLOW_PRIVATE_URLS: v }, 'WEBHOOK_ALLOW_PRIVATE_URLS');
    expect(prod({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' }).webhook.allowPrivateUrls).toBe(false);
  });

  it('asks none of these outside production', () => {
    for (const env of ['development', 'test']) {
      const c = load({ NODE_ENV: env, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
      expect(c.smtpUrl).toBeNull();
      expect(c.webhook.allowPrivateUrls).toBe(true);
      expect(c.billingProvider).toBe('test');
    }
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
    for (const v of ['true', 'TRUE', '1', 'yes', 'on']) expect(load({ WEBHOOK_ALLOW_PRIVATE_URLS: v }).webhook.allowPrivateUrls).toBe(true);
    for (const v of ['false', 'False', '0', 'no', 'off']) expect(load({ WEBHOOK_ALLOW_PRIVATE_URLS: v }).webhook.allowPrivateUrls).toBe(false);
  });

  it('accepts postgresql:// and rediss:// URLs', () => {
    expect(load({ DATABASE_URL: 'postgresql://db/tenantry' }).databaseUrl).toBe('postgresql://db/tenantry');
    expect(load({ REDIS_URL: 'rediss://cache:6380' }).redisUrl).toBe('rediss://cache:6380');
  });

  it('reports a bad value with the message prefix operators look for', () => {
    expect(expectRefused(() => load({ PORT: 'abc' }), 'PORT')).toMatch(/^Invalid configuration: PORT /);
  });
});
