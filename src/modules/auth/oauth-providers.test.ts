// Social sign-in (docs/decisions.md, social sign-in) against a real local OAuth 2.0 / OIDC server:
// the two-factor step after the callback, GitHub's /user/emails, and providers not configured.
import { describe, expect, it } from 'vitest';
import { createTestApp, json } from '../../../test/harness.js';
import { registerUser, uniqueEmail } from '../../../test/factories.js';
import { getMe, twoFactorUser } from '../../../test/fixtures/auth.js';
import { totpCode, wrongCode } from '../../../test/totp.js';
import { callback, identity, linksOf, o, signIn, start, t, useOAuthApp } from '../../../test/fixtures/oauth.js';
import { expectError } from '../../../test/expect.js';

useOAuthApp();

describe('the callback: two-factor', () => {
  it('answers 401 requiresTwoFactor with a ticket; POST /auth/two-factor/login finishes (wrong code 401, ticket single use)', async () => {
    const { email, userId, ...setup } = await twoFactorUser(t, 'g-2fa');

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
    const { email, ...setup } = await twoFactorUser(t, 'g-2fa-lock');

    const finish = (twoFactorToken: string, code: string) =>
      t.request({ method: 'POST', url: '/api/v1/auth/two-factor/login', payload: { twoFactorToken, code } });
    const who = identity(email);
    const ticket = json(await signIn(who)).twoFactorToken as string;
    t.clock.advance(5 * 60 * 1000 + 1000);
    expectError(await finish(ticket, totpCode(setup.secret, t.clock.now())), 400, 'VALIDATION_ERROR');

    const next = json(await signIn(who)).twoFactorToken as string;
    for (let i = 0; i < 5; i++)
      expect((await finish(next, wrongCode(setup.secret, t.clock.now()))).statusCode).toBe(401);
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
    expectError(
      await callback('github', { code: back.code, state: back.state }, s.cookie),
      401,
      'AUTHENTICATION_ERROR',
    );
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
        const cb = await bare.request({
          method: 'GET',
          url: `/api/v1/auth/oauth/${provider}/callback`,
          query: { code: 'x', state: 'y' },
          headers: { cookie: 'tenantry_oauth_state=y' },
        });
        expectError(cb, 404, 'NOT_FOUND');
      }
      expect((await bare.request({ method: 'GET', url: '/api/v1/auth/oauth/google' })).statusCode).toBe(302);
    } finally {
      await bare.close();
    }
  });
});
