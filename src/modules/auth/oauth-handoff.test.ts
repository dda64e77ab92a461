// The social sign-in hand-off to the web app (docs/api.md#social-sign-in), against the local OAuth
// server: a flow started with redirectTo ends with a redirect to that page carrying a one-time code
// (or an error), and POST /auth/oauth/exchange turns the code into the sign-in.
import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from '../../../test/harness.js';
import { uniqueEmail } from '../../../test/factories.js';
import { bearer, getMe, loginRaw, verifiedUser } from '../../../test/fixtures/auth.js';
import type { Identity } from '../../../test/oauth-server.js';
import { totpCode } from '../../../test/totp.js';
import { oauthAccounts } from '../../db/tables/auth.js';
import { callback, identity, o, t, useOAuthApp } from '../../../test/fixtures/oauth.js';
import { expectError } from '../../../test/expect.js';

useOAuthApp();

const PAGE = 'http://app.test/sign-in/callback?next=%2Forgs';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** GET /auth/oauth/google?redirectTo=…: the provider URL and the state cookie. */
async function startHandoff(redirectTo = PAGE) {
  const res = await t.request({ method: 'GET', url: '/api/v1/auth/oauth/google', query: { redirectTo } });
  expect(res.statusCode, res.body).toBe(302);
  const url = new URL(res.headers.location as string);
  const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(res.headers['set-cookie']))![1]!;
  return { url, cookie, state: url.searchParams.get('state')! };
}

/** The callback's redirect and its fragment, read as the web app reads it. */
function handedTo(res: Awaited<ReturnType<typeof callback>>) {
  expect(res.statusCode, res.body).toBe(302);
  const location = new URL(res.headers.location as string);
  return {
    location,
    page: `${location.origin}${location.pathname}${location.search}`,
    fragment: Object.fromEntries(new URLSearchParams(location.hash.slice(1))),
  };
}

/** The whole round trip of a hand-off: start with redirectTo, sign in at the provider as `who`, come back. */
async function handoff(who: Identity, redirectTo = PAGE) {
  const s = await startHandoff(redirectTo);
  const back = await o.authorize(s.url.toString(), who);
  return handedTo(await callback('google', { code: back.code, state: back.state }, s.cookie));
}

const exchange = (code: unknown, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: '/api/v1/auth/oauth/exchange', payload: { code }, headers });
const handoffRows = () =>
  queryRows<{ code_hash: string; user_id: string }>(t, sql`select code_hash, user_id from oauth_handoffs`);
const sessionsOf = async (userId: string) =>
  (await queryRows<{ n: number }>(t, sql`select count(*)::int as n from sessions where user_id = ${userId}`))[0]!.n;

