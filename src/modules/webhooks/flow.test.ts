import http from 'node:http';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { createDeliveryWorker, type DeliveryWorker } from './worker/index.js';

let t: TestApp;
let worker: DeliveryWorker;
let server: http.Server;
const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
  worker = createDeliveryWorker(t.deps, { pollMs: 50 });
  await worker.start();
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
  server?.close();
});

describe('webhook delivery happy path', () => {
  it('signs a project.created event that Stripe’s verifier accepts', async () => {
    const owner = await signedInUser(t, 'hooks');
    const org = json(
      await t.request({
        method: 'POST',
        url: '/api/v1/organizations',
        headers: owner.auth,
        payload: { name: 'Hooks', slug: `hooks-${Date.now()}` },
      }),
    );
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    const created = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks`,
      headers: owner.auth,
      payload: { url, events: ['project.created'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { secret, id } = json(created).data;
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);

    await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: owner.auth,
      payload: { name: 'P' },
    });
    await worker.drain();
    expect(received).toHaveLength(1);
    const got = received[0]!;
    // The signature's t comes from the app's (fake) clock: verify at that time, with Stripe's 300 s tolerance.
    const now = Math.floor(t.clock.now().getTime() / 1000);
    const stripe = new Stripe('sk_test_x');
    const event = stripe.webhooks.constructEvent(
      got.body,
      got.headers['x-webhook-signature'] as string,
      secret,
      300,
      undefined,
      now,
    ) as unknown as Record<string, unknown>;
    expect(event).toMatchObject({ type: 'project.created', data: { name: 'P', organizationId: org.id } });
    expect(got.headers['user-agent']).toBe('Tenantry-Webhooks/1.0');
    expect(got.headers['x-webhook-event']).toBe('project.created');

    const deliveries = json(
      await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id}/webhooks/${id}/deliveries`,
        headers: owner.auth,
      }),
    );
    expect(deliveries.data[0]).toMatchObject({
      id: got.headers['x-webhook-delivery-id'],
      status: 'delivered',
      attempts: 1,
      responseStatus: 204,
    });
  });
});
