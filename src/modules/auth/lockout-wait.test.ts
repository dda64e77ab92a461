// The lockout without false locks (docs/security.md, docs/api.md#account-lockout): a password check
// beyond the account's remaining failure budget, counting the checks in flight, waits for those
// checks (up to 10 s) instead of answering 423; 423 comes only once the account is locked. Parallel
// wrong passwords still get exactly the budget's worth of checks, on one instance or two sharing the
// database (and Redis, when the run has one). Only meaningful on PostgreSQL, where the requests really
// overlap; on PGlite they must pass too.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, onRedis, queryRows, type TestApp } from '../../../test/harness.js';
import { PASSWORD } from '../../../test/factories.js';
import { getMe, loginRaw, verifiedUser } from '../../../test/fixtures/auth.js';
import { expectError } from '../../../test/expect.js';

const WRONG = 'Wrong-Password-1';
// Parallel Argon2 verifications: room for a loaded machine.
const SLOW = 90_000;

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await createTestApp();
  // A second instance on the same database (and the same Redis, when the run has one).
  b = await createTestApp({
    database: a.database,
    clock: a.clock,
    ...(onRedis ? { redisPrefix: a.deps.redisPrefix } : {}),
  });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const counts = (responses: Array<{ statusCode: number }>) => {
  const c: Record<number, number> = {};
  for (const r of responses) c[r.statusCode] = (c[r.statusCode] ?? 0) + 1;
  return c;
};

async function lockState(email: string) {
  const [row] = await queryRows<{ failed: number; locked: boolean; inFlight: number }>(
    a,
    sql`select failed_login_attempts as failed, locked_until is not null as locked, checks_in_flight as "inFlight" from users where email = ${email}`,
  );
  return row!;
}

/** Checks of this instance waiting for a place on their account (GET /metrics). */
async function waiting(t: TestApp): Promise<number> {
  const res = await t.request({ method: 'GET', url: '/metrics' });
  const m = /^tenantry_password_checks_waiting (\d+)$/m.exec(res.body);
  if (!m) throw new Error('tenantry_password_checks_waiting is not exported');
  return Number(m[1]);
}

async function until(condition: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every place of the account's budget taken, as checks under way on another instance take them. */
const holdAllPlaces = (email: string) =>
  a.deps.db.execute(
    sql`update users set checks_in_flight = 5, checks_reserved_at = ${a.clock.now().toISOString()}::timestamptz where email = ${email}`,
  );
const giveBackPlaces = (email: string) =>
  a.deps.db.execute(sql`update users set checks_in_flight = 0 where email = ${email}`);

describe('right passwords in parallel', () => {
  it(
    'ten parallel logins with the right password all succeed, and nothing is counted or locked',
    async () => {
      const { email } = await verifiedUser(a, 'wait-ten');
      const responses = await Promise.all(Array.from({ length: 10 }, () => loginRaw(a, email, PASSWORD)));
      expect(counts(responses), responses.find((r) => r.statusCode !== 200)?.body).toEqual({ 200: 10 });
      expect(await lockState(email)).toEqual({ failed: 0, locked: false, inFlight: 0 });
      // Ten sessions started; the cap of five keeps the newest five.
      const alive = [];
      for (const r of responses) if ((await getMe(a, json(r).accessToken)).statusCode === 200) alive.push(r);
      expect(alive).toHaveLength(5);
    },
    SLOW,
  );

  it(
    'with 3 failures counted, ten parallel right logins all succeed (two places at a time, the rest wait)',
    async () => {
      const { email } = await verifiedUser(a, 'wait-budget');
      for (let i = 0; i < 3; i++) expectError(await loginRaw(a, email, WRONG), 401, 'AUTHENTICATION_ERROR');
      const responses = await Promise.all(Array.from({ length: 10 }, () => loginRaw(a, email, PASSWORD)));
      expect(counts(responses), responses.find((r) => r.statusCode !== 200)?.body).toEqual({ 200: 10 });
      expect(await lockState(email)).toEqual({ failed: 0, locked: false, inFlight: 0 });
    },
    SLOW,
  );

  it(
    'twenty parallel right logins split over two instances of one database all succeed',
    async () => {
      const { email } = await verifiedUser(a, 'wait-two');
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => loginRaw(i % 2 === 0 ? a : b, email, PASSWORD)),
      );
      expect(counts(responses), responses.find((r) => r.statusCode !== 200)?.body).toEqual({ 200: 20 });
      expect(await lockState(email)).toEqual({ failed: 0, locked: false, inFlight: 0 });
    },
    SLOW,
  );

  it(
    'parallel two-factor setups with the right password all succeed (every reserved check waits alike)',
    async () => {
      const { email } = await verifiedUser(a, 'wait-setup');
      const session = json(await loginRaw(a, email, PASSWORD));
      const responses = await Promise.all(
        Array.from({ length: 8 }, () =>
          a.request({
            method: 'POST',
            url: '/api/v1/auth/two-factor/setup',
            payload: { password: PASSWORD },
            headers: { authorization: `Bearer ${session.accessToken}` },
          }),
        ),
      );
      expect(counts(responses), responses.find((r) => r.statusCode !== 200)?.body).toEqual({ 200: 8 });
    },
    SLOW,
  );
});