describe('the hand-off', () => {
  it('redirects to redirectTo with #code=, and the exchange answers as login does', async () => {
    const email = uniqueEmail('ho-new');
    const { location, page, fragment } = await handoff(identity(email), `${PAGE}#stale`);
    expect(page).toBe(PAGE);
    expect(Object.keys(fragment)).toEqual(['code']);
    expect(fragment.code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.href).not.toMatch(/eyJ/); // no token in the URL
    // Stored hashed, for the account just created.
    const rows = await handoffRows();
    const row = rows.find((r) => r.code_hash === sha256(fragment.code!));
    expect(row).toBeDefined();
    expect(rows.some((r) => r.code_hash === fragment.code)).toBe(false);

    const res = await exchange(fragment.code);
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['accessToken', 'expiresIn', 'organizationId', 'refreshToken', 'user']);
    expect(body.user).toMatchObject({
      id: row!.user_id,
      email,
      emailVerified: expect.any(String),
      twoFactorEnabled: false,
    });
    expect(json(await getMe(t, body.accessToken))).toMatchObject({ id: row!.user_id, email });
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: body.refreshToken } }))
        .statusCode,
    ).toBe(200);
  });

  it('a code works once: a second exchange is 400 and starts no session', async () => {
    const { fragment } = await handoff(identity(uniqueEmail('ho-once')));
    const first = await exchange(fragment.code);
    expect(first.statusCode, first.body).toBe(200);
    const userId = json(first).user.id as string;
    const again = expectError(await exchange(fragment.code), 400, 'VALIDATION_ERROR');
    expect(again.message).toBe('Invalid or expired code');
    expect(await sessionsOf(userId)).toBe(1);
  });

  it('of parallel exchanges of one code, exactly one signs in', async () => {
    const { fragment } = await handoff(identity(uniqueEmail('ho-race')));
    const results = await Promise.all(Array.from({ length: 3 }, () => exchange(fragment.code)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400, 400]);
  });

  it('a code is valid 60 seconds: at 59 s it works, at 60 s it is 400 and changes nothing', async () => {
    const early = await handoff(identity(uniqueEmail('ho-59')));
    t.clock.advance(59_000);
    expect((await exchange(early.fragment.code)).statusCode).toBe(200);

    const late = await handoff(identity(uniqueEmail('ho-60')));
    const [row] = (await handoffRows()).filter((r) => r.code_hash === sha256(late.fragment.code!));
    t.clock.advance(60_000);
    expect(expectError(await exchange(late.fragment.code), 400, 'VALIDATION_ERROR').message).toBe(
      'Invalid or expired code',
    );
    expect(await sessionsOf(row!.user_id)).toBe(0);
    expect((await handoffRows()).some((r) => r.code_hash === row!.code_hash)).toBe(true);
  });

  it('an unknown code, or none, is 400', async () => {
    expect(expectError(await exchange('x'.repeat(43)), 400, 'VALIDATION_ERROR').message).toBe(
      'Invalid or expired code',
    );
    expectError(await exchange(''), 400, 'VALIDATION_ERROR');
    expectError(
      await t.request({ method: 'POST', url: '/api/v1/auth/oauth/exchange', payload: {} }),
      400,
      'VALIDATION_ERROR',
    );
  });
});

describe('redirectTo', () => {
  it.each([
    'http://evil.test/sign-in',
    'http://app.test.evil.com/sign-in',
    'https://app.test/sign-in',
    'http://app.test:8080/sign-in',
    'http://app.test@evil.test/sign-in',
    'http://user:secret@app.test/sign-in',
    'javascript:alert(document.cookie)',
    'data:text/html,<script>alert(1)</script>',
    '//app.test/sign-in',
    '/sign-in',
    'app.test',
    '',
  ])('%j is refused with 400, before any state is stored', async (redirectTo) => {
    const before = (await queryRows(t, sql`select 1 from oauth_states`)).length;
    const res = await t.request({ method: 'GET', url: '/api/v1/auth/oauth/google', query: { redirectTo } });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.headers['set-cookie']).toBeUndefined();
    expect((await queryRows(t, sql`select 1 from oauth_states`)).length).toBe(before);
  });

  it('is taken from the start, never from the callback', async () => {
    const s = await startHandoff();
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('ho-swap')));
    const { page } = handedTo(
      await callback('google', { code: back.code, state: back.state, redirectTo: 'http://evil.test/' }, s.cookie),
    );
    expect(page).toBe(PAGE);
    // A flow started without it answers JSON, whatever the callback's query says.
    const plain = await t.request({ method: 'GET', url: '/api/v1/auth/oauth/google' });
    const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(plain.headers['set-cookie']))![1]!;
    const back2 = await o.authorize(plain.headers.location as string, identity(uniqueEmail('ho-plain')));
    const res = await callback('google', { code: back2.code, state: back2.state, redirectTo: PAGE }, cookie);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).accessToken).toEqual(expect.any(String));
  });
});

