// The service as an operator runs it: `node --import tsx src/main.ts` on a real port with the
// embedded database in a temporary DATA_DIR. One process serves most checks; the last ones stop it
// (SIGTERM with requests in flight) and start it again on the same directory.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  post,
  type Proc,
  start,
  START_TIMEOUT_MS,
  tempDir,
  useProcesses,
  waitFor,
  waitHealthy,
  withTimeout,
} from './process-helpers.js';

useProcesses();

const PASSWORD = 'Quokka-Marmalade-4417';
const EMAIL = `proc-${Date.now().toString(36)}@example.com`;

describe('the service process', () => {
  let dataDir: string;
  let main: Proc;
  beforeAll(async () => {
    dataDir = tempDir();
    main = await start({ DATA_DIR: dataDir });
    await waitHealthy(main);
  }, START_TIMEOUT_MS + 5000);

  it('starts on the embedded database and answers /health and /ready', async () => {
    expect(await (await fetch(`${main.base}/health`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${main.base}/ready`);
    expect(ready.status).toBe(200);
    expect(fs.existsSync(path.join(dataDir, 'secrets.json'))).toBe(true);
    expect(fs.readFileSync(path.join(dataDir, 'tenantry.lock'), 'utf8')).toBe(String(main.child.pid));
  });

  it(
    'refuses a second process on the same DATA_DIR with a clear message and a non-zero exit',
    async () => {
      const second = await start({ DATA_DIR: dataDir });
      const { code } = await withTimeout(second.exited, START_TIMEOUT_MS, 'the second process to exit');
      expect(code).not.toBe(0);
      expect(code).not.toBeNull();
      const out = second.output();
      expect(out).toContain(dataDir);
      expect(out).toMatch(/already in use/i);
      expect(out).toContain(String(main.child.pid));
      expect(out).not.toMatch(/^\s+at /m); // a message, not a stack trace
      // The first process is unharmed and keeps its lock.
      expect((await fetch(`${main.base}/health`)).status).toBe(200);
      expect(fs.readFileSync(path.join(dataDir, 'tenantry.lock'), 'utf8')).toBe(String(main.child.pid));
    },
    START_TIMEOUT_MS + 5000,
  );

  it('serves interactive docs at /docs', async () => {
    const res = await fetch(`${main.base}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toMatch(/<html/i);
  });

  it('serves an OpenAPI 3.1 document covering every /api/v1 operation with success and error responses', async () => {
    const res = await fetch(`${main.base}/docs/json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<
        string,
        Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>
      >;
      components?: { schemas?: Record<string, unknown>; responses?: Record<string, unknown> };
    };
    // A response is inline or a reference to a shared one in components.responses.
    const resolve = (r: unknown): unknown => {
      const ref = (r as { $ref?: string } | undefined)?.$ref;
      return ref?.startsWith('#/components/responses/')
        ? doc.components?.responses?.[ref.slice('#/components/responses/'.length)]
        : r;
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    const paths = Object.keys(doc.paths);
    for (const p of ['/api/v1/auth/login', '/api/v1/auth/register', '/api/v1/users/me', '/health', '/ready'])
      expect(paths).toContain(p);

    // The error envelope is a named component with the fields of docs/api.md#errors.
    const errorSchema = doc.components?.schemas?.ErrorResponse as { properties?: Record<string, unknown> } | undefined;
    expect(errorSchema?.properties).toHaveProperty('success');
    expect(errorSchema?.properties).toHaveProperty('error');

    const problems: string[] = [];
    let operations = 0;
    for (const [p, item] of Object.entries(doc.paths)) {
      if (!p.startsWith('/api/v1/')) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        operations++;
        const responses = op.responses ?? {};
        const codes = Object.keys(responses);
        // A redirecting operation (the OAuth start) succeeds with a 3xx instead.
        if (!codes.some((c) => /^[23]\d\d$/.test(c))) problems.push(`${method.toUpperCase()} ${p}: no 2xx response`);
        const errorRefs = codes
          .filter((c) => /^4\d\d$/.test(c))
          .filter((c) =>
            /#\/components\/schemas\/\w*ErrorResponse"/.test(JSON.stringify(resolve(responses[c]) ?? null)),
          );
        if (errorRefs.length === 0)
          problems.push(`${method.toUpperCase()} ${p}: no 4xx response referencing ErrorResponse`);
      }
    }
    expect(operations).toBeGreaterThan(5);
    expect(problems).toEqual([]);
  });

  it('never writes a password to its log', async () => {
    const completed = () =>
      main
        .output()
        .split('\n')
        .filter((l) => l.includes('request completed')).length;
    const before = completed();
    const reg = await post(main, '/api/v1/auth/register', {
      email: EMAIL,
      password: PASSWORD,
      fullName: 'Process Test',
    });
    expect(reg.status).toBe(201);
    // Requests that fail in various ways, each carrying the password.
    expect((await post(main, '/api/v1/auth/login', { email: EMAIL, password: PASSWORD })).status).toBe(403);
    expect((await post(main, '/api/v1/auth/login', { email: 'nobody@example.com', password: PASSWORD })).status).toBe(
      401,
    );
    expect(
      (await post(main, '/api/v1/auth/register', { email: EMAIL, password: PASSWORD, extra: PASSWORD })).status,
    ).toBe(400);
    expect((await post(main, '/api/v1/auth/register', { email: EMAIL, password: PASSWORD })).status).toBe(409);
    expect((await post(main, '/api/v1/auth/password/reset', { token: 'nope', newPassword: PASSWORD })).status).toBe(
      400,
    );
    const bad = await fetch(`${main.base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"password":"${PASSWORD}"`,
    });
    expect(bad.status).toBe(400);
    // The log has caught up once it shows the end of all 7 requests above and the mail the first one sent.
    await waitFor(
      () => completed() >= before + 7 && /verify-email\?token=/.test(main.output()),
      'the log of the 7 requests and the verification mail',
    );
    const log = main.output();
    expect(log).toContain('incoming request');
    expect(log).toContain('/api/v1/auth/register');
    expect(log).not.toContain(PASSWORD);
    // The log mailer printed the verification link (docs/configuration.md#mail: no SMTP_URL).
    expect(log).toMatch(/verify-email\?token=/);
  }, 120_000);

  it('answers 404 in the envelope over real HTTP, with a request id', async () => {
    const res = await fetch(`${main.base}/api/v1/does-not-exist`);
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(await res.json()).toEqual({
      success: false,
      error: { code: 'NOT_FOUND', message: expect.any(String), details: expect.any(String) },
    });
  });

  let accessToken = '';
  it('finishes in-flight requests on SIGTERM, exits 0, releases the lock and stops listening', async () => {
    // A verified account, signed in, to check after a restart that its token still works.
    const token = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(main.output())?.[1];
    expect(token).toBeTruthy();
    expect((await post(main, '/api/v1/auth/verify-email', { token })).status).toBe(200);
    const login = await post(main, '/api/v1/auth/login', { email: EMAIL, password: PASSWORD });
    expect(login.status).toBe(200);
    accessToken = login.body.accessToken;

    // Slow requests (each hashes a password with Argon2id): wait until the server has them all.
    const count = 6;
    const seen = () =>
      main
        .output()
        .split('\n')
        .filter((l) => l.includes('incoming request') && l.includes('/api/v1/auth/register')).length;
    const before = seen();
    const inFlight = Array.from({ length: count }, (_, i) =>
      post(main, '/api/v1/auth/register', { email: `inflight-${i}-${EMAIL}`, password: PASSWORD }).then(
        (r) => r.status,
      ),
    );
    await waitFor(() => seen() >= before + count, 'the requests to reach the server');
    main.child.kill('SIGTERM');

    expect(await Promise.all(inFlight)).toEqual(Array(count).fill(201));
    // fetch keeps its connections alive: the shutdown must not wait for the client to drop them
    // (the process would give up after 25 s with exit code 1).
    const { code, signal } = await withTimeout(main.exited, 60_000, 'the process to exit after SIGTERM');
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(main.output()).toMatch(/shutting down/);
    expect(main.output()).not.toContain(PASSWORD);
    expect(fs.existsSync(path.join(dataDir, 'tenantry.lock'))).toBe(false);
    await expect(fetch(`${main.base}/health`)).rejects.toThrow();
  }, 120_000);

  it(
    'restarts on the same DATA_DIR with the same secrets and data, and takes over a lock left by a killed process',
    async () => {
      const again = await start({ DATA_DIR: dataDir });
      await waitHealthy(again);
      const me = await fetch(`${again.base}/api/v1/users/me`, { headers: { authorization: `Bearer ${accessToken}` } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { email: string }).email).toBe(EMAIL);

      // A crash leaves the lock file behind; the next start notices its owner is gone.
      again.child.kill('SIGKILL');
      await again.exited;
      expect(fs.existsSync(path.join(dataDir, 'tenantry.lock'))).toBe(true);
      const third = await start({ DATA_DIR: dataDir });
      await waitHealthy(third);
      expect(fs.readFileSync(path.join(dataDir, 'tenantry.lock'), 'utf8')).toBe(String(third.child.pid));
      expect((await post(third, '/api/v1/auth/login', { email: EMAIL, password: PASSWORD })).status).toBe(200);
      third.child.kill('SIGTERM');
      expect((await withTimeout(third.exited, 60_000, 'the third process to exit')).code).toBe(0);
    },
    3 * START_TIMEOUT_MS,
  );

  it(
    'exits non-zero with a clear message when its port is taken, leaving no lock behind',
    async () => {
      const blocker = net.createServer();
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
      try {
        const port = (blocker.address() as net.AddressInfo).port;
        const p = await start({ DATA_DIR: dataDir, PORT: String(port) });
        const { code } = await withTimeout(p.exited, START_TIMEOUT_MS, 'the process to exit');
        expect(code).not.toBe(0);
        expect(code).not.toBeNull();
        expect(p.output()).toContain(`127.0.0.1:${port}`);
        expect(p.output()).toMatch(/already in use/);
        expect(p.output()).not.toMatch(/^\s+at /m);
        expect(fs.existsSync(path.join(dataDir, 'tenantry.lock'))).toBe(false);
      } finally {
        await new Promise((r) => blocker.close(r));
      }
    },
    START_TIMEOUT_MS + 5000,
  );
});
