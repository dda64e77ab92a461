// Account takeover attempts, each performed through HTTP as an attacker would (docs/security.md):
// squatting an address before its owner (pre-account takeover), social sign-in with an unverified or
// look-alike provider email, and sign-in tickets that outlive a password reset or change.
import { and, eq, sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { PASSWORD, registerUser, uniqueEmail } from '../../../test/factories.js';
import { bearer, getMe, loginRaw, requestMagicLink, verifiedUser } from '../../../test/fixtures/auth.js';
import { startOAuthServer, type Identity, type OAuthTestServer } from '../../../test/oauth-server.js';
import { totpCode } from '../../../test/totp.js';
import { users } from '../../db/tables/users.js';
import { oauthAccounts } from '../../db/tables/auth.js';
import { expectError, waitUntil } from '../../../test/expect.js';

const SQUATTER_PASSWORD = 'Squatters-Secret-7';
const OWNER_PASSWORD = 'Owners-New-Secret-8';

let o: OAuthTestServer;
/** The default configuration: sign-in needs a verified email. */
let t: TestApp;
/** A deployment that lets unverified accounts sign in, so a squatter can set things up. */
let lax: TestApp;
beforeAll(async () => {
  o = await startOAuthServer();
  t = await createTestApp({ env: { ...o.googleEnv, ...o.githubEnv } });
  lax = await createTestApp({ env: { ...o.googleEnv, ...o.githubEnv, AUTH_REQUIRE_EMAIL_VERIFICATION: 'false' } });
});
afterAll(async () => {
  await t?.close();
  await lax?.close();
  await o?.close();
});

const post = (app: TestApp, url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  app.request({ method: 'POST', url: `/api/v1${url}`, payload, headers });

async function magicLinkSignIn(app: TestApp, email: string, twoFactorCode?: string) {
  const { token } = await requestMagicLink(app, email);
  return post(app, '/auth/magic-link/verify', { token, ...(twoFactorCode ? { twoFactorCode } : {}) });
}

async function resetPassword(app: TestApp, email: string, newPassword: string) {
  const before = app.mail.mails.length;
  expect((await post(app, '/auth/password/forgot', { email })).statusCode).toBe(200);
  await waitUntil(
    'the mail arrives',
    () => app.mail.mails.slice(before).some((m) => m.to.includes(email) && /reset/i.test(m.subject)),
    5000,
  );
  const token = await app.mail.tokenFrom(email, /reset/i, '/reset-password');
  return post(app, '/auth/password/reset', { token, newPassword });
}

/** The squatter, on a lax deployment: registers the victim's address, signs in and turns two-factor on. */
async function squatWithTwoFactor(app: TestApp, email: string) {
  const { userId } = await registerUser(app, email, SQUATTER_PASSWORD);
  const session = json(await loginRaw(app, email, SQUATTER_PASSWORD));
  expect(session.accessToken, JSON.stringify(session)).toEqual(expect.any(String));
  const setup = json(
    await post(app, '/auth/two-factor/setup', { password: SQUATTER_PASSWORD }, bearer(session.accessToken)),
  );
  const on = await post(
    app,
    '/auth/two-factor/verify',
    { code: totpCode(setup.secret, app.clock.now()) },
    bearer(session.accessToken),
  );
  expect(on.statusCode, on.body).toBe(200);
  app.clock.advance(30_000);
  return {
    userId,
    accessToken: session.accessToken as string,
    refreshToken: session.refreshToken as string,
    secret: setup.secret as string,
    backupCodes: setup.backupCodes as string[],
  };
}

describe('pre-account takeover: the first proof of an address claims the account fresh', () => {
  it('a magic link: the squatter’s password no longer signs in once the owner proved the address', async () => {
    const email = uniqueEmail('squat-ml');
    await registerUser(t, email, SQUATTER_PASSWORD);
    // The owner cannot register: the address is taken.
    expectError(await post(t, '/auth/register', { email, password: OWNER_PASSWORD }), 409, 'CONFLICT');
    const owner = await magicLinkSignIn(t, email);
    expect(owner.statusCode, owner.body).toBe(200);
    expect(json(owner).user.emailVerified).toEqual(expect.any(String));
    // The address is verified now: without the claim the squatter's password would sign in.
    expectError(await loginRaw(t, email, SQUATTER_PASSWORD), 401, 'AUTHENTICATION_ERROR');
    expect((await getMe(t, json(owner).accessToken)).statusCode).toBe(200);
  });

  it('a magic link: the squatter’s two-factor, backup codes and sessions are dropped; the owner needs none of them', async () => {
    const email = uniqueEmail('squat-ml-2fa');
    const squatter = await squatWithTwoFactor(lax, email);
    const owner = await magicLinkSignIn(lax, email);
    expect(owner.statusCode, owner.body).toBe(200);
    expect(json(owner).user).toMatchObject({ twoFactorEnabled: false, emailVerified: expect.any(String) });
    expectError(await getMe(lax, squatter.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await post(lax, '/auth/refresh', { refreshToken: squatter.refreshToken }), 401, 'AUTHENTICATION_ERROR');
    expectError(await loginRaw(lax, email, SQUATTER_PASSWORD), 401, 'AUTHENTICATION_ERROR');
    const [row] = await lax.deps.db.select().from(users).where(eq(users.id, squatter.userId));
    expect(row).toMatchObject({ passwordHash: null, twoFactorEnabled: false });
    const leftovers = await queryRows(
      lax,
      sql`select (select count(*)::int from two_factor where user_id = ${squatter.userId}) as tf, (select count(*)::int from backup_codes where user_id = ${squatter.userId}) as bc`,
    );
    expect(leftovers).toEqual([{ tf: 0, bc: 0 }]);
  });

  it('a magic link: the squatter cannot keep the owner out by locking the account', async () => {
    const email = uniqueEmail('squat-lock');
    await registerUser(t, email, SQUATTER_PASSWORD);
    for (let i = 0; i < 5; i++) expect((await loginRaw(t, email, 'Wrong-Password-1')).statusCode).toBe(401);
    expectError(await loginRaw(t, email, SQUATTER_PASSWORD), 423, 'ACCOUNT_LOCKED');
    const owner = await magicLinkSignIn(t, email);
    expect(owner.statusCode, owner.body).toBe(200);
  });

  it('a password reset: the squatter’s two-factor and sessions are dropped, the address is verified, the owner signs in with the new password alone', async () => {
    const email = uniqueEmail('squat-reset');
    const squatter = await squatWithTwoFactor(lax, email);
    const reset = await resetPassword(lax, email, OWNER_PASSWORD);
    expect(reset.statusCode, reset.body).toBe(200);
    const owner = await loginRaw(lax, email, OWNER_PASSWORD);
    expect(owner.statusCode, owner.body).toBe(200);
    expect(json(owner).user).toMatchObject({ twoFactorEnabled: false, emailVerified: expect.any(String) });
    expectError(await getMe(lax, squatter.accessToken), 401, 'AUTHENTICATION_ERROR');
    // The squatter's backup codes are gone with the two-factor they belonged to.
    expect(
      await queryRows(lax, sql`select count(*)::int as n from backup_codes where user_id = ${squatter.userId}`),
    ).toEqual([{ n: 0 }]);
  });

  it('a password reset on the default deployment verifies the address, so the owner signs in at once', async () => {
    const email = uniqueEmail('squat-reset-strict');
    await registerUser(t, email, SQUATTER_PASSWORD);
    expect((await resetPassword(t, email, OWNER_PASSWORD)).statusCode).toBe(200);
    expect((await loginRaw(t, email, OWNER_PASSWORD)).statusCode).toBe(200);
    expectError(await loginRaw(t, email, SQUATTER_PASSWORD), 401, 'AUTHENTICATION_ERROR');
  });

  it('a social identity the squatter linked is dropped when the owner proves the address', async () => {
    // On the lax deployment the squatter signs in and links nothing by email (that needs a verified
    // provider email, which only the owner has), so the link is planted as an old version would have.
    const email = uniqueEmail('squat-link');
    const { userId } = await registerUser(lax, email, SQUATTER_PASSWORD);
    await lax.deps.db.insert(oauthAccounts).values({
      id: `tok_planted_${userId}`,
      userId,
      provider: 'github',
      providerAccountId: '424242',
      email,
      createdAt: lax.clock.now(),
    });
    expect((await magicLinkSignIn(lax, email)).statusCode).toBe(200);
    expect(await lax.deps.db.select().from(oauthAccounts).where(eq(oauthAccounts.userId, userId))).toEqual([]);
  });

  it('the verification link of a registration verifies nothing once that registration’s password changed', async () => {
    const email = uniqueEmail('squat-verify');
    await registerUser(lax, email, SQUATTER_PASSWORD);
    const token = await lax.mail.tokenFrom(email, /Verify your email/, '/verify-email');
    const session = json(await loginRaw(lax, email, SQUATTER_PASSWORD));
    const change = await lax.request({
      method: 'PUT',
      url: '/api/v1/users/me/password',
      headers: bearer(session.accessToken),
      payload: { currentPassword: SQUATTER_PASSWORD, newPassword: OWNER_PASSWORD },
    });
    expect(change.statusCode, change.body).toBe(200);
    expectError(await post(lax, '/auth/verify-email', { token }), 400, 'VALIDATION_ERROR');
    expect(json(await getMe(lax, session.accessToken)).emailVerified).toBeNull();
  });

  it('the verification mail says it was asked for at registration and to ignore it otherwise', async () => {
    const email = uniqueEmail('squat-mail');
    await registerUser(t, email, SQUATTER_PASSWORD);
    const mail = await t.mail.waitFor(email, /Verify your email/);
    expect(mail.decoded).toMatch(/registration|registered|signed up|sign-up/i);
    expect(mail.decoded).toMatch(/ignore/i);
  });
});

describe('social sign-in with an unverified or look-alike provider email', () => {
  let sub = 5000;
  const who = (email: string | null, emailVerified: boolean, extra: Partial<Identity> = {}): Identity => ({
    sub: String(++sub),
    email,
    emailVerified,
    name: 'Someone',
    ...extra,
  });

  async function signIn(
    app: TestApp,
    identity: Identity,
    provider: 'google' | 'github',
  ): Promise<LightMyRequestResponse> {
    const start = await app.request({ method: 'GET', url: `/api/v1/auth/oauth/${provider}` });
    expect(start.statusCode, start.body).toBe(302);
    const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(start.headers['set-cookie']))![1]!;
    const back = await o.authorize(String(start.headers.location), identity);
    return app.request({
      method: 'GET',
      url: `/api/v1/auth/oauth/${provider}/callback`,
      query: { code: back.code, state: back.state },
      headers: { cookie: `tenantry_oauth_state=${cookie}` },
    });
  }

  const usersWith = async (app: TestApp, email: string) =>
    app.deps.db
      .select()
      .from(users)
      .where(sql`lower(${users.email}) = ${email.toLowerCase()}`);
  const linksOf = async (app: TestApp, provider: string, providerAccountId: string) =>
    app.deps.db
      .select()
      .from(oauthAccounts)
      .where(and(eq(oauthAccounts.provider, provider), eq(oauthAccounts.providerAccountId, providerAccountId)));

  it('a GitHub account whose unverified primary email is the victim’s creates nothing (403), and never reaches the victim’s account later', async () => {
    const email = uniqueEmail('gh-squat');
    const attacker = who(email, false);
    expectError(await signIn(t, attacker, 'github'), 403, 'EMAIL_NOT_VERIFIED');
    expect(await usersWith(t, email)).toEqual([]);
    expect(await linksOf(t, 'github', attacker.sub)).toEqual([]);
    // The victim registers normally (the address was not taken) and verifies it.
    const { userId } = await registerUser(t, email);
    await t.request({
      method: 'POST',
      url: '/api/v1/auth/verify-email',
      payload: { token: await t.mail.tokenFrom(email, /Verify your email/, '/verify-email') },
    });
    const again = await signIn(t, attacker, 'github');
    expectError(again, 403, 'EMAIL_NOT_VERIFIED');
    expect(await linksOf(t, 'github', attacker.sub)).toEqual([]);
    expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(200);
    expect(json(await loginRaw(t, email, PASSWORD)).user.id).toBe(userId);
  });

  it('GitHub: no fallback to an unverified primary when no email is verified (403)', async () => {
    const email = uniqueEmail('gh-primary');
    const identity = who(email, false, {
      githubEmails: [
        { email, primary: true, verified: false },
        { email: uniqueEmail('gh-other'), primary: false, verified: false },
      ],
    });
    expectError(await signIn(t, identity, 'github'), 403, 'EMAIL_NOT_VERIFIED');
    expect(await usersWith(t, email)).toEqual([]);
  });

  it('GitHub: a verified secondary email is used when the primary is unverified', async () => {
    const primary = uniqueEmail('gh-unverified-primary');
    const secondary = uniqueEmail('gh-verified-secondary');
    const identity = who(primary, false, {
      githubEmails: [
        { email: primary, primary: true, verified: false },
        { email: secondary, primary: false, verified: true },
      ],
    });
    const res = await signIn(t, identity, 'github');
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user.email).toBe(secondary);
    expect(await usersWith(t, primary)).toEqual([]);
  });

  it('Google: an email with email_verified false never links to the existing account (403), nothing stored', async () => {
    const { email, userId } = await verifiedUser(t, 'g-unverified-link');
    const attacker = who(email, false);
    expectError(await signIn(t, attacker, 'google'), 403, 'EMAIL_NOT_VERIFIED');
    expect(await linksOf(t, 'google', attacker.sub)).toEqual([]);
    expect(await t.deps.db.select().from(oauthAccounts).where(eq(oauthAccounts.userId, userId))).toEqual([]);
  });

  it('a provider email with a Kelvin sign (U+212A) does not match the account spelled with k (400, nothing stored)', async () => {
    const local = `kate-${Date.now().toString(36)}`;
    const { email, userId } = await verifiedUser(t, local);
    const lookalike = email.replace(/^k/, '\u212A');
    expect(lookalike).not.toBe(email);
    expect(lookalike.toLowerCase()).toBe(email);
    const attacker = who(lookalike, true);
    const res = await signIn(t, attacker, 'google');
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(await linksOf(t, 'google', attacker.sub)).toEqual([]);
    expect(await t.deps.db.select().from(oauthAccounts).where(eq(oauthAccounts.userId, userId))).toEqual([]);
  });
});

describe('sign-in tickets die with a password reset or change', () => {
  it('a password reset voids an unused magic link', async () => {
    const { email } = await verifiedUser(t, 'void-ml-reset');
    const { token } = await requestMagicLink(t, email);
    expect((await resetPassword(t, email, OWNER_PASSWORD)).statusCode).toBe(200);
    expectError(await post(t, '/auth/magic-link/verify', { token }), 400, 'VALIDATION_ERROR');
  });

  it('a password change voids an unused reset link', async () => {
    const { email } = await verifiedUser(t, 'void-reset');
    const before = t.mail.mails.length;
    await post(t, '/auth/password/forgot', { email });
    await waitUntil('reset mail', () => t.mail.mails.slice(before).some((m) => m.to.includes(email)), 5000);
    const stale = await t.mail.tokenFrom(email, /reset/i, '/reset-password');
    const session = json(await loginRaw(t, email, PASSWORD));
    const change = await t.request({
      method: 'PUT',
      url: '/api/v1/users/me/password',
      headers: bearer(session.accessToken),
      payload: { currentPassword: PASSWORD, newPassword: OWNER_PASSWORD },
    });
    expect(change.statusCode, change.body).toBe(200);
    expectError(
      await post(t, '/auth/password/reset', { token: stale, newPassword: 'Attackers-Choice-1' }),
      400,
      'VALIDATION_ERROR',
    );
    expect((await loginRaw(t, email, OWNER_PASSWORD)).statusCode).toBe(200);
  });

  it('a password change voids an unused magic link', async () => {
    const { email } = await verifiedUser(t, 'void-ml-change');
    const { token } = await requestMagicLink(t, email);
    const session = json(await loginRaw(t, email, PASSWORD));
    const change = await t.request({
      method: 'PUT',
      url: '/api/v1/users/me/password',
      headers: bearer(session.accessToken),
      payload: { currentPassword: PASSWORD, newPassword: OWNER_PASSWORD },
    });
    expect(change.statusCode, change.body).toBe(200);
    expectError(await post(t, '/auth/magic-link/verify', { token }), 400, 'VALIDATION_ERROR');
  });

  it('a password reset voids a two-factor ticket of a social sign-in', async () => {
    const { email } = await verifiedUser(t, 'void-ticket');
    const session = json(await loginRaw(t, email, PASSWORD));
    const setup = json(await post(t, '/auth/two-factor/setup', { password: PASSWORD }, bearer(session.accessToken)));
    expect(
      (
        await post(
          t,
          '/auth/two-factor/verify',
          { code: totpCode(setup.secret, t.clock.now()) },
          bearer(session.accessToken),
        )
      ).statusCode,
    ).toBe(200);
    t.clock.advance(30_000);
    const start = await t.request({ method: 'GET', url: '/api/v1/auth/oauth/google' });
    const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(start.headers['set-cookie']))![1]!;
    const back = await o.authorize(String(start.headers.location), {
      sub: `void-${Date.now()}`,
      email,
      emailVerified: true,
    });
    const cb = await t.request({
      method: 'GET',
      url: '/api/v1/auth/oauth/google/callback',
      query: { code: back.code, state: back.state },
      headers: { cookie: `tenantry_oauth_state=${cookie}` },
    });
    const ticket = json(cb).twoFactorToken as string;
    expect(ticket).toEqual(expect.any(String));
    expect((await resetPassword(t, email, OWNER_PASSWORD)).statusCode).toBe(200);
    expectError(
      await post(t, '/auth/two-factor/login', { twoFactorToken: ticket, code: totpCode(setup.secret, t.clock.now()) }),
      400,
      'VALIDATION_ERROR',
    );
  });
});
