// The attempt timeout: a receiver that never answers fails the attempt after WEBHOOK_TIMEOUT_MS
// (500 ms here, on its own app) with a timeout error, and the retry delivers once it answers.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptRows, createOrg, createWebhook, deliveryRows, signedInUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { workerFixtures } from '../../../test/fixtures/worker.js';
import { createDeliveryWorker, type DeliveryWorker } from './worker/index.js';

const fx = workerFixtures(() => slowApp);
const { receiver } = fx;
const answer =
  (status: number, body = '') =>
  (_req: unknown, res: ServerResponse) =>
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
let slowApp: TestApp;
afterAll(async () => {
  await fx.stopAll();
});

describe('timeout (WEBHOOK_TIMEOUT_MS=500)', () => {
  let slowWorker: DeliveryWorker;
  beforeAll(async () => {
    slowApp = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '500' } });
    slowWorker = createDeliveryWorker(slowApp.deps, { pollMs: 50 });
    await slowWorker.start();
  });
  afterAll(async () => {
    await slowWorker?.stop();
    await slowApp?.close();
  });

  it('a receiver that never answers fails the attempt with a timeout error; it is retried later', async () => {
    const rx = await receiver(() => {
      // Never answers.
    });
    const user = await signedInUser(slowApp, 'timeout');
    const org = await createOrg(slowApp, user);
    const hook = await createWebhook(slowApp, org.id, user, { url: rx.url });
    const started = Date.now();
    const res = await slowApp.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: user.auth,
      payload: { name: 'slow' },
    });
    expect(res.statusCode).toBe(201);
    await slowWorker.drain(60_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(rx.received).toHaveLength(1);
    const [d] = await deliveryRows(slowApp, hook.id);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, response_status: null, delivered_at: null });
    expect(d!.last_error).toMatch(/timeout/i);
    const [a] = await attemptRows(slowApp, d!.id);
    expect(a!.error).toMatch(/timeout/i);
    expect(a!.duration_ms).toBeGreaterThanOrEqual(450);

    // Answering in time on the retry delivers.
    rx.handler = answer(204);
    slowApp.clock.advance(60_000);
    slowWorker.wake();
    await slowWorker.drain(60_000);
    const [done] = await deliveryRows(slowApp, hook.id);
    expect(done).toMatchObject({ status: 'delivered', attempts: 2 });
  });
});
