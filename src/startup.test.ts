// Start-up (startup.ts, boot.ts, worker.ts): PostgreSQL and Redis that answer only after a few tries
// are waited for with one log line per try; one that never answers ends the process with one line
// after STARTUP_TIMEOUT_S; `npm run worker` without DATABASE_URL refuses to start.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { adminUrl } from '../test/global-setup.js';
import { fakePostgres, fakeRedis, freePort, lateServer, proxyTo } from '../test/late-servers.js';
import { EXIT_TIMEOUT_MS, ROOT, runToExit } from '../test/fixtures/process.js';
import { postgres, redis, StartupError, waitFor, whereOf } from './startup.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A logger that keeps its lines and calls `onWarn` at the first warning. */
function recorder(onWarn: () => void = () => {}) {
  const lines: Array<{ level: 'warn' | 'info'; msg: string; fields: Record<string, unknown> }> = [];
  let warned = false;
  const log = (level: 'warn' | 'info') => (fields: Record<string, unknown>, msg: string) => {
    lines.push({ level, msg, fields });
    if (level === 'warn' && !warned) {
      warned = true;
      onWarn();
    }
  };
  return { lines, logger: { warn: log('warn'), info: log('info') } as never };
}

/** `base` (the run's real server, if any) pointed at 127.0.0.1:port, credentials and database kept. */
function urlOn(port: number, base: string | undefined, fallback: string): string {
  const u = new URL(base ?? fallback);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

describe('waiting for the backing services at start', () => {
  for (const kind of ['PostgreSQL', 'Redis'] as const) {
    const real = kind === 'PostgreSQL' ? process.env.TEST_DATABASE_URL : process.env.TEST_REDIS_URL;
    const what = real ? `the run's ${kind} through a proxy` : `a local server speaking ${kind}'s protocol`;

    it(`${kind} on a port that answers only after the first try (${what}): tried again, one line per try, then it goes on`, async () => {
      const port = await freePort();
      const handler = real
        ? proxyTo(new URL(real), kind === 'PostgreSQL' ? 5432 : 6379)
        : kind === 'PostgreSQL'
          ? fakePostgres
          : fakeRedis;
      const server = lateServer(port, handler);
      cleanups.push(() => server.close());
      // The port opens once the first failed try has been logged.
      let opened: Promise<void> = Promise.resolve();
      const { lines, logger } = recorder(() => (opened = server.open()));
      const url = urlOn(
        port,
        real,
        kind === 'PostgreSQL' ? 'postgres://tenantry:s3cret@x/tenantry' : 'redis://:s3cret@x',
      );
      const service = kind === 'PostgreSQL' ? postgres(url) : redis(url);

      await waitFor(service, 60, logger, 10);
      await opened;

      const warnings = lines.filter((l) => l.level === 'warn');
      expect(warnings.length).toBeGreaterThanOrEqual(1);
      warnings.forEach((w, i) => {
        expect(w.fields).toMatchObject({ service: kind, at: whereOf(url), attempt: i + 1 });
        expect(w.msg).toMatch(
          new RegExp(
            `^${kind} at 127\\.0\\.0\\.1:${port}\\S* does not answer \\(attempt ${i + 1}\\); trying again for up to \\d+ s$`,
          ),
        );
      });
      expect(lines.at(-1)).toMatchObject({
        level: 'info',
        msg: `${kind} at ${whereOf(url)} answers`,
        fields: { attempt: warnings.length + 1 },
      });
      expect(JSON.stringify(lines)).not.toContain('s3cret');
    });
  }

  it('a port that never answers: StartupError after the timeout, naming the variable and STARTUP_TIMEOUT_S', async () => {
    const port = await freePort();
    const { lines, logger } = recorder();
    const err = await waitFor(postgres(`postgres://u:s3cret@127.0.0.1:${port}/app`), 0, logger, 10).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StartupError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^Cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}/app after 0 s \\(1 attempt\\): .+\\. Check DATABASE_URL and that the server runs, or wait longer with STARTUP_TIMEOUT_S\\.$`,
      ),
    );
    expect((err as Error).message).not.toContain('s3cret');
    expect(lines).toEqual([]);
  });
});

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-startup-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// With TEST_DATABASE_URL the process also waits for PostgreSQL (a database of its own, dropped after);
// without it, it runs on the embedded database and waits for Redis alone.
describe('a process whose backing services answer only after their first try', () => {
  const pgBase = process.env.TEST_DATABASE_URL;
  const redisBase = process.env.TEST_REDIS_URL;
  const which = [
    pgBase ? "the run's PostgreSQL through a proxy" : null,
    redisBase ? "the run's Redis through a proxy" : "a local server speaking Redis's protocol",
  ]
    .filter(Boolean)
    .join(', ');

  it(
    `waits (one log line per try), then starts and serves /health; SIGTERM exits 0 (${which})`,
    async () => {
      const env: Record<string, string> = { DATA_DIR: dataDir(), STARTUP_TIMEOUT_S: '120' };
      const late: Array<{ kind: 'PostgreSQL' | 'Redis'; url: string; server: ReturnType<typeof lateServer> }> = [];
      if (pgBase) {
        const name = `tenantry_startup_${randomBytes(4).toString('hex')}`;
        const admin = new pg.Client({ connectionString: adminUrl(pgBase) });
        await admin.connect();
        await admin.query(`create database ${name}`);
        cleanups.push(async () => {
          await admin.query(`drop database if exists ${name} with (force)`);
          await admin.end();
        });
        const port = await freePort();
        late.push({
          kind: 'PostgreSQL',
          url: urlOn(port, adminUrl(pgBase, name), ''),
          server: lateServer(port, proxyTo(new URL(pgBase), 5432)),
        });
        env.DATABASE_URL = late.at(-1)!.url;
      }
      const redisPort = await freePort();
      late.push({
        kind: 'Redis',
        url: urlOn(redisPort, redisBase, 'redis://x'),
        server: lateServer(redisPort, redisBase ? proxyTo(new URL(redisBase), 6379) : fakeRedis),
      });
      env.REDIS_URL = late.at(-1)!.url;
      for (const l of late) cleanups.push(() => l.server.close());

      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? os.tmpdir(),
          HOST: '127.0.0.1',
          PORT: '0',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      cleanups.push(() => void (child.exitCode === null && child.kill('SIGKILL')));
      let output = '';
      child.stdout.on('data', (b: Buffer) => (output += b.toString()));
      child.stderr.on('data', (b: Buffer) => (output += b.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      /** Resolves with the first match of `re` in the output; rejects if the process exits first. */
      const seen = (re: RegExp) =>
        new Promise<RegExpExecArray>((resolve, reject) => {
          const check = () => {
            const m = re.exec(output);
            if (m) resolve(m);
          };
          child.stdout.on('data', check);
          child.stderr.on('data', check);
          void exited.then((code) => reject(new Error(`exited with ${code}:\n${output}`)));
          check();
        });

      // Each server opens once the process has logged its first failed try at it.
      for (const l of late) {
        await seen(new RegExp(`"msg":"${l.kind} at [^"]+ does not answer \\(attempt 1\\)`));
        await l.server.open();
      }
      const listening = await seen(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/);
      expect((await fetch(`http://127.0.0.1:${listening[1]}/health`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${listening[1]}/ready`)).status).toBe(200);

      const lines = output
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; service?: string; attempt?: number; msg: string });
      for (const { kind, url } of late) {
        const tries = lines.filter((l) => l.service === kind);
        expect(tries.length).toBeGreaterThanOrEqual(2);
        expect(tries.at(-1)).toMatchObject({ attempt: tries.length, msg: `${kind} at ${whereOf(url)} answers` });
        tries
          .slice(0, -1)
          .forEach((t, i) =>
            expect(t).toMatchObject({ attempt: i + 1, msg: expect.stringMatching(/ does not answer /) }),
          );
      }
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
    EXIT_TIMEOUT_MS + 5000,
  );
});

