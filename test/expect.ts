// The assertions every test shares: an error answer in the envelope, and waiting for a condition
// that another process (a worker, a receiver) brings about.
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { ErrorCode } from '../src/lib/errors.js';

type Text = string | RegExp;

export interface ExpectedError {
  /** The details: a string they contain, or a pattern they match. */
  details?: Text;
  /** The error's whole text, its message then its details (one space between): contained or matched. */
  text?: Text;
  /** The message: exactly this string, or a pattern it matches. */
  message?: Text;
  /** Names the request in a failure's message. */
  what?: string;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details: string;
}

/**
 * The answer is `status` with the error envelope of docs/api.md#errors and `code`; a string or
 * pattern as `expected` is what the error's text (its message, then its details) must contain or
 * match. Returns the error.
 */
export function expectError(
  res: LightMyRequestResponse,
  status: number,
  code: ErrorCode,
  expected: Text | ExpectedError = {},
): ErrorBody {
  const want: ExpectedError =
    typeof expected === 'string' || expected instanceof RegExp ? { text: expected } : expected;
  const label = want.what ? `${want.what}: ${res.body}` : res.body;
  expect(res.statusCode, label).toBe(status);
  const body = res.json() as { success?: unknown; error?: ErrorBody };
  expect(body, label).toMatchObject({
    success: false,
    error: { code, message: expect.any(String), details: expect.any(String) },
  });
  const error = body.error!;
  if (typeof want.details === 'string') expect(error.details, label).toContain(want.details);
  else if (want.details) expect(error.details, label).toMatch(want.details);
  const text = `${error.message} ${error.details}`;
  if (typeof want.text === 'string') expect(text, label).toContain(want.text);
  else if (want.text) expect(text, label).toMatch(want.text);
  if (typeof want.message === 'string') expect(error.message, label).toBe(want.message);
  else if (want.message) expect(error.message, label).toMatch(want.message);
  return error;
}

/** Resolves once `check` holds; fails naming `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
