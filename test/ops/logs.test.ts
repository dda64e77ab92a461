// What the logs say. LOG_FORMAT=pretty (the development default at a terminal): readable start-up
// progress, the start line with http://localhost:PORT, one line per request, a mail printed as a
// block with its link, no JSON. In every format: no line for health probes, /metrics and static
// files; a warn line per failed webhook attempt. And the test-checkout warning is the API's alone.
import type { ServerResponse } from 'node:http';
import { spawn } from 'node:child_process';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prettyLine } from '../../src/lib/pretty-log.js';
import type { DeliveryWorker } from '../../src/modules/webhooks/worker/index.js';
import { createOrg, createWebhook, signedInUser } from '../factories.js';
import { createTestApp, type TestApp } from '../harness.js';
import { workerFixtures } from '../fixtures/worker.js';
import {
  freePort,
  post,
  ROOT,
  start,
  START_TIMEOUT_MS,
  tempDir,
  useProcesses,
  waitFor,
  waitHealthy,
} from '../platform/process-helpers.js';

useProcesses();

describe('LOG_FORMAT=pretty, the service started as a developer starts it', () => {
  it(
    'says what the start is doing, prints http://localhost:PORT, one line per request, none for probes and files, mails as a block with the link',
    async () => {
      const port = await freePort();
      const dir = tempDir();
      const p = await start({ LOG_FORMAT: 'pretty', DATA_DIR: dir, PORT: String(port) });
      await waitHealthy(p);
      await waitFor(() => p.output().includes('Tenantry API on'), 'the start line', START_TIMEOUT_MS);
      const startup = p.output();
      expect(startup).toContain(`opening the embedded database in ${dir}`);
      expect(startup).toMatch(/applying \d+ migration\(s\): 0000_init … \d{4}_\w+/);
      expect(startup).toMatch(/applied \d+ migration\(s\)/);
      expect(startup).toContain(`Tenantry API on http://localhost:${port} (docs at /docs)`);
      expect(startup).not.toContain(`http://127.0.0.1:${port}`);
      expect(startup).not.toMatch(/^\{"level"/m);

      const from = p.output().length;
      for (const probe of [
        '/health',
        '/ready',
        '/metrics',
        '/favicon.ico',
        '/assets/app-1234.js',
        '/docs/static/index.css',
      ])
        await fetch(`${p.base}${probe}`).then((r) => r.arrayBuffer());
      const missing = await fetch(`${p.base}/api/v1/nothing-here?token=live-secret-123&page=2`);
      expect(missing.status).toBe(404);
      const reg = await post(p, '/api/v1/auth/register', {
        email: 'pretty-log@example.com',
        password: 'Correct-Horse-9',
        fullName: 'Ada',
      });
      expect(reg.status).toBe(201);
      await waitFor(() => p.output().includes('/verify-email?token='), 'the mail');
      const lines = p.output().slice(from).split('\n');

      expect(lines.filter((l) => /(?:GET|POST) \//.test(l))).toEqual([
        expect.stringMatching(
          /^\d\d:\d\d:\d\d INFO {2}GET \/api\/v1\/nothing-here\?token=\[redacted\]&page=2 404 \d+ ms$/,
        ),
        expect.stringMatching(/^\d\d:\d\d:\d\d INFO {2}POST \/api\/v1\/auth\/register 201 \d+ ms$/),
      ]);
      expect(p.output()).not.toContain('live-secret-123');
      const mail = lines.findIndex((l) => l.includes('mail to pretty-log@example.com: Verify your email'));
      expect(mail).toBeGreaterThan(-1);
      expect(lines.slice(mail + 1).find((l) => l.includes('/verify-email?token='))).toMatch(
        /^ +│ .*http:\/\/localhost:\d+\/verify-email\?token=[\w-]+/,
      );
      expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
    },
    START_TIMEOUT_MS + 60_000,
  );
});

describe('the test checkout warning', () => {
  const production = (dataDir: string) => ({
    NODE_ENV: 'production',
    JWT_SECRET: 'logs-access-secret-0123456789-abcdefghijklmnop',
    JWT_REFRESH_SECRET: 'logs-refresh-secret-0123456789-abcdefghijklmnop',
    ENCRYPTION_KEY: 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100',
    APP_ORIGIN: 'https://app.example.com',
    PUBLIC_API_URL: 'https://api.example.com',
    SMTP_URL: 'smtp://127.0.0.1:1',
    BILLING_PROVIDER: 'test',
    DATA_DIR: dataDir,
  });

  it(
    'is printed by the API, not by an admin command on the same configuration',
    async () => {
      const env = production(tempDir());
      const api = await start(env);
      await waitHealthy(api);
      expect(api.output()).toContain('BILLING_PROVIDER=test: the built-in test checkout is served');
      api.child.kill('SIGTERM');
      await api.exited;

      const admin = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/admin.ts', 'verify-user', '--email', 'no@example.com'],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      admin.stdout.on('data', (b: Buffer) => (out += b.toString()));
      admin.stderr.on('data', (b: Buffer) => (out += b.toString()));
      const code = await new Promise<number | null>((resolve) => admin.once('exit', resolve));
      // It ran (the account does not exist), and said nothing of the checkout.
      expect(code, out).toBe(1);
      expect(out).toMatch(/no@example\.com/);
      expect(out).not.toContain('BILLING_PROVIDER=test');
    },
    START_TIMEOUT_MS + 60_000,
  );
});

describe('in JSON (the production format)', () => {
  let t: TestApp;
  let worker: DeliveryWorker;
  const lines: Array<Record<string, unknown>> = [];
  const fx = workerFixtures(() => t);
  beforeAll(async () => {
    t = await createTestApp({
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS: '60' },
      logTo: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    worker = fx.worker();
    await worker.start();
  });
  afterAll(async () => {
    await fx.stopAll();
    await t?.close();
  });

  it('health probes, /metrics and static files write no line; a page and an API call write theirs', async () => {
    const from = lines.length;
    for (const url of ['/health', '/ready', '/metrics', '/assets/app-1234.js', '/favicon.ico'])
      await t.request({ method: 'GET', url });
    await t.request({ method: 'GET', url: '/sign-in', headers: { accept: 'text/html' } });
    await t.request({ method: 'GET', url: '/api/v1/nothing-here' });
    const urls = lines.slice(from).map((l) => [l.msg, (l.req as { url?: string } | undefined)?.url]);
    expect(urls).toEqual([
      ['incoming request', '/sign-in'],
      ['request completed', '/sign-in'],
      ['incoming request', '/api/v1/nothing-here'],
      ['request completed', '/api/v1/nothing-here'],
    ]);
  });

  it('a failed webhook attempt writes one warn line: endpoint, status or error, attempt, what follows', async () => {
    const rx = await fx.receiver((_req: unknown, res: ServerResponse) => res.writeHead(503).end());
    const owner = await signedInUser(t, 'log-hooks');
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: `${rx.url}?sig=abc` });
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: owner.auth,
      payload: { name: 'P' },
    });
    expect(res.statusCode, res.body).toBe(201);
    await worker.drain(60_000);
    t.clock.advance(60_000);
    worker.wake();
    await worker.drain(60_000);
    const warned = lines.filter((l) => l.endpointId === hook.id && l.level === 40);
    const url = rx.url.replace(/\?.*$/, '');
    expect(warned).toEqual([
      expect.objectContaining({ attempt: 1, status: 503, next: 'pending', url }),
      expect.objectContaining({ attempt: 2, status: 503, next: 'failed', url }),
    ]);
    expect(warned[0]!.msg).toMatch(new RegExp(`^webhook attempt 1 to ${url} failed \\(HTTP 503\\); retry at `));
    expect(warned[1]!.msg).toBe(`webhook attempt 2 to ${url} failed (HTTP 503); no retry left: failed`);
    expect(JSON.stringify(warned)).not.toContain('sig=abc');
  });
});

describe('prettyLine', () => {
  it('prints an error with its stack and other fields as key=value', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 50,
        time: 0,
        msg: 'boom',
        endpointId: 'wh_1',
        note: 'two words',
        err: { message: 'x', stack: 'Error: x\n    at f' },
      }),
    );
    expect(line).toMatch(/^\d\d:\d\d:\d\d ERROR boom endpointId=wh_1 note="two words"\n {4}Error: x\n {8}at f\n$/);
  });
});
