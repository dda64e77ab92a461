// The configuration contract (docs/configuration.md): development secrets kept in DATA_DIR, the
// secrets and settings production requires, and the ENCRYPTION_KEY list.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { expectRefused, load, PRODUCTION, SECRETS, tempDir, useTempDirs } from '../test/fixtures/config.js';

useTempDirs();

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
    const msg = expectRefused(
      () => load({ JWT_SECRET: SECRETS.JWT_SECRET, JWT_REFRESH_SECRET: SECRETS.JWT_SECRET }),
      'JWT_REFRESH_SECRET',
    );
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
    const conf = load({
      ENCRYPTION_KEY: ` ${c.toString('base64')} , ${b.toString('hex').toUpperCase()},${a.toString('base64url')} `,
    });
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
    const msg = expectRefused(
      () => load({ ENCRYPTION_KEY: `${good},${b.toString('hex')},${a.toString('base64')}` }),
      'ENCRYPTION_KEY',
    );
    expect(msg).toMatch(/twice/);
    expect(msg).not.toContain(good);
  });

  it('is required in production as a list too', () => {
    const conf = loadConfig({
      NODE_ENV: 'production',
      DATA_DIR: tempDir(),
      ...SECRETS,
      ...PRODUCTION,
      ENCRYPTION_KEY: `${b.toString('hex')},${a.toString('hex')}`,
    });
    expect(conf.encryptionKeys).toHaveLength(2);
  });
});

describe('production refuses unsafe settings with one line naming the variable', () => {
  const prod = (env: Record<string, string | undefined> = {}) =>
    loadConfig({ NODE_ENV: 'production', DATA_DIR: tempDir(), ...SECRETS, ...PRODUCTION, ...env });
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
    for (const v of ['true', '1', 'yes', 'on'])
      refused({ WEBHOOK_ALLOW_PRIVATE_URLS: v }, 'WEBHOOK_ALLOW_PRIVATE_URLS');
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
