// The retry rule on its own: which answers deliver, the schedule (60, 300, 900 s after attempts 1,
// 2 and 3 with the default WEBHOOK_RETRY_DELAYS), giving up after the last, and the one extra
// attempt of a manual retry, and Retry-After on a 429 or 503. retries.test.ts and
// retry-after.test.ts check the same end to end.
import { describe, expect, it } from 'vitest';
import { accepted, afterAttempt, retryAfterTime } from './retry.js';

const DEFAULT = [60, 300, 900];
const at = new Date('2026-03-01T12:00:00.000Z');
const plus = (s: number) => new Date(at.getTime() + s * 1000);

describe('accepted', () => {
  it('is any 2xx, and nothing else (no response, 1xx, redirects, 4xx, 5xx)', () => {
    for (const status of [200, 201, 202, 204, 299]) expect(accepted(status), String(status)).toBe(true);
    for (const status of [null, 100, 199, 300, 301, 302, 304, 400, 404, 429, 500, 503])
      expect(accepted(status), String(status)).toBe(false);
  });
});

describe('afterAttempt', () => {
  it('a 2xx delivers, on any attempt', () => {
    for (const n of [1, 2, 4, 5]) expect(afterAttempt(n, 204, DEFAULT, at)).toEqual({ status: 'delivered' });
  });

  it('failed attempts 1, 2 and 3 are retried 60, 300 and 900 s after they were made', () => {
    expect(afterAttempt(1, 500, DEFAULT, at)).toEqual({ status: 'pending', nextRetryAt: plus(60) });
    expect(afterAttempt(2, 500, DEFAULT, at)).toEqual({ status: 'pending', nextRetryAt: plus(300) });
    expect(afterAttempt(3, null, DEFAULT, at)).toEqual({ status: 'pending', nextRetryAt: plus(900) });
  });

  it('attempts at 0, +60, +300, +900 s: the fourth falls 1,260 s after the first', () => {
    let t = at;
    const times = [0];
    for (let n = 1; n <= 3; n++) {
      const next = afterAttempt(n, 500, DEFAULT, t);
      if (next.status !== 'pending') throw new Error(`attempt ${n}: ${next.status}`);
      t = next.nextRetryAt;
      times.push((t.getTime() - at.getTime()) / 1000);
    }
    expect(times).toEqual([0, 60, 360, 1260]);
  });

  it('the fourth failure gives up (failed, no next attempt)', () => {
    expect(afterAttempt(4, 500, DEFAULT, at)).toEqual({ status: 'failed' });
    expect(afterAttempt(4, null, DEFAULT, at)).toEqual({ status: 'failed' });
  });

  it('a manual retry of a failed delivery (attempt 5) that fails again is failed, without new retries', () => {
    expect(afterAttempt(5, 500, DEFAULT, at)).toEqual({ status: 'failed' });
    expect(afterAttempt(5, 200, DEFAULT, at)).toEqual({ status: 'delivered' });
  });

  it('redirects and other non-2xx answers are failures like a 500', () => {
    for (const status of [301, 302, 404, 429])
      expect(afterAttempt(1, status, DEFAULT, at), String(status)).toEqual({
        status: 'pending',
        nextRetryAt: plus(60),
      });
  });

  it('follows WEBHOOK_RETRY_DELAYS: one delay means two attempts', () => {
    expect(afterAttempt(1, null, [60], at)).toEqual({ status: 'pending', nextRetryAt: plus(60) });
    expect(afterAttempt(2, null, [60], at)).toEqual({ status: 'failed' });
    expect(afterAttempt(1, 500, [5, 10], at)).toEqual({ status: 'pending', nextRetryAt: plus(5) });
    expect(afterAttempt(2, 500, [5, 10], at)).toEqual({ status: 'pending', nextRetryAt: plus(10) });
    expect(afterAttempt(3, 500, [5, 10], at)).toEqual({ status: 'failed' });
  });
});

describe('Retry-After', () => {
  const httpDate = (s: number) => plus(s).toUTCString();

  it('a 429 or 503 asking for longer than the schedule moves the next attempt to that time, in seconds or as an HTTP date', () => {
    for (const status of [429, 503]) {
      expect(afterAttempt(1, status, DEFAULT, at, '120'), String(status)).toEqual({
        status: 'pending',
        nextRetryAt: plus(120),
      });
      expect(afterAttempt(1, status, DEFAULT, at, httpDate(600)), String(status)).toEqual({
        status: 'pending',
        nextRetryAt: plus(600),
      });
    }
    expect(afterAttempt(2, 503, DEFAULT, at, ' 1800 ')).toEqual({ status: 'pending', nextRetryAt: plus(1800) });
  });

  it('asking for less than the schedule (or a date gone by) keeps the schedule', () => {
    expect(afterAttempt(1, 429, DEFAULT, at, '5')).toEqual({ status: 'pending', nextRetryAt: plus(60) });
    expect(afterAttempt(1, 429, DEFAULT, at, '0')).toEqual({ status: 'pending', nextRetryAt: plus(60) });
    expect(afterAttempt(2, 503, DEFAULT, at, httpDate(-3600))).toEqual({ status: 'pending', nextRetryAt: plus(300) });
  });

  it('never waits more than an hour for it; a schedule longer than an hour still applies', () => {
    expect(afterAttempt(1, 429, DEFAULT, at, '86400')).toEqual({ status: 'pending', nextRetryAt: plus(3600) });
    expect(afterAttempt(1, 503, DEFAULT, at, httpDate(7 * 86400))).toEqual({
      status: 'pending',
      nextRetryAt: plus(3600),
    });
    expect(afterAttempt(1, 503, DEFAULT, at, '99999999999999999999')).toEqual({
      status: 'pending',
      nextRetryAt: plus(3600),
    });
    expect(afterAttempt(1, 429, [7200], at, '86400')).toEqual({ status: 'pending', nextRetryAt: plus(7200) });
  });

  it('is ignored on any other status, and when it is neither form', () => {
    for (const status of [500, 502, 504, 404, 301, null]) {
      expect(afterAttempt(1, status, DEFAULT, at, '1800'), String(status)).toEqual({
        status: 'pending',
        nextRetryAt: plus(60),
      });
    }
    for (const value of ['', 'soon', '-5', '1.5', '10 s', 'Mon, 99 Foo 2026 25:00:00 GMT', null]) {
      expect(afterAttempt(1, 429, DEFAULT, at, value), String(value)).toEqual({
        status: 'pending',
        nextRetryAt: plus(60),
      });
    }
  });

  it('neither adds attempts nor undoes a delivery', () => {
    expect(afterAttempt(4, 429, DEFAULT, at, '120')).toEqual({ status: 'failed' });
    expect(afterAttempt(1, 200, DEFAULT, at, '120')).toEqual({ status: 'delivered' });
  });

  it('reads the three date forms HTTP allows', () => {
    expect(retryAfterTime('Sun, 01 Mar 2026 12:10:00 GMT', at)).toEqual(plus(600));
    expect(retryAfterTime('Sunday, 01-Mar-26 12:10:00 GMT', at)).toEqual(plus(600));
    expect(retryAfterTime('Sun Mar  1 12:10:00 2026', at)?.getTime()).toBeTypeOf('number');
  });
});
