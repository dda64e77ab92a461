// Social sign-in (DECISIONS §2) against a real local OAuth 2.0 / OIDC server (oauth2-mock-server):
// the redirect with PKCE and state, the callback's checks (state issued, cookie, single use), the
// code exchange, linking by verified email, the two-factor step, and GitHub's /user/emails.
import { createHash, randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { PASSWORD, registerUser, uniqueEmail } from '../../../test/factories.js';
import { bearer, expectError, getMe, loginRaw, verifiedUser } from '../../../test/auth-helpers.js';
import { startOAuthServer, type Identity, type OAuthTestServer } from '../../../test/oauth-server.js';
import { totpCode, wrongCode } from '../../../test/totp.js';
import { oauthAccounts } from '../../db/tables/auth.js';

let o: OAuthTestServer;
let t: TestApp;
beforeAll(async () => {
  o = await startOAuthServer();
  t = await createTestApp({ env: { ...o.googleEnv, ...o.githubEnv } });
});
afterAll(async () => {
  await t?.close();
  await o?.close();
});

const CALLBACK = 'http://localhost:3000/api/v1/auth/oauth/google/callback';
let subCounter = 1000;
const identity = (email: string | null, emailVerified = true, extra: Partial<Identity> = {}): Identity => ({
  sub: String(++subCounter),
  email,
  emailVerified,
  name: 'Social User',
  ...extra,
});

/** GET /auth/oauth/{provider}: the provider URL, the state and the state cookie. */
async function start(provider = 'google') {
  const res = await t.request({ method: 'GET', url: `/api/v1/auth/oauth/${provider}` });
  expect(res.statusCode, res.body).toBe(302);
  const url = new URL(res.headers.location as string);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = /^tenantry_oauth_state=([^;]+)/.exec(setCookie)?.[1];
  return { res, url, setCookie, cookie: cookie!, state: url.searchParams.get('state')! };
}

const callback = (provider: string, query: Record<string, string>, cookie?: string) =>
  t.request({
    method: 'GET',
    url: `/api/v1/auth/oauth/${provider}/callback`,
    query,
    headers: cookie === undefined ? {} : { cookie: `other=1; tenantry_oauth_state=${cookie}` },
  });

/** The whole browser round trip: start, sign in at the provider as `who`, come back. */
async function signIn(who: Identity, provider = 'google'): Promise<LightMyRequestResponse> {
  const s = await start(provider);
  const back = await o.authorize(s.url.toString(), who);
  expect(back.state).toBe(s.state);
  return callback(provider, { code: back.code, state: back.state }, s.cookie);
}

const linksOf = (userId: string) => t.deps.db.select().from(oauthAccounts).where(eq(oauthAccounts.userId, userId));

describe('starting social sign-in', () => {
  it('redirects to the provider with client_id, redirect_uri, PKCE S256, state and scope, and sets the state cookie', async () => {
    const s = await start('google');
    expect(`${s.url.origin}${s.url.pathname}`).toBe(`${o.issuer}/authorize`);
    const q = Object.fromEntries(s.url.searchParams);
    expect(q).toMatchObject({
      response_type: 'code',
      client_id: 'google-client-id',
      redirect_uri: CALLBACK,
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      state: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/),
    });
    expect(q.scope!.split(' ')).toEqual(expect.arrayContaining(['openid', 'email']));
    expect(s.cookie).toBe(s.state);
    expect(s.setCookie).toMatch(/HttpOnly/i);
    expect(s.setCookie).toMatch(/SameSite=Lax/i);
    expect(s.setCookie).toMatch(/Path=\/api\/v1\/auth\/oauth/);
    // Each start is a new state and a new challenge.
    const again = await start('google');
    expect(again.state).not.toBe(s.state);
    expect(again.url.searchParams.get('code_challenge')).not.toBe(q.code_challenge);
  });

  it('sends the PKCE verifier matching the challenge when it exchanges the code', async () => {
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('pkce')));
    const before = o.tokenRequests.length;
    const res = await callback('google', { code: back.code, state: back.state }, s.cookie);
    expect(res.statusCode, res.body).toBe(200);
    const sent = o.tokenRequests[before]!;
    expect(sent).toMatchObject({ grant_type: 'authorization_code', code: back.code, redirect_uri: CALLBACK });
    const challenge = createHash('sha256').update(String(sent.code_verifier)).digest('base64url');
    expect(challenge).toBe(s.url.searchParams.get('code_challenge'));
  });
});

