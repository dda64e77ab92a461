// Races settled by the database (only meaningful on PostgreSQL, where requests
// really overlap; on PGlite they must pass too). Each case fires its requests with Promise.all.
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { json, onPostgres, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { PASSWORD, registerUser, signedInUser, uniqueEmail } from '../../../test/factories.js';
import { getMe, listSessions, loginRaw, refreshRaw, verifiedUser } from '../../../test/fixtures/auth.js';
import { passCheck } from './sign-in.js';
import { expectError } from '../../../test/expect.js';

useApp();

// Parallel Argon2 verifications: room for a loaded machine.
const SLOW = 90_000;

const statuses = (responses: Array<{ statusCode: number }>) => responses.map((r) => r.statusCode).sort();

describe('concurrent requests', () => {
  it(
    'five parallel refreshes with one token: exactly one 200, four 401, and the session survives',
    async () => {
      const user = await signedInUser(t, 'race-refresh');
      const responses = await Promise.all(Array.from({ length: 5 }, () => refreshRaw(t, user.refreshToken)));
      expect(statuses(responses)).toEqual([200, 401, 401, 401, 401]);
      for (const r of responses.filter((r) => r.statusCode === 401))
        expect(json(r).error.code).toBe('AUTHENTICATION_ERROR');
      const winner = json(responses.find((r) => r.statusCode === 200)!);
      // The losers were inside the reuse grace: nothing was revoked.
      expect((await getMe(t, winner.accessToken)).statusCode).toBe(200);
      expect((await refreshRaw(t, winner.refreshToken)).statusCode).toBe(200);
    },
    SLOW,
  );

  it(
    'a login, then five parallel logins under a cap of five, leave exactly five active sessions',
    async () => {
      const { email } = await verifiedUser(t, 'race-login');
      // Five checks at once is the lockout's budget (sign-in.ts): a sixth parallel one would wait for a place.
      const first = await loginRaw(t, email, PASSWORD);
      const responses = [first, ...(await Promise.all(Array.from({ length: 5 }, () => loginRaw(t, email, PASSWORD))))];
      expect(statuses(responses)).toEqual([200, 200, 200, 200, 200, 200]);
      const tokens = responses.map((r) => json(r).accessToken as string);
      const alive = [];
      for (const token of tokens) if ((await getMe(t, token)).statusCode === 200) alive.push(token);
      expect(alive).toHaveLength(5);
      expect(json(await listSessions(t, alive[0]!)).total).toBe(5);
    },
    SLOW,
  );

  it(
    'parallel failures are all counted: the account ends locked',
    async () => {
      const { email } = await verifiedUser(t, 'race-lock');
      const responses = await Promise.all(Array.from({ length: 6 }, () => loginRaw(t, email, 'Wrong-Password-1')));
      for (const r of responses) expect([401, 423]).toContain(r.statusCode);
      expectError(await loginRaw(t, email, PASSWORD), 423, 'ACCOUNT_LOCKED');
    },
    SLOW,
  );

  it(
    'a verification token used in parallel works once',
    async () => {
      const { email } = await registerUser(t, uniqueEmail('race-verify'));
      const token = await t.mail.tokenFrom(email, /Verify your email/, '/verify-email');
      const responses = await Promise.all(
        Array.from({ length: 4 }, () =>
          t.request({ method: 'POST', url: '/api/v1/auth/verify-email', payload: { token } }),
        ),
      );
      expect(statuses(responses)).toEqual([200, 400, 400, 400]);
    },
    SLOW,
  );

  it(
    'a reset token used in parallel works once',
    async () => {
      const { email } = await verifiedUser(t, 'race-reset');
      await t.request({ method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email } });
      const token = await t.mail.tokenFrom(email, /Reset your password/, '/reset-password');
      const passwords = ['Parallel-One-1', 'Parallel-Two-2', 'Parallel-Three-3'];
      const responses = await Promise.all(
        passwords.map((newPassword) =>
          t.request({ method: 'POST', url: '/api/v1/auth/password/reset', payload: { token, newPassword } }),
        ),
      );
      expect(statuses(responses)).toEqual([200, 400, 400]);
      const winner = passwords[responses.findIndex((r) => r.statusCode === 200)]!;
      expect((await loginRaw(t, email, winner)).statusCode).toBe(200);
    },
    SLOW,
  );

  it(
    'parallel registrations of one email: one 201, the others 409',
    async () => {
      const email = uniqueEmail('race-register');
      const responses = await Promise.all(
        [email, email.toUpperCase(), ` ${email} `].map((e) =>
          t.request({ method: 'POST', url: '/api/v1/auth/register', payload: { email: e, password: PASSWORD } }),
        ),
      );
      expect(statuses(responses)).toEqual([201, 409, 409]);
    },
    SLOW,
  );
});

