// Retry-After, end to end with real local receivers and the fake clock: a 429 or 503 that asks for
// more time than the schedule moves the next attempt to that time (delay-seconds or an HTTP date),
// never more than an hour away; asking for less keeps the schedule; any other status is not heeded.
// The retry made at the asked time is delivered and verifies with the `stripe` package.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { deliveryRows, type Receiver, stripeVerify } from '../../../test/factories.js';
import { after, drain, orgEndpoint, createProject, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';

const fx = useDeliveryApp('retry-after-owner', { freshTokens: true });

/** Answers the first request with `status` and these headers, every later one with 204. */
function firstAnswer(status: number, headers: () => Record<string, string>) {
  let calls = 0;
  return (_req: unknown, res: ServerResponse) => {
    if (++calls === 1) res.writeHead(status, { 'content-type': 'text/plain', ...headers() }).end('slow down');
    else res.writeHead(204).end();
  };
}

/** An endpoint on `rx`, one project.created to it, and the first attempt made. */
async function firstAttempt(rx: Receiver) {
  const { org, hook } = await orgEndpoint(rx);
  await createProject(org.id);
  const at = t.clock.now().getTime();
  await drain();
  expect(rx.received).toHaveLength(1);
  const [d] = await deliveryRows(t, hook.id);
  expect(d).toMatchObject({ status: 'pending', attempts: 1 });
  return { hook, at, nextRetryAt: new Date(d!.next_retry_at as string).getTime() };
}

describe('Retry-After on a 429 or 503', () => {
  it('429 with Retry-After: 600 (seconds): nothing at the scheduled 60 s; the retry comes at 600 s, delivered and signed', async () => {
    const rx = await fx.receiver(firstAnswer(429, () => ({ 'retry-after': '600' })));
    const { hook, at, nextRetryAt } = await firstAttempt(rx);
    expect(nextRetryAt).toBe(at + 600_000);

    await after(60);
    await after(539);
    expect(rx.received).toHaveLength(1);
    await after(1);
    expect(rx.received).toHaveLength(2);
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 2, response_status: 204 });
    // The same body both times, each attempt signed with its own t.
    expect(rx.received[1]!.body).toBe(rx.received[0]!.body);
    expect(stripeVerify(t, rx.received[1]!, hook.secret)).toMatchObject({ type: 'project.created' });
  });

  it('503 with Retry-After as an HTTP date: the next attempt is at that date', async () => {
    let asked = '';
    const rx = await fx.receiver(
      firstAnswer(503, () => {
        asked = new Date(t.clock.now().getTime() + 900_000).toUTCString();
        return { 'retry-after': asked };
      }),
    );
    const { hook, nextRetryAt } = await firstAttempt(rx);
    expect(nextRetryAt).toBe(Date.parse(asked));

    await after(899);
    expect(rx.received).toHaveLength(1);
    await after(1);
    expect(rx.received).toHaveLength(2);
    expect((await deliveryRows(t, hook.id))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('asking for a day waits an hour at most', async () => {
    const rx = await fx.receiver(firstAnswer(429, () => ({ 'retry-after': '86400' })));
    const { at, nextRetryAt } = await firstAttempt(rx);
    expect(nextRetryAt).toBe(at + 3_600_000);
    await after(3599);
    expect(rx.received).toHaveLength(1);
    await after(1);
    expect(rx.received).toHaveLength(2);
  });

  it('a date a week away, too', async () => {
    const rx = await fx.receiver(
      firstAnswer(503, () => ({ 'retry-after': new Date(t.clock.now().getTime() + 7 * 86_400_000).toUTCString() })),
    );
    const { at, nextRetryAt } = await firstAttempt(rx);
    expect(nextRetryAt).toBe(at + 3_600_000);
  });

  it('asking for less than the schedule keeps the schedule (60 s after the first attempt)', async () => {
    const rx = await fx.receiver(firstAnswer(429, () => ({ 'retry-after': '5' })));
    const { at, nextRetryAt } = await firstAttempt(rx);
    expect(nextRetryAt).toBe(at + 60_000);
    await after(5);
    expect(rx.received).toHaveLength(1);
    await after(55);
    expect(rx.received).toHaveLength(2);
  });
});

describe('Retry-After on other answers', () => {
  it('is ignored on a 500, a 502 and a redirect: the schedule applies', async () => {
    for (const status of [500, 502, 302]) {
      const rx = await fx.receiver(
        firstAnswer(status, () => ({ 'retry-after': '1800', location: 'http://127.0.0.1:9/' })),
      );
      const { at, nextRetryAt } = await firstAttempt(rx);
      expect(nextRetryAt, String(status)).toBe(at + 60_000);
      await after(60);
      expect(rx.received, String(status)).toHaveLength(2);
    }
  });

  it('an unreadable value on a 429 is ignored', async () => {
    const rx = await fx.receiver(firstAnswer(429, () => ({ 'retry-after': 'in a while' })));
    const { at, nextRetryAt } = await firstAttempt(rx);
    expect(nextRetryAt).toBe(at + 60_000);
  });
});
