// The sender's timeout covers the wait for a connection (docs/api.md#deliveries): with one
// connection to an origin that never answers, an attempt queued behind another is ended by its own
// deadline while still waiting, and is never sent once the first one's connection is closed; one
// whose connection frees up with less than a tenth of its timeout left is not sent either.
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../../../../test/factories.js';
import { loadConfig } from '../../../config.js';
import { createWebhookSender } from './sender.js';

let rx: Receiver | null = null;
afterEach(async () => {
  await rx?.close();
  rx = null;
});

describe('the timeout (WEBHOOK_TIMEOUT_MS=500)', () => {
  it('also ends an attempt still waiting for a connection to its origin, which then is never sent', async () => {
    // Never answers, except the third request.
    rx = await startReceiver((req, res) => {
      if (req.body === '{"n":3}') res.writeHead(204).end();
    });
    const cfg = loadConfig({ NODE_ENV: 'test', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '500' }).webhook;
    const sender = createWebhookSender(cfg, { connectionsPerOrigin: 1 });
    try {
      const started = performance.now();
      // Both start in one tick: the second waits for the only connection, which the first holds
      // until their common deadline.
      const [first, second] = await Promise.all([
        sender.send(`${rx.url}/a`, '{"n":1}', {}),
        sender.send(`${rx.url}/b`, '{"n":2}', {}),
      ]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(450);
      for (const r of [first, second])
        expect(r).toMatchObject({ status: null, body: null, error: 'timeout after 500 ms' });
      // A third, queued after the second on that origin, is answered: the queue has moved past the
      // second, which was not written on the connection that then opened.
      expect(await sender.send(`${rx.url}/c`, '{"n":3}', {})).toMatchObject({ status: 204, error: null });
      expect(rx.received.map((r) => r.body)).toEqual(['{"n":1}', '{"n":3}']);
    } finally {
      await sender.close();
    }
  });

  it('does not write an attempt that gets its connection with less than a tenth of its timeout left', async () => {
    rx = await startReceiver((req, res) => {
      if (req.body === '{"n":3}') res.writeHead(204).end();
    });
    const cfg = loadConfig({ NODE_ENV: 'test', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '500' }).webhook;
    const sender = createWebhookSender(cfg, { connectionsPerOrigin: 1 });
    try {
      const first = sender.send(`${rx.url}/a`, '{"n":1}', {});
      // The second starts 20 ms later: when the first's connection closes at its deadline, the
      // second has about 20 ms of its 500 left, under the 50 it needs.
      await new Promise((r) => setTimeout(r, 20));
      const second = sender.send(`${rx.url}/b`, '{"n":2}', {});
      for (const r of await Promise.all([first, second]))
        expect(r).toMatchObject({ status: null, error: 'timeout after 500 ms' });
      expect(await sender.send(`${rx.url}/c`, '{"n":3}', {})).toMatchObject({ status: 204, error: null });
      expect(rx.received.map((r) => r.body)).toEqual(['{"n":1}', '{"n":3}']);
    } finally {
      await sender.close();
    }
  });
});
