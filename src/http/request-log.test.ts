// No live token in a log: every mailed link (verification, reset, sign-in link, invitation, email
// change) is opened through the app as a browser would, with the service's own logger captured, and
// no log line holds its token; the request line shows the URL with `token=[redacted]`. Likewise a
// provider's authorization code, a token nested in the web app's `?next=`, and other spellings.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createOrg,
  PASSWORD,
  registerUser,
  signedInUser,
  uniqueEmail,
  type SignedInUser,
} from '../../test/factories.js';
import { t, useApp } from '../../test/fixtures/app.js';
import { redactUrl } from './request-log.js';

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

let owner: SignedInUser;
const lines: string[] = [];
useApp({ logTo: (line) => void lines.push(line) });
beforeAll(async () => {
  owner = await signedInUser(t, 'log-owner');
});

/** The URLs of the request lines logged since `from`. */
const loggedUrls = (from: number) =>
  lines
    .slice(from)
    .map((l) => JSON.parse(l) as { msg?: string; req?: { url?: string } })
    .filter((l) => l.msg === 'incoming request')
    .map((l) => l.req!.url!);

/** Opens `path?token=` through the app; no log line holds the token in any spelling. */
async function openMailedLink(path: string, token: string) {
  const from = lines.length;
  const res = await t.request({ method: 'GET', url: `${path}?token=${encodeURIComponent(token)}`, headers: BROWSER });
  expect(res.statusCode).toBeLessThan(600);
  expect(loggedUrls(from)).toEqual([`${path}?token=[redacted]`]);
  expectNowhere(token);
}

function expectNowhere(secret: string) {
  expect(secret.length).toBeGreaterThanOrEqual(8);
  for (const form of new Set([secret, encodeURIComponent(secret), encodeURIComponent(encodeURIComponent(secret))])) {
    const leaking = lines.filter((l) => l.includes(form));
    expect(leaking, `a log line holds ${form}`).toEqual([]);
  }
}

describe('mailed links opened through the app', () => {
  it('the verification link', async () => {
    const email = uniqueEmail('log-verify');
    await registerUser(t, email);
    const token = await t.mail.tokenFrom(email, /Verify your email/, '/verify-email');
    await openMailedLink('/verify-email', token);
    // The page then sends it in a body: not logged either.
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/verify-email', payload: { token } });
    expect(res.statusCode, res.body).toBe(200);
    expectNowhere(token);
  });

  it('the reset link', async () => {
    const email = uniqueEmail('log-reset');
    await registerUser(t, email);
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email } })).statusCode,
    ).toBe(200);
    await openMailedLink('/reset-password', await t.mail.tokenFrom(email, /Reset your password/, '/reset-password'));
  });

  it('the sign-in link', async () => {
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/auth/magic-link', payload: { email: owner.email } })).statusCode,
    ).toBe(200);
    await openMailedLink('/magic-link', await t.mail.tokenFrom(owner.email, /sign-in link/i, '/magic-link'));
  });

  it('the invitation link', async () => {
    const org = await createOrg(t, owner);
    const email = uniqueEmail('log-invitee');
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/invitations`,
      headers: owner.auth,
      payload: { email, role: 'member' },
    });
    expect(res.statusCode, res.body).toBe(201);
    await openMailedLink(
      '/invitations/accept',
      await t.mail.tokenFrom(email, /You are invited/, '/invitations/accept'),
    );
  });

  it('the email-change link', async () => {
    const user = await signedInUser(t, 'log-change');
    const newEmail = uniqueEmail('log-changed');
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users/me/email',
      headers: user.auth,
      payload: { newEmail, password: PASSWORD },
    });
    expect(res.statusCode, res.body).toBe(202);
    await openMailedLink(
      '/confirm-email',
      await t.mail.tokenFrom(newEmail, /Confirm your new email/, '/confirm-email'),
    );
  });
});

describe('other credentials in a URL', () => {
  it('a provider’s authorization code on the social sign-in callback, and token parameters under other names', async () => {
    const from = lines.length;
    const code = 'provider-code-4f8a1c9e2b7d';
    const access = 'access-token-9b2e7c4d1a6f';
    await t.request({
      method: 'GET',
      url: `/api/v1/auth/oauth/google/callback?code=${code}&state=s1`,
      headers: BROWSER,
    });
    await t.request({ method: 'GET', url: `/api/v1/users/me?access_token=${access}&Token=${access}x&page=2` });
    expect(loggedUrls(from)).toEqual([
      '/api/v1/auth/oauth/google/callback?code=[redacted]&state=s1',
      '/api/v1/users/me?access_token=[redacted]&Token=[redacted]&page=2',
    ]);
    expectNowhere(code);
    expectNowhere(access);
  });

  it('a mailed token inside the web app’s ?next= (the invitation page sends a signed-out visitor to sign in and back)', async () => {
    const from = lines.length;
    const token = 'invitation-token-7c1e9a4b2f';
    const next = `/invitations/accept?token=${token}`;
    await t.request({ method: 'GET', url: `/sign-in?next=${encodeURIComponent(next)}`, headers: BROWSER });
    expect(loggedUrls(from)).toEqual([`/sign-in?next=${encodeURIComponent('/invitations/accept?token=[redacted]')}`]);
    expectNowhere(token);
  });
});

describe('redactUrl', () => {
  it('leaves addresses without secrets as they are', () => {
    for (const url of [
      '/',
      '/sign-in',
      '/api/v1/projects?page=2&pageSize=20',
      '/x?next=%2Forgs%3Fa%3D1',
      '/x?flag',
      '/x?a=%E0%A4%A',
    ])
      expect(redactUrl(url)).toBe(url);
  });

  it('hides a name it cannot decode, and a secret given twice or empty', () => {
    expect(redactUrl('/x?%E0%A4%A=abc&a=1')).toBe('/x?%E0%A4%A=[redacted]&a=1');
    expect(redactUrl('/x?token=a&token=b&token=')).toBe('/x?token=[redacted]&token=[redacted]&token=[redacted]');
    expect(redactUrl('/x?to%6Ben=abc')).toBe('/x?to%6Ben=[redacted]');
  });
});
