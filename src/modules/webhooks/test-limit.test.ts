// Test events are limited to 10 per endpoint in any 60 seconds of the app's clock
// (docs/api.md#webhook-endpoints): the 11th answers 429 RATE_LIMIT_EXCEEDED with Retry-After (the
// seconds until a slot frees) and queues nothing; exact under concurrent requests; the window
// slides; another endpoint has its own. The queued events are delivered to a real receiver.
import { describe, expect, it } from 'vitest';
import { createWebhook, deliveryRows, setPlan, stripeVerify } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { orgEndpoint, owner, t, useDeliveryApp, worker } from '../../../test/fixtures/webhooks.js';

const fx = useDeliveryApp('limit-owner');

async function endpoint() {
  const rx = await fx.receiver();
  const { org, hook } = await orgEndpoint(rx, ['project.created']);
  return {
    rx,
    org,
    hook,
    url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/test`,
    flat: `/api/v1/webhooks/${hook.id}/test`,
  };
}

const send = (url: string) => t.request({ method: 'POST', url, headers: owner.auth });
async function sendOk(url: string, n: number) {
  for (let i = 0; i < n; i++) {
    const res = await send(url);
    expect(res.statusCode, `test event ${i + 1}: ${res.body}`).toBe(200);
  }
}
async function expectLimited(url: string, retryAfter: number) {
  const res = await send(url);
  expect(res.statusCode, res.body).toBe(429);
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(json(res)).toEqual({
    success: false,
    error: {
      code: 'RATE_LIMIT_EXCEEDED',
      message: 'Too many test events for this endpoint',
      details: expect.stringContaining(`retry in ${retryAfter} seconds`),
    },
  });
}

describe('POST …/webhooks/{id}/test: 10 per endpoint per minute', () => {
  it('10 are queued and delivered; the 11th answers 429 with Retry-After and queues nothing, on either path', async () => {
    const { rx, hook, url, flat } = await endpoint();
    await sendOk(url, 10);
    await expectLimited(url, 60);
    await expectLimited(flat, 60);
    expect(await deliveryRows(t, hook.id)).toHaveLength(10);

    // Retry-After counts down with the clock.
    t.clock.advance(20_000);
    await expectLimited(flat, 40);
    t.clock.advance(39_000);
    await expectLimited(url, 1);
    expect(await deliveryRows(t, hook.id)).toHaveLength(10);

    // The ten that were queued are delivered, signed; the refused ones never were.
    worker.wake();
    await worker.drain(60_000);
    expect(rx.received).toHaveLength(10);
    for (const req of rx.received)
      expect(stripeVerify(t, req, hook.secret)).toMatchObject({ type: 'test', data: { webhookId: hook.id } });
    expect((await deliveryRows(t, hook.id)).every((d) => d.status === 'delivered')).toBe(true);

    // A minute after the ten: allowed again.
    t.clock.advance(1_000);
    await sendOk(flat, 1);
    expect(await deliveryRows(t, hook.id)).toHaveLength(11);
  });

  it('12 at once: exactly 10 queued, 2 refused', async () => {
    const { hook, url, flat } = await endpoint();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => send(i % 2 ? url : flat)));
    const statuses = answers.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429]);
    for (const r of answers.filter((a) => a.statusCode === 429)) expect(r.headers['retry-after']).toBe('60');
    const rows = await deliveryRows(t, hook.id);
    expect(rows).toHaveLength(10);
    expect(new Set(rows.map((r) => r.id))).toEqual(
      new Set(answers.filter((a) => a.statusCode === 200).map((a) => json(a).data.deliveryId)),
    );
  });

  it('the window slides: a slot frees a minute after each test event', async () => {
    const { hook, url } = await endpoint();
    await sendOk(url, 5);
    t.clock.advance(30_000);
    await sendOk(url, 5);
    await expectLimited(url, 30);
    t.clock.advance(30_000);
    // The first five are a minute old: five slots, not ten.
    await sendOk(url, 5);
    await expectLimited(url, 30);
    expect(await deliveryRows(t, hook.id)).toHaveLength(15);
  });

  it('another endpoint, of the same organization or another, is not affected; other events are not counted', async () => {
    const a = await endpoint();
    await sendOk(a.url, 10);
    await expectLimited(a.url, 60);
    await setPlan(t, a.org.id, 'pro');
    const sibling = await createWebhook(t, a.org.id, owner, { url: a.rx.url });
    await sendOk(`/api/v1/webhooks/${sibling.id}/test`, 10);
    const other = await endpoint();
    await sendOk(other.url, 10);
    await expectLimited(other.flat, 60);

    // Ordinary events to an endpoint do not use its test slots.
    const c = await endpoint();
    for (let i = 0; i < 12; i++) {
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/organizations/${c.org.id}/projects`,
        headers: owner.auth,
        payload: { name: `P${i}` },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    await sendOk(c.url, 10);
    await expectLimited(c.url, 60);
    expect(await deliveryRows(t, c.hook.id)).toHaveLength(22);
  });
});
