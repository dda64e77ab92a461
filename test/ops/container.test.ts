// The Dockerfile and compose.yaml kept honest without Docker: every file, folder and npm script they
// name exists (or is what a named script produces), every variable they set is one the
// configuration (src/config*) reads, and the commands they run start from a build laid out as the
// image lays it out, with compose's environment: the one-shot migrations, the API (until /ready) and
// the worker. PostgreSQL and Redis are the test ones when TEST_DATABASE_URL / TEST_REDIS_URL are set
// (a fresh database); otherwise the API runs on the embedded database and the worker is shown to
// refuse it, as it does.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminUrl } from '../global-setup.js';
import { freePort, ROOT, waitFor } from '../platform/process-helpers.js';

const SLOW_MS = 300_000;
const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const compose = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
interface ComposeService {
  build?: string;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
}
const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: object }).scripts;

/** Every variable name the configuration reads (src/config.ts and src/config/*.ts). */
function knownVariables(): Set<string> {
  const files = [
    path.join(ROOT, 'src/config.ts'),
    ...fs.readdirSync(path.join(ROOT, 'src/config')).map((f) => path.join(ROOT, 'src/config', f)),
  ].filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  const names = new Set<string>();
  for (const f of files) for (const m of fs.readFileSync(f, 'utf8').matchAll(/'([A-Z][A-Z0-9_]+)'/g)) names.add(m[1]!);
  return names;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

/** What the build stage produces: the folder each script writes. */
const PRODUCED_BY: Record<string, string> = { dist: 'build', 'web/dist': 'web:build' };

/** The source of a built file (dist/x.js → src/x.ts). */
const sourceOf = (file: string) => path.join(ROOT, file.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts'));

/** `${NAME:-default}` and `${NAME:?message}` as compose substitutes them from `env`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const v = env[name];
    if (v !== undefined && v !== '') return v;
    if (op === '?') throw new Error(`compose would refuse: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

describe('Dockerfile', () => {
  it('is multi-stage, runs as a non-root user and installs only the runtime packages in its last stage', () => {
    const stages = instructions.filter((l) => l.startsWith('FROM '));
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const last = instructions.slice(instructions.lastIndexOf(stages.at(-1)!));
    expect(last.some((l) => /^RUN npm ci --omit=dev\b/.test(l))).toBe(true);
    expect(last).toContain('USER node');
    expect(last.at(-1)).toBe('CMD ["node", "dist/main.js"]');
  });

  it('names files that exist, npm scripts that exist, and variables the configuration reads', () => {
    const known = knownVariables();
    for (const line of instructions) {
      const copy = /^COPY (--from=\S+ )?(.+) (\S+)$/.exec(line);
      if (copy) {
        for (const src of copy[2]!.split(/\s+/)) {
          if (copy[1]) {
            const rel = src.replace(/^\/app\//, '');
            // Copied from the build stage: a committed folder, or the output of a script the build runs.
            if (PRODUCED_BY[rel]) {
              expect(scripts).toHaveProperty([PRODUCED_BY[rel]!]);
              expect(dockerfile).toContain(`npm run ${PRODUCED_BY[rel]}`);
            } else expect(fs.existsSync(path.join(ROOT, rel)), `${rel} (${line})`).toBe(true);
          } else expect(fs.existsSync(path.join(ROOT, src)), `${src} (${line})`).toBe(true);
        }
      }
      for (const m of line.matchAll(/npm run (\S+)/g)) expect(scripts, line).toHaveProperty([m[1]!]);
      if (line.startsWith('ENV '))
        for (const m of line.slice(4).matchAll(/([A-Z_0-9]+)=/g)) expect(known, line).toContain(m[1]);
    }
    for (const m of dockerfile.matchAll(/"(dist\/[\w/.-]+\.js)"/g))
      expect(fs.existsSync(sourceOf(m[1]!)), m[1]).toBe(true);
  });
});

describe('compose.yaml', () => {
  it('has PostgreSQL, Redis, a one-shot migrate, the API and a worker, all on the image of the Dockerfile', () => {
    const { postgres, redis, migrate, api, worker } = compose.services;
    expect(postgres?.environment).toHaveProperty('POSTGRES_DB');
    expect(redis).toBeDefined();
    for (const s of [migrate, api, worker]) expect(s).toMatchObject({ build: '.', image: 'tenantry' });
    expect(migrate!.command).toEqual(['node', 'dist/db/migrate-cli.js']);
    expect(api!.command).toBeUndefined(); // the image's CMD: node dist/main.js
    expect(worker!.command).toEqual(['node', 'dist/worker.js']);
    expect(api!.depends_on?.migrate).toEqual({ condition: 'service_completed_successfully' });
    expect(worker!.depends_on?.migrate).toEqual({ condition: 'service_completed_successfully' });
    // Separate workers deliver: the API instances do not.
    expect(api!.environment?.WEBHOOK_WORKER).toBe('off');
  });

  it('sets only variables the configuration reads, and runs files the build produces', () => {
    const known = knownVariables();
    for (const name of ['migrate', 'api', 'worker']) {
      const s = compose.services[name]!;
      for (const key of Object.keys(s.environment ?? {})) expect(known, `${name}: ${key}`).toContain(key);
      for (const arg of s.command ?? [])
        if (arg.startsWith('dist/')) expect(fs.existsSync(sourceOf(arg)), arg).toBe(true);
    }
  });
});

// ---- the commands, started -------------------------------------------------------------------------

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-image-'));
/** The image's /app: dist/ built here, drizzle/ and the packages as in the repository. */
const app = path.join(work, 'app');
const children: ChildProcess[] = [];
let database: { url: string; drop(): Promise<void> } | null = null;

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await database?.drop();
  fs.rmSync(work, { recursive: true, force: true });
}, 60_000);