describe('failures are handed over too', () => {
  it('an email the provider has not verified: #error=EMAIL_NOT_VERIFIED, nothing created, linked or stored', async () => {
    const email = uniqueEmail('ho-unverified');
    const who = identity(email, false);
    const codes = (await handoffRows()).length;
    const { page, fragment } = await handoff(who);
    expect(page).toBe(PAGE);
    expect(fragment).toEqual({
      error: 'EMAIL_NOT_VERIFIED',
      error_description: 'The provider has not verified this email address',
    });
    expect(
      await t.deps.db
        .select()
        .from(oauthAccounts)
        .where(and(eq(oauthAccounts.provider, 'google'), eq(oauthAccounts.providerAccountId, who.sub))),
    ).toEqual([]);
    expect(await queryRows(t, sql`select id from users where email = ${email}`)).toEqual([]);
    expect((await handoffRows()).length).toBe(codes);
  });

  it('a state that does not match the browser’s: #error=AUTHENTICATION_ERROR', async () => {
    const s = await startHandoff();
    const other = await startHandoff();
    const back = await o.authorize(other.url.toString(), identity(uniqueEmail('ho-state')));
    const { fragment } = handedTo(await callback('google', { code: back.code, state: back.state }, s.cookie));
    expect(fragment).toEqual({ error: 'AUTHENTICATION_ERROR', error_description: 'Invalid OAuth state' });
  });

  it('the provider refused: #error=AUTHENTICATION_ERROR; without the state cookie, the JSON 400 as before', async () => {
    const s = await startHandoff();
    const { fragment } = handedTo(await callback('google', { error: 'access_denied', state: s.state }, s.cookie));
    expect(fragment.error).toBe('AUTHENTICATION_ERROR');
    const lost = await startHandoff();
    const back = await o.authorize(lost.url.toString(), identity(uniqueEmail('ho-nocookie')));
    expectError(await callback('google', { code: back.code, state: back.state }), 400, 'VALIDATION_ERROR');
  });
});

describe('two-factor', () => {
  it('the exchange answers 401 requiresTwoFactor with a ticket; the ticket and a code finish the sign-in, in cookie mode too', async () => {
    const { email, password } = await verifiedUser(t, 'ho-2fa');
    const login = await loginRaw(t, email, password);
    const access = json(login).accessToken as string;
    const setup = await t.request({
      method: 'POST',
      url: '/api/v1/auth/two-factor/setup',
      payload: { password },
      headers: bearer(access),
    });
    const secret = json(setup).secret as string;
    const verify = await t.request({
      method: 'POST',
      url: '/api/v1/auth/two-factor/verify',
      payload: { code: totpCode(secret, t.clock.now()) },
      headers: bearer(access),
    });
    expect(verify.statusCode, verify.body).toBe(200);
    t.clock.advance(30_000);

    const { fragment } = await handoff(identity(email));
    const res = await exchange(fragment.code);
    expectError(res, 401, 'AUTHENTICATION_ERROR');
    expect(json(res)).toMatchObject({ requiresTwoFactor: true, twoFactorToken: expect.any(String) });
    expect(json(res).accessToken).toBeUndefined();

    const done = await t.request({
      method: 'POST',
      url: '/api/v1/auth/two-factor/login',
      payload: { twoFactorToken: json(res).twoFactorToken, code: totpCode(secret, t.clock.now()) },
      headers: { 'x-session-mode': 'cookie' },
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(Object.keys(json(done)).sort()).toEqual(['accessToken', 'expiresIn', 'organizationId', 'user']);
    expect(String(done.headers['set-cookie'])).toMatch(
      /^tenantry_refresh=[\w.-]+; HttpOnly; SameSite=Strict; Path=\/api\/v1\/auth; Max-Age=604800$/,
    );
  });

  it('the exchange in cookie mode sets the refresh cookie and leaves the token out of the body', async () => {
    const { fragment } = await handoff(identity(uniqueEmail('ho-cookie')));
    const res = await exchange(fragment.code, { 'x-session-mode': 'cookie' });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).refreshToken).toBeUndefined();
    expect(String(res.headers['set-cookie'])).toMatch(
      /^tenantry_refresh=[\w.-]+; HttpOnly; SameSite=Strict; Path=\/api\/v1\/auth; Max-Age=604800$/,
    );
  });
});
