// The shared set-up of the two-factor tests (two-factor-enable and -login.test.ts): an app on its own
// database with its fake clock, accounts with and without two-factor, and the calls. Codes come from
// test/totp.ts, an independent RFC 6238 implementation, on the injected clock.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { PASSWORD } from '../../../test/factories.js';
import { bearer, verifiedUser } from '../../../test/auth-helpers.js';
import { totpCode } from '../../../test/totp.js';
import { backupCodes, twoFactor } from '../../db/tables/auth.js';

export let t: TestApp;

export const STEP = 30 * 1000;
export const MINUTE = 60 * 1000;
export const WRONG_PASSWORD = 'Wrong-Password-1';

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
export const now = () => t.clock.now();
/** Moves to the start of the next 30 s step, so a fresh TOTP code exists. */
export const nextStep = () => t.clock.advance(STEP);

export const post = (url: string, payload: unknown, accessToken?: string) =>
  t.request({ method: 'POST', url: `/api/v1${url}`, payload: payload as Record<string, unknown>, headers: accessToken ? bearer(accessToken) : {} });

export const loginWith = (email: string, password: string, twoFactorCode?: string) =>
  post('/auth/login', { email, password, ...(twoFactorCode === undefined ? {} : { twoFactorCode }) });

/** A verified account with a session from a password login. */
export async function account(label: string) {
  const user = await verifiedUser(t, label);
  const res = await loginWith(user.email, user.password);
  expect(res.statusCode, res.body).toBe(200);
  return { ...user, accessToken: json(res).accessToken as string };
}

export async function setup(accessToken: string, password = PASSWORD, code?: string) {
  const res = await post('/auth/two-factor/setup', { password, ...(code ? { code } : {}) }, accessToken);
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { secret: string; qrCode: string; backupCodes: string[] };
}

/** A verified account with two-factor enabled; the clock is moved past the step used to verify. */
export async function enabledAccount(label: string) {
  const user = await account(label);
  const s = await setup(user.accessToken);
  const res = await post('/auth/two-factor/verify', { code: totpCode(s.secret, now()) }, user.accessToken);
  expect(res.statusCode, res.body).toBe(200);
  nextStep();
  return { ...user, ...s };
}

export const rowsOf = async (userId: string) => ({
  twoFactor: await t.deps.db.select().from(twoFactor).where(eq(twoFactor.userId, userId)),
  backupCodes: await t.deps.db.select().from(backupCodes).where(eq(backupCodes.userId, userId)),
});

/** The app of the file and its hooks: call once at the top of each test file. */
export function useTwoFactorApp() {
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
}