describe('the callback: accounts', () => {
  it('creates a verified account with the provider email and answers as login does', async () => {
    const email = uniqueEmail('g-new');
    const res = await signIn(identity(email.toUpperCase()));
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['accessToken', 'expiresIn', 'refreshToken', 'user']);
    expect(body.expiresIn).toBe(900);
    expect(body.user).toEqual({ id: expect.stringMatching(/^usr_/), email, fullName: 'Social User', emailVerified: t.clock.now().toISOString(), twoFactorEnabled: false });
    // The state cookie is cleared.
    expect(String(res.headers['set-cookie'])).toMatch(/tenantry_oauth_state=;.*Max-Age=0/);
    const me = await getMe(t, body.accessToken);
    expect(json(me)).toMatchObject({ id: body.user.id, email, emailVerified: expect.any(String) });
  });

  it('a second sign-in with the same provider identity reaches the same account', async () => {
    const who = identity(uniqueEmail('g-again'));
    const first = json(await signIn(who));
    const second = await signIn(who);
    expect(second.statusCode, second.body).toBe(200);
    expect(json(second).user.id).toBe(first.user.id);
    expect(await linksOf(first.user.id)).toHaveLength(1);
  });

  it('links to an existing password account with the same (verified) email, whatever its case', async () => {
    const { email, userId } = await verifiedUser(t, 'g-link');
    const res = await signIn(identity(email.toUpperCase()));
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user.id).toBe(userId);
    expect(await linksOf(userId)).toEqual([expect.objectContaining({ provider: 'google', userId })]);
    // The password still works.
    expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(200);
  });

  it('claims an account whose email was never verified: the password set without proof of the address stops working', async () => {
    // Someone registers the address first (pre-account takeover), never verifying it.
    const { email, userId } = await registerUser(t, uniqueEmail('g-claim'));
    const res = await signIn(identity(email));
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user).toMatchObject({ id: userId, emailVerified: t.clock.now().toISOString() });
    // The email is verified now, so the squatter's password would otherwise sign in.
    expectError(await loginRaw(t, email, PASSWORD), 401, 'AUTHENTICATION_ERROR');
    expect((await getMe(t, json(res).accessToken)).statusCode).toBe(200);
  });

  it('never links an unverified provider email to an existing account (403)', async () => {
    const { email, userId } = await verifiedUser(t, 'g-unverified');
    const who = identity(email, false);
    expectError(await signIn(who), 403, 'EMAIL_NOT_VERIFIED');
    expect(await linksOf(userId)).toEqual([]);
    const link = await t.deps.db.select().from(oauthAccounts).where(and(eq(oauthAccounts.provider, 'google'), eq(oauthAccounts.providerAccountId, who.sub)));
    expect(link).toEqual([]);
  });

  it('creates no account for an unverified provider email (403, nothing stored)', async () => {
    const email = uniqueEmail('g-new-unverified');
    const who = identity(email, false);
    expectError(await signIn(who), 403, 'EMAIL_NOT_VERIFIED');
    expect(await t.deps.db.select().from(oauthAccounts).where(and(eq(oauthAccounts.provider, 'google'), eq(oauthAccounts.providerAccountId, who.sub)))).toEqual([]);
    // The address is still free to register.
    await registerUser(t, email);
  });

  it('a provider that shares no email is refused with 400', async () => {
    expectError(await signIn(identity(null)), 400, 'VALIDATION_ERROR');
  });
});

