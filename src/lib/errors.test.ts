// The error model of docs/api.md#errors, docs/api.md#error-codes through HTTP: every failure answers the one envelope
// {success: false, error: {code, message, details}} with the status the decision names.
import fs from 'node:fs';
import net from 'node:net';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { json } from '../../test/harness.js';
import { t, useApp } from '../../test/fixtures/app.js';
import { signedInUser } from '../../test/factories.js';
import { buildApp } from '../app.js';
import { openPglite, openPostgres } from '../db/client.js';
import { createInfra, type Infra } from '../infra.js';

useApp();

/** The envelope, exactly: no other top-level or error fields, details a string. */
function expectEnvelope(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = json(res);
  expect(Object.keys(body).sort()).toEqual(['error', 'success']);
  expect(body.success).toBe(false);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(typeof body.error.details).toBe('string');
  return body.error as { code: string; message: string; details: string };
}

const register = (payload: unknown, headers: Record<string, string> = {}) =>
  t.request({
    method: 'POST',
    url: '/api/v1/auth/register',
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

describe('request bodies', () => {
  it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
    for (const raw of ['{"email": "a@example.com",', '{email: 1}', 'nul', '{"a":1}}']) {
      const err = expectEnvelope(await register(raw), 400, 'VALIDATION_ERROR');
      expect(err.details.toLowerCase()).toContain('json');
    }
  });

  it('refuses an unknown body field and names it', async () => {
    const err = expectEnvelope(
      await register({ email: 'x@example.com', password: 'Correct-Horse-9', isAdmin: true }),
      400,
      'VALIDATION_ERROR',
    );
    expect(err.details).toContain('isAdmin');
  });

  it('refuses an unknown nested field and names its path', async () => {
    const u = await signedInUser(t, 'nested');
    const res = await t.request({
      method: 'PATCH',
      url: '/api/v1/users/me',
      headers: u.auth,
      payload: { preferences: { theme: 'dark', colour: 'red' } },
    });
    const err = expectEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(err.details).toContain('preferences.colour');
  });

  it('refuses a wrong type and names the field', async () => {
    const err = expectEnvelope(await register({ email: 123, password: 'Correct-Horse-9' }), 400, 'VALIDATION_ERROR');
    expect(err.details).toContain('email');
  });

  it('does not coerce body values from one type to another', async () => {
    // A number where a string is expected, and strings where a boolean is expected, are refused as sent.
    let err = expectEnvelope(
      await register({ email: 'coerce@example.com', password: 12345678901 }),
      400,
      'VALIDATION_ERROR',
    );
    expect(err.details).toContain('password');
    err = expectEnvelope(
      await register({ email: 'coerce@example.com', password: 'Correct-Horse-9', fullName: 123 }),
      400,
      'VALIDATION_ERROR',
    );
    expect(err.details).toContain('fullName');

    const u = await signedInUser(t, 'coerce');
    for (const value of ['true', 1, 'false', 0, null]) {
      const res = await t.request({
        method: 'PATCH',
        url: '/api/v1/users/me',
        headers: u.auth,
        payload: { preferences: { notifications: { email: value } } },
      });
      err = expectEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(err.details).toContain('preferences.notifications.email');
    }
    // Nothing was stored by the refused requests.
    const me = await t.request({ method: 'GET', url: '/api/v1/users/me', headers: u.auth });
    expect(json(me).preferences.notifications.email).toEqual(expect.any(Boolean));
    const before = json(me).preferences.notifications.email;
    await t.request({
      method: 'PATCH',
      url: '/api/v1/users/me',
      headers: u.auth,
      payload: { preferences: { notifications: { email: String(!before) } } },
    });
    expect(
      json(await t.request({ method: 'GET', url: '/api/v1/users/me', headers: u.auth })).preferences.notifications
        .email,
    ).toBe(before);
  });

  it('refuses a missing required field and names it', async () => {
    let err = expectEnvelope(await register({ email: 'missing@example.com' }), 400, 'VALIDATION_ERROR');
    expect(err.details).toContain('password');
    err = expectEnvelope(await register({ password: 'Correct-Horse-9' }), 400, 'VALIDATION_ERROR');
    expect(err.details).toContain('email');
  });

  it('refuses a body that is not an object', async () => {
    for (const raw of ['[]', '"text"', '42', 'null']) {
      expectEnvelope(await register(raw), 400, 'VALIDATION_ERROR');
    }
  });

  it('answers a body over 1 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify({
      email: 'big@example.com',
      password: 'Correct-Horse-9',
      fullName: 'x'.repeat(1024 * 1024),
    });
    expectEnvelope(await register(big), 413, 'PAYLOAD_TOO_LARGE');
    // Just under the limit is parsed (and then refused by the schema, not by size).
    const under = JSON.stringify({
      email: 'big@example.com',
      password: 'Correct-Horse-9',
      fullName: 'x'.repeat(1024 * 1024 - 100),
    });
    expect(Buffer.byteLength(under)).toBeLessThanOrEqual(1024 * 1024);
    expectEnvelope(await register(under), 400, 'VALIDATION_ERROR');
  });

  it('answers a non-JSON content type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ]) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/auth/register',
        headers: { 'content-type': type },
        payload: 'email=a@example.com&password=x',
      });
      expectEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('accepts JSON with a charset parameter', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/resend-verification',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ email: 'nobody@example.com' }),
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('answers an empty body sent as JSON with 400', async () => {
    expectEnvelope(await register(''), 400, 'VALIDATION_ERROR');
  });

  it('answers a missing body on a route that needs one with 400 naming the body', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/register' });
    expectEnvelope(res, 400, 'VALIDATION_ERROR');
  });
});

