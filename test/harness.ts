// The app on a fresh database for one test file: PGlite by default, PostgreSQL when
// TEST_DATABASE_URL is set, Redis when TEST_REDIS_URL is set; a fake clock; a local SMTP sink.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type DbHandle, openPglite, openPostgres } from '../src/db/client.js';
import { createInfra, createLogger, type Infra } from '../src/infra.js';
import { FakeClock } from '../src/lib/clock.js';
import { adminUrl } from './global-setup.js';
import { startSmtpSink, type SmtpSink } from './smtp-sink.js';

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
export const onRedis = Boolean(process.env.TEST_REDIS_URL);

export interface TestApp {
  app: FastifyInstance;
  deps: Infra;
  clock: FakeClock;
  mail: SmtpSink;
  /** The database of this file, to open a second instance on it. */
  database: { url: string | null; handle: DbHandle };
  request(opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

const SECRETS = {
  JWT_SECRET: 'test-access-secret-0123456789abcdefghijklmnop',
  JWT_REFRESH_SECRET: 'test-refresh-secret-0123456789abcdefghijklmno',
  ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
};

async function freshDatabase(): Promise<{ url: string | null; handle: DbHandle }> {
  const template = inject('pgTemplate');
  const base = process.env.TEST_DATABASE_URL;
  if (base && template) {
    const name = `tenantry_t_${template.slice('tenantry_tpl_'.length)}_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl(base) });
    await admin.connect();
    // CREATE DATABASE … TEMPLATE needs the template to have no other connection: retry briefly.
    for (let i = 0; ; i++) {
      try {
        await admin.query(`create database ${name} template ${template}`);
        break;
      } catch (err) {
        if (i > 50 || !/being accessed by other users/.test(String(err))) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
    await admin.end();
    const url = adminUrl(base, name);
    return { url, handle: openPostgres(url, pino({ level: 'silent' })) };
  }
  const dump = fs.readFileSync(inject('pgliteTemplate'));
  return { url: null, handle: await openPglite({ loadDataDir: new Blob([dump]) }) };
}

export interface TestAppOptions {
  env?: Record<string, string | undefined>;
  clock?: FakeClock;
  /** Share another app's database (a second instance). */
  database?: { url: string | null; handle: DbHandle };
  redisPrefix?: string;
  /** Hash passwords at the production cost (ARGON2_OPTIONS) instead of the harness's cheap one. */
  productionHashCost?: boolean;
  /** The web app's build to serve (default: the repository's web/dist/). */
  webDist?: string;
  /** Receives every log line (JSON) of the service's own logger, from level info up. */
  logTo?: (line: string) => void;
}

// Argon2id at 1 MiB and one pass: the same code path as production, a hundredth of its CPU (the suite
// hashes thousands of passwords). The production cost itself is tested in passwords.test.ts.
const TEST_HASH_COST = { memoryCost: 1024, timeCost: 1, parallelism: 1 };

export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const mail = await startSmtpSink();
  const clock = opts.clock ?? new FakeClock(Date.parse('2026-03-01T12:00:00.000Z'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-data-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SMTP_URL: mail.url,
    APP_ORIGIN: 'http://app.test',
    RATE_LIMIT_AUTH_PER_MIN: '100000',
    RATE_LIMIT_USER_PER_MIN: '100000',
    RATE_LIMIT_ANON_PER_MIN: '100000',
    AUTH_HASH_CONCURRENCY: '4',
    // The URL rules of production, unless a test lifts them (the development default is true).
    WEBHOOK_ALLOW_PRIVATE_URLS: 'false',
    ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
    ...SECRETS,
    ...opts.env,
  });
  const database = opts.database ?? (await freshDatabase());
  const ownsDatabase = !opts.database;
  const deps = await createInfra(config, {
    clock,
    dbHandle: database.handle,
    migrate: false,
    ...(opts.productionHashCost ? {} : { hashCost: TEST_HASH_COST }),
    redisPrefix: opts.redisPrefix ?? `test:${randomBytes(6).toString('hex')}:`,
    ...(opts.logTo ? { logger: createLogger({ logLevel: 'info' }, { write: opts.logTo }) } : {}),
  });
  mail.idle = () => deps.mailer.idle();
  const app = await buildApp(deps, opts.webDist === undefined ? {} : { webDist: opts.webDist });
  await app.ready();
  return {
    app,
    deps,
    clock,
    mail,
    database,
    request: (o) => app.inject(o),
    async close() {
      await app.close();
      if (ownsDatabase) {
        await deps.close();
      } else {
        await deps.sessions.close();
        await deps.checkWaits.close();
        if (deps.redis) deps.redis.disconnect();
      }
      await mail.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const json = (res: LightMyRequestResponse) => res.json() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Rows of a raw query on the app's database (both drivers return `{rows}`). */
export async function queryRows<T = Record<string, unknown>>(t: TestApp, query: SQL): Promise<T[]> {
  const result = (await t.deps.db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}
