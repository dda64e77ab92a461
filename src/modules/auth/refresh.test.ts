// Refresh rotation with reuse detection (docs/api.md#tokens-and-refresh), access token validity and logout.
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { login, signedInUser } from '../../../test/factories.js';
import { bearer, decodeJwt, getMe, refreshRaw, signHs256, unsignedJwt } from '../../../test/fixtures/auth.js';
import { expectError } from '../../../test/expect.js';

useApp();

const SECOND = 1000;
const DAY = 24 * 60 * 60 * SECOND;

async function refreshOk(refreshToken: string) {
  const res = await refreshRaw(t, refreshToken);
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { accessToken: string; refreshToken: string; expiresIn: number };
}

describe('POST /auth/refresh', () => {
  it('rotates: new access and refresh tokens with expiresIn; the old refresh token then fails', async () => {
    const user = await signedInUser(t, 'rotate');
    t.clock.advance(SECOND);
    const res = await refreshRaw(t, user.refreshToken);
    expect(res.statusCode, res.body).toBe(200);
    const next = json(res);
    expect(Object.keys(next).sort()).toEqual(['accessToken', 'expiresIn', 'organizationId', 'refreshToken']);
    expect(next.expiresIn).toBe(900);
    expect(next.refreshToken).not.toBe(user.refreshToken);
    expect(next.accessToken).not.toBe(user.accessToken);

    const oldClaims = decodeJwt(user.accessToken).payload;
    const claims = decodeJwt(next.accessToken).payload;
    expect(claims).toMatchObject({
      userId: user.userId,
      email: user.email,
      sessionId: oldClaims.sessionId,
      iss: 'tenantry',
    });
    expect(claims.exp).toBe((claims.iat as number) + 900);
    const refreshClaims = decodeJwt(next.refreshToken).payload;
    expect(refreshClaims).toMatchObject({ userId: user.userId, sessionId: oldClaims.sessionId, iss: 'tenantry' });
    expect(refreshClaims.exp).toBe((refreshClaims.iat as number) + 7 * 24 * 60 * 60);

    expect((await getMe(t, next.accessToken)).statusCode).toBe(200);
    t.clock.advance(11 * SECOND);
    expectError(await refreshRaw(t, user.refreshToken), 401, 'AUTHENTICATION_ERROR');
  });

  it('inside the grace, reusing the just-consumed token is 401 but the session stays alive', async () => {
    const user = await signedInUser(t, 'grace');
    const next = await refreshOk(user.refreshToken);
    t.clock.advance(5 * SECOND);
    expectError(await refreshRaw(t, user.refreshToken), 401, 'AUTHENTICATION_ERROR');
    expect((await getMe(t, next.accessToken)).statusCode).toBe(200);
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
    const third = await refreshOk(next.refreshToken);
    expect((await getMe(t, third.accessToken)).statusCode).toBe(200);
  });

  it('after the grace, reusing a consumed token revokes the whole session', async () => {
    const user = await signedInUser(t, 'reuse');
    const next = await refreshOk(user.refreshToken);
    expect((await getMe(t, next.accessToken)).statusCode).toBe(200);
    t.clock.advance(11 * SECOND);
    expectError(await refreshRaw(t, user.refreshToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await getMe(t, next.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await getMe(t, user.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await refreshRaw(t, next.refreshToken), 401, 'AUTHENTICATION_ERROR');
  });

  it('a token two rotations old, replayed at once, revokes the session too', async () => {
    const user = await signedInUser(t, 'reuse-old');
    const second = await refreshOk(user.refreshToken);
    const third = await refreshOk(second.refreshToken);
    expectError(await refreshRaw(t, user.refreshToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await getMe(t, third.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await refreshRaw(t, third.refreshToken), 401, 'AUTHENTICATION_ERROR');
  });

  it('reuse revokes only that session, not the user’s others', async () => {
    const user = await signedInUser(t, 'reuse-one');
    const other = await login(t, user.email);
    await refreshOk(user.refreshToken);
    t.clock.advance(11 * SECOND);
    expectError(await refreshRaw(t, user.refreshToken), 401, 'AUTHENTICATION_ERROR');
    expect((await getMe(t, other.accessToken)).statusCode).toBe(200);
    await refreshOk(other.refreshToken);
  });

  it('refuses an access token, garbage, an empty or missing token', async () => {
    const user = await signedInUser(t, 'garbage');
    expectError(await refreshRaw(t, user.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await refreshRaw(t, 'not.a.jwt'), 401, 'AUTHENTICATION_ERROR');
    expectError(await refreshRaw(t, 'garbage'), 401, 'AUTHENTICATION_ERROR');
    expectError(await refreshRaw(t, ''), 400, 'VALIDATION_ERROR');
    const missing = await t.request({ method: 'POST', url: '/api/v1/auth/refresh', payload: {} });
    expect(expectError(missing, 400, 'VALIDATION_ERROR').details).toContain('refreshToken');
    // The session is untouched by those attempts.
    await refreshOk(user.refreshToken);
  });

  it('refuses forged refresh tokens: another secret, alg none', async () => {
    const user = await signedInUser(t, 'forged-refresh');
    const claims = decodeJwt(user.refreshToken).payload;
    expectError(
      await refreshRaw(t, signHs256(claims, 'another-secret-0123456789abcdefghijklmnop')),
      401,
      'AUTHENTICATION_ERROR',
    );
    expectError(await refreshRaw(t, unsignedJwt(claims)), 401, 'AUTHENTICATION_ERROR');
    // Signed with the access secret (the refresh secret must be separate).
    expectError(await refreshRaw(t, signHs256(claims, t.deps.config.jwtSecret)), 401, 'AUTHENTICATION_ERROR');
    await refreshOk(user.refreshToken);
  });

  it('refuses a refresh token after 7 days', async () => {
    const user = await signedInUser(t, 'expired-refresh');
    t.clock.advance(7 * DAY + SECOND);
    expectError(await refreshRaw(t, user.refreshToken), 401, 'AUTHENTICATION_ERROR');
  });

  it('a refresh token just before 7 days still works, and extends the session past its first expiry', async () => {
    const user = await signedInUser(t, 'late-refresh');
    // The session is checked (and remembered) while it has its first expiry.
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
    t.clock.advance(7 * DAY - 2 * SECOND);
    const next = await refreshOk(user.refreshToken);
    t.clock.advance(5 * SECOND);
    expect((await getMe(t, next.accessToken)).statusCode).toBe(200);
    await refreshOk(next.refreshToken);
  });
});

describe('access tokens', () => {
  it('work for 15 minutes, then 401', async () => {
    const user = await signedInUser(t, 'access-exp');
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
    t.clock.advance(15 * 60 * SECOND - 1500);
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
    t.clock.advance(1500);
    expectError(await getMe(t, user.accessToken), 401, 'AUTHENTICATION_ERROR');
    // The session itself lives on: the refresh token gives a fresh access token.
    const next = await refreshOk(user.refreshToken);
    expect((await getMe(t, next.accessToken)).statusCode).toBe(200);
  });

  it('refuses a token signed with another secret, alg none, a refresh token, and malformed headers', async () => {
    const user = await signedInUser(t, 'forged-access');
    const claims = decodeJwt(user.accessToken).payload;
    const cases: Array<[string, Record<string, string>]> = [
      ['other secret', bearer(signHs256(claims, 'another-secret-0123456789abcdefghijklmnop'))],
      ['refresh secret', bearer(signHs256(claims, t.deps.config.jwtRefreshSecret))],
      ['HS512 with the right secret', bearer(signHs256(claims, t.deps.config.jwtSecret, 'HS512'))],
      ['alg none', bearer(unsignedJwt(claims))],
      ['alg none, signature kept', bearer(`${unsignedJwt(claims)}${user.accessToken.split('.')[2]}`)],
      ['refresh token', bearer(user.refreshToken)],
      ['garbage', bearer('garbage')],
      ['other issuer', bearer(signHs256({ ...claims, iss: 'someone-else' }, t.deps.config.jwtSecret))],
      ['no exp', bearer(signHs256({ ...claims, exp: undefined }, t.deps.config.jwtSecret))],
      ['basic scheme', { authorization: `Basic ${user.accessToken}` }],
    ];
    for (const [name, headers] of cases) {
      const res = await t.request({ method: 'GET', url: '/api/v1/users/me', headers });
      expect(res.statusCode, `${name}: ${res.body}`).toBe(401);
      expect(json(res).error.code).toBe('AUTHENTICATION_ERROR');
    }
    expect((await t.request({ method: 'GET', url: '/api/v1/users/me' })).statusCode).toBe(401);
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
  });

  it('refuses a correctly signed token whose session does not exist or belongs to someone else', async () => {
    const a = await signedInUser(t, 'forge-a');
    const b = await signedInUser(t, 'forge-b');
    const claims = decodeJwt(a.accessToken).payload;
    const noSession = signHs256({ ...claims, sessionId: 'ses_01jzzzzzzzzzzzzzzzzzzzzzzz' }, t.deps.config.jwtSecret);
    expectError(await getMe(t, noSession), 401, 'AUTHENTICATION_ERROR');
    const otherSession = signHs256(
      { ...claims, sessionId: decodeJwt(b.accessToken).payload.sessionId },
      t.deps.config.jwtSecret,
    );
    expectError(await getMe(t, otherSession), 401, 'AUTHENTICATION_ERROR');
  });
});

describe('POST /auth/logout', () => {
  it('revokes the current session: its access and refresh tokens fail at once', async () => {
    const user = await signedInUser(t, 'logout');
    const other = await login(t, user.email);
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers: user.auth });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ message: expect.any(String) });
    expectError(await getMe(t, user.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await refreshRaw(t, user.refreshToken), 401, 'AUTHENTICATION_ERROR');
    expectError(
      await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers: user.auth }),
      401,
      'AUTHENTICATION_ERROR',
    );
    // Another session of the same user is untouched.
    expect((await getMe(t, other.accessToken)).statusCode).toBe(200);
    await refreshOk(other.refreshToken);
  });

  it('revokes the tokens obtained by refresh as well', async () => {
    const user = await signedInUser(t, 'logout-rotated');
    const next = await refreshOk(user.refreshToken);
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(next.accessToken) })).statusCode,
    ).toBe(200);
    expectError(await getMe(t, user.accessToken), 401, 'AUTHENTICATION_ERROR');
    expectError(await refreshRaw(t, next.refreshToken), 401, 'AUTHENTICATION_ERROR');
  });

  it('requires a bearer token', async () => {
    expectError(await t.request({ method: 'POST', url: '/api/v1/auth/logout' }), 401, 'AUTHENTICATION_ERROR');
  });
});
