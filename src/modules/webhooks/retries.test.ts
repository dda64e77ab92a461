// Failure and retry: 500-then-200, always-500 to `failed` after WEBHOOK_RETRY_DELAYS
// (60, 300, 900 s on the fake clock), redirects refused, the response body cut to 500 characters,
// deletion canceling pending retries and manual retry (the timeout: timeout.test.ts).
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  attemptRows,
  createOrg,
  createWebhook,
  deliveryRows,
  type Receiver,
  stripeVerify,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import {
  after,
  drain,
  orgEndpoint,
  owner,
  createProject,
  signIn,
  t,
  useDeliveryApp,
  worker,
} from '../../../test/fixtures/webhooks.js';

const { receiver } = useDeliveryApp('retry-owner', { freshTokens: true });

const answer =
  (status: number, body = '') =>
  (_req: unknown, res: ServerResponse) =>
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);

async function hookWithEvent(rx: Receiver) {
  const { org, hook } = await orgEndpoint(rx);
  const recordedAt = t.clock.now();
  await createProject(org.id);
  await drain();
  const [d] = await deliveryRows(t, hook.id);
  return { org, hook, delivery: d!, recordedAt };
}

describe('retries', () => {
  it('500 then 200: the first attempt fails (attempts 1, pending, nextRetryAt +60 s); 60 s later the second delivers', async () => {
    let calls = 0;
    const rx = await receiver((_req, res) => res.writeHead(++calls === 1 ? 500 : 200).end(calls === 1 ? 'boom' : 'ok'));
    const { org, hook, delivery, recordedAt } = await hookWithEvent(rx);
    expect(rx.received).toHaveLength(1);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, response_status: 500, response_body: 'boom' });
    expect(new Date(delivery.next_retry_at).getTime()).toBe(recordedAt.getTime() + 60_000);
    const listed = json(
      await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/deliveries`,
        headers: owner.auth,
      }),
    ).data[0];
    expect(listed).toMatchObject({
      status: 'pending',
      attempts: 1,
      responseStatus: 500,
      nextRetryAt: new Date(recordedAt.getTime() + 60_000).toISOString(),
      deliveredAt: null,
    });

    await after(59);
    expect(rx.received).toHaveLength(1);
    await after(1);
    expect(rx.received).toHaveLength(2);
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({
      status: 'delivered',
      attempts: 2,
      response_status: 200,
      response_body: 'ok',
      next_retry_at: null,
      last_error: null,
    });
    expect(new Date(d!.delivered_at).getTime()).toBe(recordedAt.getTime() + 60_000);

    // The same delivery id and body on both attempts; the body's timestamp is when the event was
    // recorded, the signature's t when the attempt was sent; the retry verifies at its own time.
    const [first, second] = rx.received as [(typeof rx.received)[0], (typeof rx.received)[0]];
    expect(second.headers['x-webhook-delivery-id']).toBe(first.headers['x-webhook-delivery-id']);
    expect(second.headers['x-webhook-delivery-id']).toBe(d!.id);
    expect(second.body).toBe(first.body);
    expect(JSON.parse(second.body).timestamp).toBe(recordedAt.toISOString());
    expect(second.headers['x-webhook-signature']).toMatch(
      new RegExp(`^t=${Math.floor(recordedAt.getTime() / 1000) + 60},`),
    );
    expect(stripeVerify(t, second, hook.secret)).toMatchObject({ type: 'project.created' });

    const attempts = await attemptRows(t, d!.id);
    expect(attempts.map((a) => [a.attempt, a.response_status, a.response_body])).toEqual([
      [1, 500, 'boom'],
      [2, 200, 'ok'],
    ]);
  });

  it('always 500: 4 attempts at 0, +60, +300, +900 s, then failed (nextRetryAt null); every attempt recorded, bodies cut to 500 characters', async () => {
    const long = `${'a'.repeat(499)}Z${'b'.repeat(700)}`;
    const rx = await receiver(answer(500, long));
    const { org, hook, delivery, recordedAt } = await hookWithEvent(rx);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
    let at = recordedAt.getTime();
    for (const [n, delay] of [
      [2, 60],
      [3, 300],
      [4, 900],
    ] as const) {
      const [before] = await deliveryRows(t, hook.id);
      at += delay * 1000;
      expect(new Date(before!.next_retry_at).getTime()).toBe(at);
      await after(delay - 1);
      expect(rx.received).toHaveLength(n - 1);
      await after(1);
      expect(rx.received).toHaveLength(n);
    }
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({
      status: 'failed',
      attempts: 4,
      next_retry_at: null,
      response_status: 500,
      delivered_at: null,
    });
    expect(d!.response_body).toBe(long.slice(0, 500));
    expect(d!.response_body).toHaveLength(500);

    // Nothing more, however long we wait.
    await after(24 * 3600);
    expect(rx.received).toHaveLength(4);

    const ids = new Set(rx.received.map((r) => r.headers['x-webhook-delivery-id']));
    expect([...ids]).toEqual([d!.id]);
    const attempts = await attemptRows(t, d!.id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    for (const a of attempts) {
      expect(a.response_status).toBe(500);
      expect(a.response_body).toBe(long.slice(0, 500));
      expect(typeof a.duration_ms).toBe('number');
      expect(a.duration_ms).toBeGreaterThanOrEqual(0);
      expect(a.created_at).not.toBeNull();
    }
    const times = attempts.map((a) => new Date(a.created_at).getTime() - recordedAt.getTime());
    expect(times).toEqual([0, 60_000, 360_000, 1_260_000]);

    await signIn();
    const listed = json(
      await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/deliveries`,
        headers: owner.auth,
      }),
    ).data[0];
    expect(listed).toMatchObject({
      id: d!.id,
      status: 'failed',
      attempts: 4,
      nextRetryAt: null,
      responseStatus: 500,
      deliveredAt: null,
    });
    expect(listed.responseBody).toHaveLength(500);
  });

  it('manual retry of a failed delivery delivers it; a delivered one cannot be retried (409)', async () => {
    const rx = await receiver(answer(503, 'down'));
    const { org, hook } = await hookWithEvent(rx);
    for (const delay of [60, 300, 900]) await after(delay);
    const [failed] = await deliveryRows(t, hook.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 4 });

    rx.handler = answer(200, 'fine');
    await signIn();
    const url = `/api/v1/organizations/${org.id}/webhooks/${hook.id}/deliveries/${failed!.id}/retry`;
    const res = await t.request({ method: 'POST', url, headers: owner.auth });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).data).toMatchObject({ id: failed!.id, status: 'pending' });
    await drain();
    expect(rx.received).toHaveLength(5);
    expect(rx.received[4]!.headers['x-webhook-delivery-id']).toBe(failed!.id);
    expect(stripeVerify(t, rx.received[4]!, hook.secret)).toMatchObject({ type: 'project.created' });
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 5, response_status: 200 });
    expect((await attemptRows(t, d!.id)).map((a) => a.response_status)).toEqual([503, 503, 503, 503, 200]);

    const again = await t.request({ method: 'POST', url, headers: owner.auth });
    expect(again.statusCode, again.body).toBe(409);
    // The flat alias, and an unknown delivery.
    expect(
      (
        await t.request({
          method: 'POST',
          url: `/api/v1/webhooks/${hook.id}/deliveries/${failed!.id}/retry`,
          headers: owner.auth,
        })
      ).statusCode,
    ).toBe(409);
    expect(
      (
        await t.request({
          method: 'POST',
          url: `/api/v1/webhooks/${hook.id}/deliveries/dlv_nope/retry`,
          headers: owner.auth,
        })
      ).statusCode,
    ).toBe(404);
  });

  it('a failed delivery retried by hand that fails again goes back to failed, without new automatic retries', async () => {
    const rx = await receiver(answer(500));
    const { org, hook } = await hookWithEvent(rx);
    for (const delay of [60, 300, 900]) await after(delay);
    const [failed] = await deliveryRows(t, hook.id);
    await signIn();
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/webhooks/${hook.id}/deliveries/${failed!.id}/retry`,
      headers: owner.auth,
    });
    expect(res.statusCode, res.body).toBe(200);
    await drain();
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({ status: 'failed', attempts: 5, next_retry_at: null });
    await after(3600);
    expect(rx.received).toHaveLength(5);
    expect(org.id).toBeTruthy();
  });
});

describe('what counts as a failure', () => {
  it('a 302 is a failure and its target is never requested', async () => {
    const target = await receiver();
    const rx = await receiver((_req, res) => res.writeHead(302, { location: target.url }).end());
    const { hook, delivery } = await hookWithEvent(rx);
    expect(rx.received).toHaveLength(1);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, response_status: 302, delivered_at: null });
    expect(delivery.last_error).toMatch(/redirect/i);
    for (const delay of [60, 300, 900]) await after(delay);
    expect(rx.received).toHaveLength(4);
    expect(target.received).toHaveLength(0);
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({ status: 'failed', attempts: 4 });
  });

  it('other non-2xx answers (301, 404, 429) fail; a 2xx other than 200 (202) delivers', async () => {
    for (const [status, delivered] of [
      [301, false],
      [404, false],
      [429, false],
      [202, true],
    ] as const) {
      const rx = await receiver(answer(status));
      const { delivery } = await hookWithEvent(rx);
      expect(delivery, `HTTP ${status}`).toMatchObject({
        status: delivered ? 'delivered' : 'pending',
        attempts: 1,
        response_status: status,
      });
    }
  });

  it('a refused connection fails the attempt with its error recorded', async () => {
    const rx = await receiver();
    await rx.close();
    const { delivery } = await hookWithEvent(rx);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, response_status: null });
    expect(delivery.last_error).toMatch(/ECONNREFUSED|connect/i);
    const [a] = await attemptRows(t, delivery.id);
    expect(a).toMatchObject({ attempt: 1, response_status: null, response_body: null });
    expect(a!.error).toBe(delivery.last_error);
  });
});

describe('deleting the endpoint', () => {
  it('cancels its pending retries: status canceled, and no request after the clock passes the retry time', async () => {
    const rx = await receiver(answer(500));
    const { org, hook, delivery } = await hookWithEvent(rx);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
    const res = await t.request({
      method: 'DELETE',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`,
      headers: owner.auth,
    });
    expect(res.statusCode, res.body).toBe(200);
    const [canceled] = await deliveryRows(t, hook.id);
    expect(canceled).toMatchObject({ status: 'canceled', next_retry_at: null, attempts: 1 });
    for (const delay of [60, 300, 900, 3600]) await after(delay);
    expect(rx.received).toHaveLength(1);
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({ status: 'canceled', attempts: 1 });
    expect(await attemptRows(t, d!.id)).toHaveLength(1);
  });
});

describe('deleting the endpoint during an attempt', () => {
  it('the delivery stays canceled whatever the attempt in flight answers', async () => {
    let answerNow: () => void = () => {};
    const answered = new Promise<void>((r) => (answerNow = r));
    const rx = await receiver((_req, res) => void answered.then(() => res.writeHead(204).end()));
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: owner.auth,
      payload: { name: 'P' },
    });
    expect(res.statusCode).toBe(201);
    worker.wake();
    await rx.waitFor(1);
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`,
      headers: owner.auth,
    });
    expect(del.statusCode, del.body).toBe(200);
    answerNow();
    await drain();
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({ status: 'canceled', delivered_at: null, next_retry_at: null });
    await after(3600);
    expect(rx.received).toHaveLength(1);
  });
});
