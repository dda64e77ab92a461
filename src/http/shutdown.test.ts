// Graceful close on a real socket: a request in flight when close starts is answered, with
// `Connection: close` so a keep-alive client lets go, and close then ends without waiting for the
// client. A request pipelined behind it is served too, not answered outside the error envelope.
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/harness.js';
import { buildApp } from '../app.js';
import { createInfra, type Infra } from '../infra.js';

let t: TestApp;
let deps: Infra;
let app: FastifyInstance;
let release: () => void = () => {};
let entered: Promise<void>;
let signalEntered: () => void = () => {};

beforeAll(async () => {
  t = await createTestApp();
  const silent = pino({ level: 'silent' });
  deps = await createInfra(t.deps.config, {
    logger: silent,
    dbHandle: t.database.handle,
    migrate: false,
    redisPrefix: `${t.deps.redisPrefix}close:`,
  });
  app = await buildApp(deps);
  entered = new Promise((r) => (signalEntered = r));
  const gate = new Promise<void>((r) => (release = r));
  app.get('/test/slow', async () => {
    signalEntered();
    await gate;
    return { done: true };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  release();
  await app?.close();
  await deps?.sessions.close();
  deps?.redis?.disconnect();
  await t?.close();
});

describe('closing the app', () => {
  it('answers the request in flight and a pipelined one, closes the connection, and finishes', async () => {
    const { port } = app.server.address() as net.AddressInfo;
    const accepted = new Promise<net.Socket>((r) => app.server.once('connection', r));
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', r));
    let raw = '';
    socket.on('data', (b) => (raw += b.toString()));
    const ended = new Promise<void>((r) => socket.once('close', () => r()));

    socket.write('GET /test/slow HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    await entered;
    const closed = app.close();
    // Sent on the kept-alive connection after close began.
    socket.write('GET /api/v1/nope HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    // The server has read both requests (what it does with the second is what is checked) before the
    // first is released.
    const server = await accepted;
    const deadline = Date.now() + 5000;
    while (server.bytesRead < socket.bytesWritten && !server.destroyed) {
      if (Date.now() > deadline) throw new Error(`the server read ${server.bytesRead} of ${socket.bytesWritten} bytes`);
      await new Promise((r) => setTimeout(r, 5));
    }
    release();

    await Promise.race([
      closed,
      new Promise((_, reject) => setTimeout(() => reject(new Error('app.close() did not finish')), 5000)),
    ]);
    await Promise.race([
      ended,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the server kept the socket open')), 5000)),
    ]);

    const responses = raw.split(/(?=HTTP\/1\.1 )/);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(responses[0]).toMatch(/\r\nconnection: close\r\n/i);
    expect(responses[0]).toContain('{"done":true}');
    // The pipelined request was either never read (the socket closed after the first answer) or
    // answered in the envelope: never Fastify's own 503 body.
    if (responses[1] !== undefined) {
      expect(responses[1]).toMatch(/^HTTP\/1\.1 404 /);
      expect(responses[1]).toContain('"success":false');
    }
    expect(raw).not.toContain('"statusCode":503');
  });
});