describe('wrong passwords in parallel: exactly the budget is checked', () => {
  it(
    'twenty parallel wrong passwords: exactly 5 checked (401), 15 answer 423 once the 5th locks, 5 failures stored',
    async () => {
      const { email } = await verifiedUser(a, 'wait-wrong');
      const c = counts(await Promise.all(Array.from({ length: 20 }, () => loginRaw(a, email, WRONG))));
      expect(c, JSON.stringify(c)).toEqual({ 401: 5, 423: 15 });
      expect(await lockState(email)).toEqual({ failed: 5, locked: true, inFlight: 0 });
      expectError(await loginRaw(a, email, PASSWORD), 423, 'ACCOUNT_LOCKED');
    },
    SLOW,
  );

  it(
    'the same over two instances: exactly 5 checked, the account locked',
    async () => {
      const { email } = await verifiedUser(a, 'wait-wrong-two');
      const c = counts(
        await Promise.all(Array.from({ length: 20 }, (_, i) => loginRaw(i % 2 === 0 ? a : b, email, WRONG))),
      );
      expect(c, JSON.stringify(c)).toEqual({ 401: 5, 423: 15 });
      expect(await lockState(email)).toEqual({ failed: 5, locked: true, inFlight: 0 });
      expectError(await loginRaw(b, email, PASSWORD), 423, 'ACCOUNT_LOCKED');
    },
    SLOW,
  );

  it(
    'with 3 failures counted, parallel wrong passwords get 2 checks, then 423',
    async () => {
      const { email } = await verifiedUser(a, 'wait-wrong-rest');
      for (let i = 0; i < 3; i++) expectError(await loginRaw(a, email, WRONG), 401, 'AUTHENTICATION_ERROR');
      const c = counts(
        await Promise.all(Array.from({ length: 8 }, (_, i) => loginRaw(i % 2 === 0 ? a : b, email, WRONG))),
      );
      expect(c, JSON.stringify(c)).toEqual({ 401: 2, 423: 6 });
      expect(await lockState(email)).toEqual({ failed: 5, locked: true, inFlight: 0 });
    },
    SLOW,
  );
});

describe('waiting for checks under way elsewhere', () => {
  it(
    'a login waits while every place is held by checks of another instance, and signs in once they end',
    async () => {
      const { email } = await verifiedUser(a, 'wait-held');
      await holdAllPlaces(email);
      const pending = loginRaw(a, email, PASSWORD);
      await until(async () => (await waiting(a)) === 1, 'the login to wait');
      await giveBackPlaces(email);
      const res = await pending;
      expect(res.statusCode, res.body).toBe(200);
      expect(await waiting(a)).toBe(0);
      expect(await lockState(email)).toEqual({ failed: 0, locked: false, inFlight: 0 });
    },
    SLOW,
  );

  it(
    'a wait that outlasts 10 s answers 503 SERVICE_UNAVAILABLE with Retry-After, counts nothing, and locks nothing',
    async () => {
      const { email } = await verifiedUser(a, 'wait-timeout');
      await holdAllPlaces(email);
      const pending = loginRaw(a, email, PASSWORD);
      await until(async () => (await waiting(a)) === 1, 'the login to wait');
      a.clock.advance(10_001);
      const res = await pending;
      expectError(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('1');
      expect(await waiting(a)).toBe(0);
      expect(await lockState(email)).toEqual({ failed: 0, locked: false, inFlight: 5 });
      await giveBackPlaces(email);
      expect((await loginRaw(a, email, PASSWORD)).statusCode).toBe(200);
    },
    SLOW,
  );

  it(
    'a lock set while a check waits answers it 423',
    async () => {
      const { email } = await verifiedUser(a, 'wait-locked');
      await holdAllPlaces(email);
      const pending = loginRaw(a, email, PASSWORD);
      await until(async () => (await waiting(a)) === 1, 'the login to wait');
      // The checks under way elsewhere were 5 wrong passwords: the last one locks the account.
      const until15 = new Date(a.clock.now().getTime() + 15 * 60_000).toISOString();
      await a.deps.db.execute(
        sql`update users set checks_in_flight = 0, failed_login_attempts = 5, locked_until = ${until15}::timestamptz where email = ${email}`,
      );
      const res = await pending;
      expectError(res, 423, 'ACCOUNT_LOCKED');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(800);
    },
    SLOW,
  );
});
