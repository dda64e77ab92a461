// Social sign-in (docs/decisions.md, social sign-in) against a real local OAuth 2.0 / OIDC server:
// the redirect with PKCE and state, the callback's checks (state issued, cookie, single use), the
// code exchange and linking by verified email.
import { createHash, randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { PASSWORD, registerUser, uniqueEmail } from '../../../test/factories.js';
import { getMe, loginRaw, verifiedUser } from '../../../test/fixtures/auth.js';
import { oauthAccounts } from '../../db/tables/auth.js';
import {
  CALLBACK,
  callback,
  identity,
  linksOf,
  o,
  signIn,
  start,
  t,
  useOAuthApp,
} from '../../../test/fixtures/oauth.js';
import { expectError } from '../../../test/expect.js';

useOAuthApp();

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
    expect(Object.keys(body).sort()).toEqual(['accessToken', 'expiresIn', 'organizationId', 'refreshToken', 'user']);
    expect(body.expiresIn).toBe(900);
    expect(body.user).toEqual({
      id: expect.stringMatching(/^usr_/),
      email,
      fullName: 'Social User',
      emailVerified: t.clock.now().toISOString(),
      twoFactorEnabled: false,
    });
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
    const link = await t.deps.db
      .select()
      .from(oauthAccounts)
      .where(and(eq(oauthAccounts.provider, 'google'), eq(oauthAccounts.providerAccountId, who.sub)));
    expect(link).toEqual([]);
  });

  it('creates no account for an unverified provider email (403, nothing stored)', async () => {
    const email = uniqueEmail('g-new-unverified');
    const who = identity(email, false);
    expectError(await signIn(who), 403, 'EMAIL_NOT_VERIFIED');
    expect(
      await t.deps.db
        .select()
        .from(oauthAccounts)
        .where(and(eq(oauthAccounts.provider, 'google'), eq(oauthAccounts.providerAccountId, who.sub))),
    ).toEqual([]);
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
    expectError(
      await callback('google', { code: back.code, state: back.state }, other.cookie),
      400,
      'VALIDATION_ERROR',
    );
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
    expectError(
      await callback('google', { code: back.code, state: back.state }, s.cookie),
      401,
      'AUTHENTICATION_ERROR',
    );
  });

  it('of parallel callbacks with one state, exactly one signs in', async () => {
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), identity(uniqueEmail('race')));
    const results = await Promise.all(
      Array.from({ length: 3 }, () => callback('google', { code: back.code, state: back.state }, s.cookie)),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400, 400]);
  });

  it('answers 401 for a code that was already exchanged, brought back with a fresh state', async () => {
    const who = identity(uniqueEmail('usedcode'));
    const s = await start('google');
    const back = await o.authorize(s.url.toString(), who);
    expect((await callback('google', { code: back.code, state: back.state }, s.cookie)).statusCode).toBe(200);
    const fresh = await start('google');
    expectError(
      await callback('google', { code: back.code, state: fresh.state }, fresh.cookie),
      401,
      'AUTHENTICATION_ERROR',
    );
  });

  it('answers 401 when the provider reports an error instead of a code', async () => {
    const s = await start('google');
    expectError(
      await callback('google', { error: 'access_denied', state: s.state }, s.cookie),
      401,
      'AUTHENTICATION_ERROR',
    );
  });

  it('answers 400 without code or state', async () => {
    const s = await start('google');
    expectError(await callback('google', { state: s.state }, s.cookie), 400, 'VALIDATION_ERROR');
  });
});
