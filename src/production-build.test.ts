// The production build as an operator runs it: `npm run build` once (tsc to dist/), an account made
// with `npm run admin -- create-user`, then `node dist/main.js` in production mode reached over HTTP
// (/health, a sign-in, /metrics behind METRICS_TOKEN) and ended by SIGTERM with exit code 0; and
// `npm start` and `npm run start:prod` started through npm, whose SIGTERM reaches the server.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// A build, or tsx's start, can take a minute or more on a loaded machine.
const SLOW_MS = 240_000;

const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_SECRET: 'build-access-secret-0123456789-abcdefghijklmnop',
  JWT_REFRESH_SECRET: 'build-refresh-secret-0123456789-abcdefghijklmnop',
  ENCRYPTION_KEY: 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100',
  APP_ORIGIN: 'https://app.example.com',
  PUBLIC_API_URL: 'https://api.example.com',
  // Never reached: nothing here sends a mail.
  SMTP_URL: 'smtp://127.0.0.1:1',
  BILLING_PROVIDER: 'test',
  METRICS_TOKEN: 'metrics-token-for-the-build-test-0123',
  LOG_LEVEL: 'info',
};

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-build-'));
  dirs.push(dir);
  return dir;
}

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(command: string, args: string[], env: Record<string, string>, input?: string): Running {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  child.stdin!.end(input ?? '');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function runToEnd(command: string, args: string[], env: Record<string, string>, input?: string) {
  const r = start(command, args, env, input);
  const code = await r.exited;
  // What the command printed for its operator: not npm's notices, not the JSON log (a production
  // warning such as BILLING_PROVIDER=test's goes there).
  const lines = r
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^npm (warn|error|notice)/.test(l) && !l.startsWith('{"level":'));
  return { code, output: r.output(), lines };
}

/** The port the server logged it listens on; rejects if it exits first. */
async function listening(r: Running): Promise<number> {
  const found = () => /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(r.output());
  return new Promise<number>((resolve, reject) => {
    const check = () => {
      const m = found();
      if (m) {
        r.child.stdout!.off('data', check);
        resolve(Number(m[1]));
      }
    };
    r.child.stdout!.on('data', check);
    void r.exited.then((code) => reject(new Error(`exited with ${code} before listening:\n${r.output()}`)));
    check();
  });
}

beforeAll(async () => {
  const { code, output } = await runToEnd('npm', ['run', 'build'], {});
  expect(code, output).toBe(0);
}, SLOW_MS);

describe('the production build', () => {
  it('dist/ holds JavaScript only: main, worker and admin, no tests', () => {
    for (const entry of ['main.js', 'worker.js', 'admin.js'])
      expect(fs.existsSync(path.join(ROOT, 'dist', entry))).toBe(true);
    const files = fs.readdirSync(path.join(ROOT, 'dist'), { recursive: true }).map(String);
    expect(files.filter((f) => f.endsWith('.ts') || f.includes('.test.'))).toEqual([]);
  });

  it(
    'an account made with npm run admin -- create-user signs in on node dist/main.js; /metrics behind METRICS_TOKEN counts it; SIGTERM exits 0',
    async () => {
      const dataDir = tempDir();
      const env = { ...PRODUCTION, DATA_DIR: dataDir };

      const wrong = await runToEnd('npm', ['run', '--silent', 'admin', '--', 'frobnicate'], env);
      expect(wrong.code).toBe(2);
      expect(wrong.lines).toEqual([
        expect.stringMatching(/^unknown command "frobnicate"\. Usage: npm run admin -- <create-user\|/),
      ]);

      // The password from standard input, as a script would pipe it.
      const made = await runToEnd(
        'npm',
        ['run', '--silent', 'admin', '--', 'create-user', '--email', 'Ops@Example.com', '--verified'],
        env,
        'Operator-Password-1\n',
      );
      expect(made.code, made.output).toBe(0);
      expect(made.lines).toEqual([expect.stringMatching(/^created usr_\S+ \(ops@example\.com\), email verified$/)]);

      const server = start(process.execPath, ['dist/main.js'], env);
      const base = `http://127.0.0.1:${await listening(server)}`;
      expect(server.output()).not.toMatch(/tsx/);

      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(200);
      const login = await fetch(`${base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ops@example.com', password: 'Operator-Password-1' }),
      });
      expect(login.status).toBe(200);
      const body = (await login.json()) as { accessToken: string; user: { email: string } };
      expect(body.user.email).toBe('ops@example.com');
      expect(
        (await fetch(`${base}/api/v1/users/me`, { headers: { authorization: `Bearer ${body.accessToken}` } })).status,
      ).toBe(200);

      expect((await fetch(`${base}/metrics`)).status).toBe(401);
      const metrics = await fetch(`${base}/metrics`, {
        headers: { authorization: `Bearer ${PRODUCTION.METRICS_TOKEN}` },
      });
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{route="\/api\/v1\/auth\/login",method="POST",status="200"\} 1$/m,
      );
      expect(text).toMatch(/^http_request_duration_seconds_count\{route="\/health",method="GET",status="200"\} 1$/m);
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{route="\/api\/v1\/users\/me",method="GET",status="200"\} 1$/m,
      );
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{route="\/api\/v1\/users\/me",method="GET",status="200"\} 1$/m,
      );
      for (const family of [
        'tenantry_webhook_deliveries_total',
        'tenantry_webhook_queue_depth',
        'tenantry_webhook_oldest_pending_seconds',
        'tenantry_password_hash_queue_depth',
        'process_resident_memory_bytes',
      ]) {
        expect(text).toMatch(new RegExp(`^# TYPE ${family} `, 'm'));
      }

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      expect(server.output()).toContain('shutting down');
    },
    SLOW_MS,
  );

  it.each(['start', 'start:prod'])(
    'npm run %s, started through npm: SIGTERM to npm reaches the server, which closes and exits 0',
    async (script) => {
      const npm = start('npm', ['run', script], { DATA_DIR: tempDir() });
      const port = await listening(npm);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      npm.child.kill('SIGTERM');
      expect(await npm.exited).toBe(0);
      expect(npm.output()).toMatch(/"signal":"SIGTERM","msg":"shutting down/);
      // The server went with it: nothing answers on its port.
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    },
    SLOW_MS,
  );
});