// A sign-in whose password checked out clears the failures counted toward the lockout, but a lock
// that parallel failures set while its password was being checked stays (the sign-in itself was
// checked against the lock before). Called as the sign-in calls it, since the race is too narrow to
// produce over HTTP.
describe('the lockout at the start of a session', () => {
  async function startWith(failed: number, lockedUntil: Date | null) {
    const { email } = await verifiedUser(t, 'start-lock');
    const [user] = await queryRows<{ id: string }>(t, sql`select id from users where email = ${email}`);
    await t.deps.db.execute(
      sql`update users set failed_login_attempts = ${failed}, locked_until = ${lockedUntil?.toISOString() ?? null}::timestamptz where id = ${user!.id}`,
    );
    await passCheck(t.deps, user!.id, null);
    const [after] = await queryRows<{ failed: number; locked: boolean }>(
      t,
      sql`select failed_login_attempts as failed, locked_until is not null as locked from users where id = ${user!.id}`,
    );
    return after!;
  }

  it('clears failures and an expired lock', async () => {
    expect(await startWith(3, null)).toEqual({ failed: 0, locked: false });
    expect(await startWith(5, new Date(t.clock.now().getTime() - 1000))).toEqual({ failed: 0, locked: false });
  });

  it('keeps a lock that is still in force', async () => {
    expect(await startWith(5, new Date(t.clock.now().getTime() + 60_000))).toEqual({ failed: 5, locked: true });
  });
});

// Logins wait for their Argon2 verifications, which run a few at a time, so the six above rarely
// start their sessions together. Here the sign-in's last step (tenantry_start_session, one statement
// per sign-in) runs on six connections at once, for three users: with the user row lock they are
// serialized and each sees the others' sessions; without it they would overlap and keep six.
if (onPostgres) {
  describe('starting sessions on parallel connections (PostgreSQL)', () => {
    it('six sessions started at the same moment under a cap of five leave exactly five active', async () => {
      const clients = await Promise.all(
        Array.from({ length: 6 }, async () => {
          const c = new pg.Client({ connectionString: t.database.url! });
          await c.connect();
          return c;
        }),
      );
      try {
        for (let round = 0; round < 3; round++) {
          const { email } = await verifiedUser(t, `race-start-${round}`);
          const [user] = await queryRows<{ id: string }>(t, sql`select id from users where email = ${email}`);
          const now = t.clock.now();
          const expires = new Date(now.getTime() + 86_400_000).toISOString();
          await Promise.all(
            clients.map((c, i) =>
              c.query(
                `select id from tenantry_start_session($1, $2, $3, null, null, $4, $5, '[]', 4, '{pwd}', null) as id`,
                [`ses_race_${round}_${i}`, user!.id, `hash-${round}-${i}`, now.toISOString(), expires],
              ),
            ),
          );
          const [active] = await queryRows<{ n: number }>(
            t,
            sql`select count(*)::int as n from sessions where user_id = ${user!.id} and revoked_at is null`,
          );
          expect(active!.n).toBe(5);
        }
      } finally {
        await Promise.all(clients.map((c) => c.end()));
      }
    });
  });
}