describe('the callback: state and code', () => {
  it('refuses a state it never issued (400), even with a matching cookie', async () => {
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('forged')));
    const forged = randomBytes(32).toString('base64url');
    expectError(await callback('google', { code: back.code, state: forged }, forged), 400, 'VALIDATION_ERROR');
  });

  it('refuses a state without the matching cookie (400): missing, or another browser’s', async () => {
    const s = await start('google');
    const other = await start('google');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('nocookie')));
    expectError(await callback('google', { code: back.code, state: back.state }), 400, 'VALIDATION_ERROR');
    expectError(await callback('google', { code: back.code, state: back.state }, other.cookie), 400, 'VALIDATION_ERROR');
  });

  it('refuses a replayed callback: the state works once (400)', async () => {
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('replay')));
    const first = await callback('google', { code: back.code, state: back.state }, s.cookie);
    expect(first.statusCode, first.body).toBe(200);
    expectError(await callback('google', { code: back.code, state: back.state }, s.cookie), 400, 'VALIDATION_ERROR');
  });

  it('refuses a state issued for another provider (400)', async () => {
    const s = await start('github');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('crossprov')));
    expectError(await callback('google', { code: back.code, state: back.state }, s.cookie), 400, 'VALIDATION_ERROR');
  });

  it('refuses a state older than 10 minutes (400)', async () => {
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('oldstate')));
    t.clock.advance(10 * 60 * 1000 + 1000);
    expectError(await callback('google', { code: back.code, state: back.state }, s.cookie), 400, 'VALIDATION_ERROR');
  });

  it('answers 401 when the provider refuses the code (invalid_grant)', async () => {
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('badcode')));
    o.refuseNextCode();
    expectError(await callback('google', { code: back.code, state: back.state }, s.cookie), 401, 'AUTHENTICATION_ERROR');
  });

  it('of parallel callbacks with one state, exactly one signs in', async () => {
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('race')));
    const results = await Promise.all(Array.from({ length: 3 }, () => callback('google', { code: back.code, state: back.state }, s.cookie)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400, 400]);
  });

  it('answers 401 for a code that was already exchanged, brought back with a fresh state', async () => {
    const who = identity(uniqueEmail('usedcode'));
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), who);
    expect((await callback('google', { code: back.code, state: back.state }, s.cookie)).statusCode).toBe(200);
    const fresh = await start('google');
    expectError(await callback('google', { code: back.code, state: fresh.state }, fresh.cookie), 401, 'AUTHENTICATION_ERROR');
  });

  it('answers 401 when the provider reports an error instead of a code', async () => {
    const s = await start('google');
    expectError(await callback('google', { error: 'access_denied', state: s.state }, s.cookie), 401, 'AUTHENTICATION_ERROR');
  });

  it('answers 400 without code or state', async () => {
    const s = await start('google');
    expectError(await callback('google', { state: s.state }, s.cookie), 400, 'VALIDATION_ERROR');
  });
});

describe('the callback: two-factor', () => {
  it('answers 401 requiresTwoFactor with a ticket; POST /auth/two-factor/login finishes (wrong code 401, ticket single use)', async () => {
    const { email, userId } = await verifiedUser(t, 'g-2fa');
    const session = json(await loginRaw(t, email, PASSWORD));
    const setup = json(await t.request({ method: 'POST', url: '/api/v1/auth/two-factor/setup', payload: { password: PASSWORD }, headers: bearer(session.accessToken) }));
    const enable = await t.request({
      method: 'POST',
      url: '/api/v1/auth/two-factor/verify',
      payload: { code: totpCode(setup.secret, t.clock.now()) },
      headers: bearer(session.accessToken),
    });
    expect(enable.statusCode, enable.body).toBe(200);
    t.clock.advance(30 * 1000);

    const res = await signIn(identity(email));
    expect(res.statusCode, res.body).toBe(401);
    const body = json(res);
    expect(body).toMatchObject({
      success: false,
      error: { code: 'AUTHENTICATION_ERROR', message: 'Two-factor code required' },
      requiresTwoFactor: true,
      twoFactorToken: expect.any(String),
    });
    expect(body).not.toHaveProperty('accessToken');

    const finish = (code: string, twoFactorToken = body.twoFactorToken as string) =>
      t.request({ method: 'POST', url: '/api/v1/auth/two-factor/login', payload: { twoFactorToken, code } });
    expectError(await finish(wrongCode(setup.secret, t.clock.now())), 401, 'AUTHENTICATION_ERROR');
    expectError(await finish(totpCode(setup.secret, t.clock.now()), 'not-a-ticket'), 400, 'VALIDATION_ERROR');
    const ok = await finish(totpCode(setup.secret, t.clock.now()));
    expect(ok.statusCode, ok.body).toBe(200);
    expect(json(ok).user).toMatchObject({ id: userId, email, twoFactorEnabled: true });
    expect((await getMe(t, json(ok).accessToken)).statusCode).toBe(200);

    // The ticket is spent, even with another valid code.
    expectError(await finish(setup.backupCodes[0]), 400, 'VALIDATION_ERROR');
  });

  it('the ticket expires after 5 minutes, and wrong codes there count toward the lockout', async () => {
    const { email } = await verifiedUser(t, 'g-2fa-lock');
    const session = json(await loginRaw(t, email, PASSWORD));
    const setup = json(await t.request({ method: 'POST', url: '/api/v1/auth/two-factor/setup', payload: { password: PASSWORD }, headers: bearer(session.accessToken) }));
    await t.request({ method: 'POST', url: '/api/v1/auth/two-factor/verify', payload: { code: totpCode(setup.secret, t.clock.now()) }, headers: bearer(session.accessToken) });
    t.clock.advance(30 * 1000);

    const finish = (twoFactorToken: string, code: string) => t.request({ method: 'POST', url: '/api/v1/auth/two-factor/login', payload: { twoFactorToken, code } });
    const who = identity(email);
    const ticket = json(await signIn(who)).twoFactorToken as string;
    t.clock.advance(5 * 60 * 1000 + 1000);
    expectError(await finish(ticket, totpCode(setup.secret, t.clock.now())), 400, 'VALIDATION_ERROR');

    const next = json(await signIn(who)).twoFactorToken as string;
    for (let i = 0; i < 5; i++) expect((await finish(next, wrongCode(setup.secret, t.clock.now()))).statusCode).toBe(401);
    // Five wrong codes spend the ticket, and lock the account.
    expectError(await finish(next, totpCode(setup.secret, t.clock.now())), 400, 'VALIDATION_ERROR');
    // The social callback itself answers 423 while the account is locked.
    expectError(await signIn(who), 423, 'ACCOUNT_LOCKED');
  });
});

