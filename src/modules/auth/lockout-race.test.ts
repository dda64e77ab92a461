// The lockout is exact under concurrency (docs/security.md): attempts are reserved atomically before
// any hashing or code check, so however many requests race, at most 5 wrong passwords or codes are
// checked per lock window. Also: wrong passwords on two-factor setup and disable count, a two-factor
// ticket or magic link dies after 5 wrong codes, and setup while two-factor is on needs a code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { PASSWORD } from '../../../test/factories.js';
import { bearer, loginRaw, requestMagicLink, verifiedUser } from '../../../test/fixtures/auth.js';
import { startOAuthServer, type OAuthTestServer } from '../../../test/oauth-server.js';
import { totpCode, wrongCode } from '../../../test/totp.js';
import { expectError } from '../../../test/expect.js';

const WRONG = 'Wrong-Password-1';
const MINUTE = 60_000;

let o: OAuthTestServer;
let t: TestApp;
beforeAll(async () => {
  o = await startOAuthServer();
  t = await createTestApp({ env: o.googleEnv });
});
afterAll(async () => {
  await t?.close();
  await o?.close();
});

const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: `/api/v1${url}`, payload, headers });

const statuses = (responses: Array<{ statusCode: number }>) => {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.statusCode] = (counts[r.statusCode] ?? 0) + 1;
  return counts;
};

/** A verified account with two-factor on: its secret, backup codes and a session. */
async function twoFactorAccount(label: string) {
  const user = await verifiedUser(t, label);
  const session = json(await loginRaw(t, user.email, PASSWORD));
  const setup = json(await post('/auth/two-factor/setup', { password: PASSWORD }, bearer(session.accessToken)));
  const on = await post(
    '/auth/two-factor/verify',
    { code: totpCode(setup.secret, t.clock.now()) },
    bearer(session.accessToken),
  );
  expect(on.statusCode, on.body).toBe(200);
  t.clock.advance(30_000);
  return {
    ...user,
    accessToken: session.accessToken as string,
    secret: setup.secret as string,
    backupCodes: setup.backupCodes as string[],
  };
}

/** A social sign-in of a two-factor account: the ticket of its 401 requiresTwoFactor. */
async function socialTicket(email: string): Promise<string> {
  const start = await t.request({ method: 'GET', url: '/api/v1/auth/oauth/google' });
  const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(start.headers['set-cookie']))![1]!;
  const back = await o.authorize(String(start.headers.location), { sub: `lock-${email}`, email, emailVerified: true });
  const res = await t.request({
    method: 'GET',
    url: '/api/v1/auth/oauth/google/callback',
    query: { code: back.code, state: back.state },
    headers: { cookie: `tenantry_oauth_state=${cookie}` },
  });
  expect(res.statusCode, res.body).toBe(401);
  return json(res).twoFactorToken as string;
}

