// The retry rule. Attempt n (1 for the first) either delivers (any 2xx), or is followed by attempt
// n + 1 after WEBHOOK_RETRY_DELAYS[n - 1] seconds (60, 300, 900 by default), or, when the list is
// used up, ends the delivery as `failed`. Anything but a 2xx is a failure: a redirect is not
// followed (its target was never checked against the SSRF rules), and no response at all (refused,
// timed out, blocked, a secret that cannot be opened) counts the same.
// A receiver that answers 429 or 503 with Retry-After has said when it can take more: the next
// attempt waits for that if it is later than the schedule, but never more than an hour (a receiver
// cannot park a delivery for days, nor push it past the schedule's own delays by more than that).
// It changes when the next attempt comes, not how many there are.
// A manual retry of a failed delivery makes one more attempt past the list; if it fails the
// delivery is `failed` again, without new automatic retries.

export type Outcome = { status: 'delivered' } | { status: 'pending'; nextRetryAt: Date } | { status: 'failed' };

const DELIVERED: Outcome = Object.freeze({ status: 'delivered' });
const FAILED: Outcome = Object.freeze({ status: 'failed' });

/** The longest wait a Retry-After may ask for. */
export const RETRY_AFTER_MAX_MS = 3600_000;

/** Did the endpoint take the delivery? `null` is no response. */
export function accepted(responseStatus: number | null): boolean {
  return responseStatus !== null && responseStatus >= 200 && responseStatus < 300;
}

/** Whether an answer with this status may set the next attempt's time with Retry-After. */
export const honoursRetryAfter = (responseStatus: number | null) => responseStatus === 429 || responseStatus === 503;

/**
 * When a Retry-After value (delay-seconds, or an HTTP date) asks for the next attempt, for an
 * answer received at `at`; null when it is missing or not one of the two forms.
 */
export function retryAfterTime(value: string | null | undefined, at: Date): Date | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return new Date(at.getTime() + Math.min(Number(v), RETRY_AFTER_MAX_MS / 1000) * 1000);
  // An HTTP date names a weekday and a month in letters; Date.parse alone would take "10" or "2026".
  if (!/^[A-Za-z]{3,9},?\s/.test(v)) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/**
 * What follows attempt number `attempt` (1-based), answered with `responseStatus` at `at`.
 * `retryAfter` is the answer's Retry-After header, heeded on a 429 or 503 only.
 */
export function afterAttempt(
  attempt: number,
  responseStatus: number | null,
  retryDelaysS: readonly number[],
  at: Date,
  retryAfter: string | null = null,
): Outcome {
  if (accepted(responseStatus)) return DELIVERED;
  if (attempt > retryDelaysS.length) return FAILED;
  let next = at.getTime() + retryDelaysS[attempt - 1]! * 1000;
  const asked = honoursRetryAfter(responseStatus) ? retryAfterTime(retryAfter, at) : null;
  if (asked !== null) next = Math.max(next, Math.min(asked.getTime(), at.getTime() + RETRY_AFTER_MAX_MS));
  return { status: 'pending', nextRetryAt: new Date(next) };
}