describe('GitHub', () => {
  it('signs in with the primary verified email from /user/emails', async () => {
    const primary = uniqueEmail('gh-primary');
    const who = identity(null, true, {
      name: 'Octo Cat',
      githubEmails: [
        { email: uniqueEmail('gh-secondary'), primary: false, verified: true },
        { email: primary, primary: true, verified: true },
      ],
    });
    const s = await start('github');
    expect(`${s.url.origin}${s.url.pathname}`).toBe(`${o.issuer}/authorize`);
    expect(s.url.searchParams.get('client_id')).toBe('github-client-id');
    expect(s.url.searchParams.get('redirect_uri')).toBe('http://localhost:3000/api/v1/auth/oauth/github/callback');
    expect(s.url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(s.url.searchParams.get('scope')!.split(' ')).toContain('user:email');

    const back = await o.authorize(s.url.toString(), who);
    const res = await callback('github', { code: back.code, state: back.state }, s.cookie);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user).toMatchObject({ email: primary, fullName: 'Octo Cat', emailVerified: expect.any(String) });
    const links = await linksOf(json(res).user.id);
    expect(links).toEqual([expect.objectContaining({ provider: 'github', providerAccountId: who.sub })]);

    // The same GitHub identity again: the same account.
    const again = await signIn(who, 'github');
    expect(json(again).user.id).toBe(json(res).user.id);
  });

  it('answers 401 when GitHub refuses the code the GitHub way (200 with an error body)', async () => {
    const s = await start('github');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('gh-badcode')));
    o.refuseNextCode(200, 'bad_verification_code');
    expectError(await callback('github', { code: back.code, state: back.state }, s.cookie), 401, 'AUTHENTICATION_ERROR');
  });

  it('links a GitHub identity and a Google identity with the same verified email to one account', async () => {
    const { email, userId } = await registerUser(t, uniqueEmail('gh-both'));
    const g = await signIn(identity(email));
    expect(g.statusCode, g.body).toBe(200);
    expect(json(g).user.id).toBe(userId);
    const gh = await signIn(identity(email), 'github');
    expect(gh.statusCode, gh.body).toBe(200);
    expect(json(gh).user.id).toBe(userId);
    expect((await linksOf(userId)).map((l) => l.provider).sort()).toEqual(['github', 'google']);
  });
});

describe('providers that are not configured', () => {
  it('answers 404 on both routes for an unconfigured or unknown provider', async () => {
    const bare = await createTestApp({ env: o.googleEnv, clock: t.clock });
    try {
      for (const provider of ['github', 'facebook']) {
        const startRes = await bare.request({ method: 'GET', url: `/api/v1/auth/oauth/${provider}` });
        expectError(startRes, 404, 'NOT_FOUND');
        const cb = await bare.request({ method: 'GET', url: `/api/v1/auth/oauth/${provider}/callback`, query: { code: 'x', state: 'y' }, headers: { cookie: 'tenantry_oauth_state=y' } });
        expectError(cb, 404, 'NOT_FOUND');
      }
      expect((await bare.request({ method: 'GET', url: '/api/v1/auth/oauth/google' })).statusCode).toBe(302);
    } finally {
      await bare.close();
    }
  });
});