describe('parallel guesses', () => {
  it('20 parallel wrong logins: at most 5 are checked, the rest answer 423 unchecked, and then so does the right password', async () => {
    // All wrong: a right password in the race would end its check by clearing the failures counted
    // before it (a successful sign-in resets the count), so the bound is on the guesses alone.
    const { email } = await verifiedUser(t, 'race-login');
    const counts = statuses(await Promise.all(Array.from({ length: 20 }, () => loginRaw(t, email, WRONG))));
    expect(counts[401] ?? 0, JSON.stringify(counts)).toBeLessThanOrEqual(5);
    expect(counts[423], JSON.stringify(counts)).toBeGreaterThanOrEqual(15);
    expect(
      Object.keys(counts).every((s) => ['401', '423'].includes(s)),
      JSON.stringify(counts),
    ).toBe(true);
    expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(423);
  });

  it('40 parallel wrong codes on one two-factor ticket: at most 5 are checked, and the ticket is dead', async () => {
    const user = await twoFactorAccount('race-ticket');
    const ticket = await socialTicket(user.email);
    const guesses = Array.from({ length: 40 }, (_, i) =>
      post('/auth/two-factor/login', { twoFactorToken: ticket, code: String(100000 + i * 7919).slice(0, 6) }),
    );
    const counts = statuses(await Promise.all(guesses));
    expect(counts[401] ?? 0, JSON.stringify(counts)).toBeLessThanOrEqual(5);
    expect((counts[401] ?? 0) + (counts[423] ?? 0) + (counts[400] ?? 0), JSON.stringify(counts)).toBe(40);
    t.clock.advance(15 * MINUTE + 1000);
    expectError(
      await post('/auth/two-factor/login', { twoFactorToken: ticket, code: totpCode(user.secret, t.clock.now()) }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('parallel wrong passwords on two-factor setup: at most 5 are checked; then sign-in is locked', async () => {
    const user = await verifiedUser(t, 'race-setup');
    const session = json(await loginRaw(t, user.email, PASSWORD));
    const guesses = Array.from({ length: 12 }, () =>
      post('/auth/two-factor/setup', { password: WRONG }, bearer(session.accessToken)),
    );
    const counts = statuses(await Promise.all(guesses));
    expect(counts[401] ?? 0, JSON.stringify(counts)).toBeLessThanOrEqual(5);
    expect(counts[423], JSON.stringify(counts)).toBeGreaterThanOrEqual(7);
    expectError(await loginRaw(t, user.email, PASSWORD), 423, 'ACCOUNT_LOCKED');
  });
});

describe('every password and code check counts', () => {
  it('5 wrong passwords on two-factor setup lock sign-in', async () => {
    const user = await verifiedUser(t, 'count-setup');
    const session = json(await loginRaw(t, user.email, PASSWORD));
    for (let i = 0; i < 5; i++)
      expectError(
        await post('/auth/two-factor/setup', { password: WRONG }, bearer(session.accessToken)),
        401,
        'AUTHENTICATION_ERROR',
      );
    expectError(
      await post('/auth/two-factor/setup', { password: PASSWORD }, bearer(session.accessToken)),
      423,
      'ACCOUNT_LOCKED',
    );
    expectError(await loginRaw(t, user.email, PASSWORD), 423, 'ACCOUNT_LOCKED');
  });

  it('5 wrong passwords on two-factor disable lock sign-in', async () => {
    const user = await twoFactorAccount('count-disable');
    for (let i = 0; i < 5; i++) {
      expectError(
        await post(
          '/auth/two-factor/disable',
          { password: WRONG, code: totpCode(user.secret, t.clock.now()) },
          bearer(user.accessToken),
        ),
        401,
        'AUTHENTICATION_ERROR',
      );
    }
    expectError(
      await post('/auth/login', { email: user.email, password: PASSWORD, twoFactorCode: user.backupCodes[0]! }),
      423,
      'ACCOUNT_LOCKED',
    );
  });

  it('a two-factor ticket dies after 5 wrong codes, even when a success elsewhere cleared the account’s count', async () => {
    const user = await twoFactorAccount('ticket-dies');
    const ticket = await socialTicket(user.email);
    const wrong = () =>
      post('/auth/two-factor/login', { twoFactorToken: ticket, code: wrongCode(user.secret, t.clock.now()) });
    for (let i = 0; i < 3; i++) expectError(await wrong(), 401, 'AUTHENTICATION_ERROR');
    // The owner signs in with a password and a backup code: the account's failure count is cleared.
    expect(
      (await post('/auth/login', { email: user.email, password: PASSWORD, twoFactorCode: user.backupCodes[0]! }))
        .statusCode,
    ).toBe(200);
    for (let i = 0; i < 2; i++) expectError(await wrong(), 401, 'AUTHENTICATION_ERROR');
    t.clock.advance(30_000);
    expectError(
      await post('/auth/two-factor/login', { twoFactorToken: ticket, code: totpCode(user.secret, t.clock.now()) }),
      400,
      'VALIDATION_ERROR',
    );
    // The account itself is not locked: only 2 failures since the success.
    expect(
      (await post('/auth/login', { email: user.email, password: PASSWORD, twoFactorCode: user.backupCodes[1]! }))
        .statusCode,
    ).toBe(200);
  });

  it('a magic link of a two-factor account dies after 5 wrong codes', async () => {
    const user = await twoFactorAccount('link-dies');
    const { token } = await requestMagicLink(t, user.email);
    const wrong = () =>
      post('/auth/magic-link/verify', { token, twoFactorCode: wrongCode(user.secret, t.clock.now()) });
    for (let i = 0; i < 3; i++) expectError(await wrong(), 401, 'AUTHENTICATION_ERROR');
    expect(
      (await post('/auth/login', { email: user.email, password: PASSWORD, twoFactorCode: user.backupCodes[0]! }))
        .statusCode,
    ).toBe(200);
    for (let i = 0; i < 2; i++) expectError(await wrong(), 401, 'AUTHENTICATION_ERROR');
    t.clock.advance(30_000);
    expectError(
      await post('/auth/magic-link/verify', { token, twoFactorCode: totpCode(user.secret, t.clock.now()) }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('the right password with a missing two-factor code does not count as a failure', async () => {
    const user = await twoFactorAccount('no-code');
    for (let i = 0; i < 6; i++) expect((await loginRaw(t, user.email, PASSWORD)).statusCode).toBe(401);
    expect(
      (await post('/auth/login', { email: user.email, password: PASSWORD, twoFactorCode: user.backupCodes[0]! }))
        .statusCode,
    ).toBe(200);
  });

  it('4 failures and then the right password: signed in, and the account is not left locked', async () => {
    const { email } = await verifiedUser(t, 'four-then-right');
    for (let i = 0; i < 4; i++) expect((await loginRaw(t, email, WRONG)).statusCode).toBe(401);
    expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(200);
    expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(200);
  });
});

describe('two-factor setup while two-factor is on', () => {
  it('needs a current code: without one 400, with a wrong one 400; the active secret and backup codes stay', async () => {
    const user = await twoFactorAccount('resetup');
    expectError(
      await post('/auth/two-factor/setup', { password: PASSWORD }, bearer(user.accessToken)),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await post(
        '/auth/two-factor/setup',
        { password: PASSWORD, code: wrongCode(user.secret, t.clock.now()) },
        bearer(user.accessToken),
      ),
      400,
      'VALIDATION_ERROR',
    );
    // Nothing changed: the old backup codes still sign in.
    expect(
      (await post('/auth/login', { email: user.email, password: PASSWORD, twoFactorCode: user.backupCodes[0]! }))
        .statusCode,
    ).toBe(200);
    const ok = await post(
      '/auth/two-factor/setup',
      { password: PASSWORD, code: totpCode(user.secret, t.clock.now()) },
      bearer(user.accessToken),
    );
    expect(ok.statusCode, ok.body).toBe(200);
  });
});