beforeAll(async () => {
  fs.mkdirSync(app);
  for (const entry of ['package.json', 'node_modules', 'drizzle'])
    fs.symlinkSync(path.join(ROOT, entry), path.join(app, entry));
  // `npm run build`'s compiler run, into this directory rather than the repository's dist/ (which
  // another test file builds at the same time).
  const tsc = await run(process.execPath, [
    path.join(ROOT, 'node_modules/typescript/bin/tsc'),
    '-p',
    path.join(ROOT, 'tsconfig.build.json'),
    '--outDir',
    path.join(app, 'dist'),
  ]);
  expect(tsc.code, tsc.output).toBe(0);
  expect(scripts).toHaveProperty('build', expect.stringContaining('tsc -p tsconfig.build.json'));

  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const name = `tenantry_compose_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl(url) });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    database = {
      url: adminUrl(url, name),
      async drop() {
        const c = new pg.Client({ connectionString: adminUrl(url) });
        await c.connect();
        await c.query(`drop database if exists ${name} with (force)`);
        await c.end();
      },
    };
  }
}, SLOW_MS);

function start(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, {
    cwd: app,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function run(command: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr.on('data', (b: Buffer) => (output += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}

/** Waits for /ready to answer 200; throws if the process exits first. */
async function ready(port: number, proc: ReturnType<typeof start>) {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`exited before it was ready:\n${proc.output()}`);
    const status = await fetch(`http://127.0.0.1:${port}/ready`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not ready in 120 s:\n${proc.output()}`);
}

/** A service's environment as compose would give it, with the test's .env, pointed at this machine. */
function environmentOf(service: string, port: number, dataDir: string): Record<string, string> {
  const dotEnv = {
    JWT_SECRET: 'compose-access-secret-0123456789-abcdefghijklmnop',
    JWT_REFRESH_SECRET: 'compose-refresh-secret-0123456789-abcdefghijklmnop',
    ENCRYPTION_KEY: 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100',
    SMTP_URL: 'smtp://127.0.0.1:1',
    BILLING_PROVIDER: 'test',
  };
  // The image's ENV, then the service's environment.
  const env: Record<string, string> = {};
  for (const line of instructions.filter((l) => l.startsWith('ENV ')))
    for (const m of line.slice(4).matchAll(/([A-Z_0-9]+)=(\S+)/g)) env[m[1]!] = m[2]!;
  for (const [k, v] of Object.entries(compose.services[service]!.environment ?? {}))
    env[k] = interpolate(String(v), dotEnv);
  expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
  expect(env.REDIS_URL).toBe('redis://redis:6379');
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  if (database) env.DATABASE_URL = database.url;
  if (process.env.TEST_REDIS_URL) env.REDIS_URL = process.env.TEST_REDIS_URL;
  return { ...env, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir };
}

describe("compose's commands on the build", () => {
  it(
    'migrate applies the migrations and exits 0; the API becomes ready; the worker starts on PostgreSQL (refuses the embedded database)',
    async () => {
      const dataDir = path.join(work, 'data');
      const port = await freePort();

      const migrate = start(compose.services.migrate!.command!.slice(1), environmentOf('migrate', port, dataDir));
      expect(await migrate.exited, migrate.output()).toBe(0);
      expect(migrate.output()).toMatch(/^applied 0000_init$/m);

      // The API: the image's CMD.
      const cmd = /^CMD \[(.+)\]$/
        .exec(instructions.at(-1)!)![1]!
        .split(',')
        .map((s) => JSON.parse(s.trim()) as string);
      expect(cmd[0]).toBe('node');
      const api = start(cmd.slice(1), environmentOf('api', port, dataDir));
      await ready(port, api);
      // Production logs are JSON lines, and the migrate service left nothing to apply.
      expect(api.output().split('\n')[0]).toMatch(/^\{"level":/);
      expect(api.output()).not.toMatch(/applied \d+ migration/);

      const worker = start(compose.services.worker!.command!.slice(1), {
        ...environmentOf('worker', port, dataDir),
        WORKER_METRICS_PORT: String(await freePort()),
      });
      if (database) {
        await waitFor(
          () => worker.output().includes('webhook worker started'),
          `the worker:\n${worker.output()}`,
          120_000,
        );
        worker.child.kill('SIGTERM');
        expect(await worker.exited).toBe(0);
      } else {
        expect(await worker.exited).toBe(1);
        expect(worker.output()).toContain('npm run worker needs DATABASE_URL');
      }
      api.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
    },
    SLOW_MS,
  );
});
