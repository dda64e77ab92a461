// Backing services going away and coming back (docs/api.md#error-codes): the process
// survives, answers 503 SERVICE_UNAVAILABLE in the envelope while PostgreSQL or Redis is
// unreachable, keeps /health at 200, and recovers without a restart. PostgreSQL and Redis are put
// behind a TCP proxy this file can cut; those parts run when TEST_DATABASE_URL / TEST_REDIS_URL are set.
import net from 'node:net';
import { sql } from 'drizzle-orm';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, json, onPostgres, onRedis, type TestApp } from '../harness.js';
import { signedInUser } from '../factories.js';
import { buildApp } from '../../src/app.js';
import { type DbHandle, openPostgres } from '../../src/db/client.js';
import { createInfra, type Infra } from '../../src/infra.js';

/** A TCP proxy that can refuse new connections and cut the open ones, then come back on its port. */
class Proxy {
  private server: net.Server | null = null;
  private sockets = new Set<net.Socket>();
  port = 0;
  constructor(private target: { host: string; port: number } | null) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      this.sockets.add(client);
      client.on('error', () => {});
      client.on('close', () => this.sockets.delete(client));
      if (!this.target) return; // a black hole: accepts and never answers
      const upstream = net.connect(this.target.port, this.target.host);
      this.sockets.add(upstream);
      upstream.on('error', () => client.destroy());
      upstream.on('close', () => this.sockets.delete(upstream));
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
  }

  /** Cuts every open connection (as a server restart or failover does) and refuses new ones. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise((r) => server.close(r));
  }

  cut(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

function expectUnavailable(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(503);
  expect(json(res)).toEqual({
    success: false,
    error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), details: expect.any(String) },
  });
  expect(res.headers['retry-after']).toMatch(/^\d+$/);
}

async function eventually(fn: () => Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** An app of its own on the given database handle, with the harness app's configuration. */
async function appOn(t: TestApp, handle: DbHandle): Promise<{ app: FastifyInstance; deps: Infra }> {
  const silent = pino({ level: 'silent' });
  const deps = await createInfra(t.deps.config, {
    logger: silent,
    dbHandle: handle,
    migrate: false,
    redisPrefix: `${t.deps.redisPrefix}outage:`,
  });
  const app = await buildApp(deps);
  await app.ready();
  cleanups.push(async () => {
    await app.close();
    await deps.close();
  });
  return { app, deps };
}

describe('a PostgreSQL server that accepts connections but never answers', () => {
  it('answers 503 once the connection attempt times out, and /health stays 200', async () => {
    const t = await createTestApp();
    cleanups.push(() => t.close());
    const hole = new Proxy(null);
    await hole.start();
    cleanups.push(() => hole.stop());
    const handle = openPostgres(`postgres://postgres@127.0.0.1:${hole.port}/none`, pino({ level: 'silent' }), 2);
    const { app } = await appOn(t, handle);
    const started = Date.now();
    expectUnavailable(
      await app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: 'a@example.com', password: 'Correct-Horse-9' },
      }),
    );
    expect(Date.now() - started).toBeLessThan(30_000);
    expectUnavailable(await app.inject({ method: 'GET', url: '/ready' }));
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  }, 60_000);
});

if (onPostgres) {
  describe('PostgreSQL going away and coming back', () => {
    it('survives connections cut mid-transaction, answers 503 while down and recovers without a restart', async () => {
      const t = await createTestApp();
      cleanups.push(() => t.close());
      const user = await signedInUser(t, 'outage');
      const target = new URL(t.database.url!);
      const proxy = new Proxy({ host: target.hostname, port: Number(target.port || 5432) });
      await proxy.start();
      cleanups.push(() => proxy.stop());
      const viaProxy = new URL(t.database.url!);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      // What the pool logs: a lost connection is seen here, so the test waits for it rather than a while.
      const warnings: string[] = [];
      const handle = openPostgres(
        viaProxy.toString(),
        pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) }),
        3,
      );
      const { app } = await appOn(t, handle);
      const login = () =>
        app.inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email: user.email, password: user.password },
        });

      expect((await login()).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);

      // A client checked out for a transaction loses its server between two statements: the
      // client's 'error' event must not go unhandled (it would kill the process).
      const tx = handle.db.transaction(async (trx) => {
        await trx.execute(sql`select 1`);
        proxy.cut();
        await eventually(
          async () => warnings.some((w) => w.includes('database connection lost (client in use)')),
          'the client in use to see its connection lost',
        );
        await trx.execute(sql`select 1`);
      });
      await expect(tx).rejects.toThrow();

      // Idle pooled clients lose their server too.
      proxy.cut();
      await eventually(async () => handle.pool!.idleCount === 0, 'the pool to drop its idle clients');

      await proxy.stop();
      expectUnavailable(await login());
      expectUnavailable(await app.inject({ method: 'GET', url: '/ready' }));
      expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);

      await proxy.start();
      await eventually(
        async () => (await app.inject({ method: 'GET', url: '/ready' })).statusCode === 200,
        '/ready to recover',
      );
      expect((await login()).statusCode).toBe(200);
    }, 90_000);
  });
}

if (onRedis) {
  describe('Redis going away and coming back', () => {
    it('answers 503 on /api/v1 while Redis is unreachable and recovers without a restart', async () => {
      const target = new URL(process.env.TEST_REDIS_URL!);
      const proxy = new Proxy({ host: target.hostname, port: Number(target.port || 6379) });
      await proxy.start();
      cleanups.push(() => proxy.stop());
      const viaProxy = new URL(process.env.TEST_REDIS_URL!);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      const t = await createTestApp({ env: { REDIS_URL: viaProxy.toString() } });
      cleanups.push(() => t.close());
      const user = await signedInUser(t, 'redis-outage');
      const me = () => t.request({ method: 'GET', url: '/api/v1/users/me', headers: user.auth });
      expect((await me()).statusCode).toBe(200);

      await proxy.stop();
      expectUnavailable(await me());
      expectUnavailable(
        await t.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email: user.email, password: user.password },
        }),
      );
      expect((await t.request({ method: 'GET', url: '/health' })).statusCode).toBe(200);

      await proxy.start();
      await eventually(async () => (await me()).statusCode === 200, 'requests to succeed again', 30_000);
    }, 120_000);
  });
}