describe('a process whose database or Redis never answers', () => {
  for (const kind of ['PostgreSQL', 'Redis'] as const) {
    it(
      `${kind}: one log line per try, then one line and exit code 1, no stack trace, no password`,
      async () => {
        const port = await freePort();
        const dir = dataDir();
        const env: Record<string, string> =
          kind === 'PostgreSQL'
            ? { DATABASE_URL: `postgres://app:s3cret@127.0.0.1:${port}/app` }
            : { REDIS_URL: `redis://:s3cret@127.0.0.1:${port}` };
        const { code, output, lines } = await runToExit(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
          ...env,
          DATA_DIR: dir,
          STARTUP_TIMEOUT_S: '2',
        });
        expect(code).toBe(1);
        expect(output).not.toContain('s3cret');
        expect(output).not.toMatch(/^\s+at /m);
        const last = lines.at(-1)!;
        const variable = kind === 'PostgreSQL' ? 'DATABASE_URL' : 'REDIS_URL';
        const attempts = Number(/after 2 s \((\d+) attempts?\)/.exec(last)?.[1]);
        expect(last).toMatch(
          new RegExp(
            `^Cannot reach ${kind} at 127\\.0\\.0\\.1:${port}\\S* after 2 s \\(\\d+ attempts?\\): .+ Check ${variable} .+STARTUP_TIMEOUT_S\\.$`,
          ),
        );
        // Every line before the last is a try, as a JSON log line.
        const tries = lines.slice(0, -1).map((l) => JSON.parse(l) as { msg: string; attempt: number; service: string });
        expect(tries.map((t) => t.attempt)).toEqual(Array.from({ length: attempts - 1 }, (_, i) => i + 1));
        for (const t of tries)
          expect(t).toMatchObject({
            service: kind,
            msg: expect.stringMatching(/ does not answer \(attempt \d+\); trying again/),
          });
        // Nothing was opened: Redis is waited for before the embedded database is created.
        if (kind === 'Redis') expect(fs.readdirSync(dir).filter((f) => f !== 'secrets.json')).toEqual([]);
      },
      EXIT_TIMEOUT_MS + 5000,
    );
  }

  it(
    'npm run worker without DATABASE_URL refuses to start, saying why, and opens no embedded database',
    async () => {
      const dir = dataDir();
      const { code, output, lines } = await runToExit('npm', ['run', '--silent', 'worker'], { DATA_DIR: dir });
      expect(code).not.toBe(0);
      expect(lines.filter((l) => !/^npm (warn|error)/.test(l))).toEqual([
        expect.stringMatching(
          /^npm run worker needs DATABASE_URL \(PostgreSQL\): the embedded database belongs to the API process/,
        ),
      ]);
      expect(output).not.toMatch(/^\s+at /m);
      expect(fs.readdirSync(dir).filter((f) => f !== 'secrets.json')).toEqual([]);
    },
    EXIT_TIMEOUT_MS + 5000,
  );
});