describe('unknown routes', () => {
  it('answers 404 NOT_FOUND in the envelope under /api/v1 and outside', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/nope'],
      ['POST', '/api/v1/auth/nope'],
      ['DELETE', '/api/v1/users/me/nope/deeper'],
      ['GET', '/nope'],
      ['GET', '/api/v2/users/me'],
      ['PUT', '/health'],
    ] as const) {
      const res = await t.request({ method, url });
      const err = expectEnvelope(res, 404, 'NOT_FOUND');
      expect(err.details).toContain(url);
    }
  });

  it('answers a path that is not valid percent-encoding, or an over-long path parameter, in the envelope', async () => {
    for (const url of [
      '/api/v1/users/me/sessions/%zz',
      '/api/v1/users/%E0%A4%A',
      `/api/v1/users/me/sessions/${'a'.repeat(300)}`,
    ]) {
      const res = await t.request({ method: 'DELETE', url });
      expectEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    }
  });

  it('does not echo the query string of an unknown route', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/nope?token=secret-value' });
    expect(expectEnvelope(res, 404, 'NOT_FOUND').details).not.toContain('secret-value');
  });
});

describe('request ids', () => {
  it('answers every response with an x-request-id, keeping a sane incoming one', async () => {
    const a = await t.request({ method: 'GET', url: '/health' });
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const b = await t.request({ method: 'GET', url: '/api/v1/nope', headers: { 'x-request-id': 'trace-123' } });
    expect(b.headers['x-request-id']).toBe('trace-123');
    const c = await t.request({
      method: 'GET',
      url: '/api/v1/nope',
      headers: { 'x-request-id': 'bad id\twith spaces' },
    });
    expect(c.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

/** An app of our own on the test file's database, so a test route can be added before ready. */
async function ownApp(deps: Infra, extra?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = await buildApp(deps);
  extra?.(app);
  await app.ready();
  return app;
}

describe('unexpected errors', () => {
  let app: FastifyInstance;
  let deps: Infra;
  const logged: string[] = [];
  beforeAll(async () => {
    const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push(line) });
    deps = await createInfra(t.deps.config, {
      logger,
      dbHandle: t.database.handle,
      migrate: false,
      redisPrefix: `${t.deps.redisPrefix}own:`,
    });
    app = await ownApp(deps, (a) => {
      a.get('/api/v1/test/boom', { config: { auth: 'none' } }, async () => {
        throw new Error('relation "x" does not exist: SELECT secret FROM x WHERE id = $1');
      });
      a.get('/test/boom-outside', async () => {
        const err = new Error('SELECT secret FROM x') as Error & { statusCode: number };
        err.statusCode = 500;
        throw err;
      });
    });
  });
  afterAll(async () => {
    await app?.close();
    await deps?.sessions.close();
    deps?.redis?.disconnect();
  });

  it('answers 500 INTERNAL_ERROR without stack, SQL or message internals', async () => {
    for (const url of ['/api/v1/test/boom', '/test/boom-outside']) {
      const res = await app.inject({ method: 'GET', url });
      const err = expectEnvelope(res, 500, 'INTERNAL_ERROR');
      expect(res.body).not.toMatch(/SELECT|secret|relation|stack|at .*\.ts|Error:/i);
      const id = res.headers['x-request-id'];
      expect(id).toEqual(expect.any(String));
      // The reference in the body is the request id, so the log line can be found.
      expect(err.details).toContain(String(id));
      expect(logged.some((l) => l.includes(String(id)) && l.includes('SELECT secret FROM x'))).toBe(true);
    }
  });
});

async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('the database going away', () => {
  async function expectUnavailable(app: FastifyInstance) {
    const login = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'gone@example.com', password: 'Correct-Horse-9' },
    });
    expectEnvelope(login, 503, 'SERVICE_UNAVAILABLE');
    expect(login.headers['retry-after']).toMatch(/^\d+$/);
    expect(login.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|closed/i);
    const ready = await app.inject({ method: 'GET', url: '/ready' });
    expectEnvelope(ready, 503, 'SERVICE_UNAVAILABLE');
    const health = await app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(json(health)).toEqual({ status: 'ok' });
  }

  it('answers /ready 200 while the database answers', async () => {
    const res = await t.request({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ status: 'ready' });
  });

  it('answers 503 SERVICE_UNAVAILABLE when PostgreSQL is unreachable, and /ready 503 while /health stays 200', async () => {
    const silent = pino({ level: 'silent' });
    const handle = openPostgres(`postgres://postgres@127.0.0.1:${await closedPort()}/none`, silent, 2);
    const deps = await createInfra(t.deps.config, {
      logger: silent,
      dbHandle: handle,
      migrate: false,
      redisPrefix: `${t.deps.redisPrefix}pg-gone:`,
    });
    const app = await ownApp(deps);
    try {
      await expectUnavailable(app);
    } finally {
      await app.close();
      await deps.close();
    }
  });

  it('answers 503 when the embedded database has been closed', async () => {
    const silent = pino({ level: 'silent' });
    const handle = await openPglite({ loadDataDir: new Blob([fs.readFileSync(inject('pgliteTemplate'))]) });
    const deps = await createInfra(t.deps.config, {
      logger: silent,
      dbHandle: handle,
      migrate: false,
      redisPrefix: `${t.deps.redisPrefix}pglite-gone:`,
    });
    const app = await ownApp(deps);
    try {
      await handle.close();
      await expectUnavailable(app);
    } finally {
      await app.close();
      await deps.sessions.close();
      deps.redis?.disconnect();
    }
  });
});
