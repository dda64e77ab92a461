// A revoked session fails at once, on every instance (docs/api.md#bearer-access-tokens). With Redis (TEST_REDIS_URL) the
// token is used on instance B, so B has cached the session as active, and revoked on instance A on
// the same database; B's very next request must be refused. Without Redis there is one instance
// (the service's documented limit), and the same scenario runs on it.
import { describe, expect, it } from 'vitest';
import { json, onRedis, type TestApp } from '../../../test/harness.js';
import { a, b, useTwoInstances } from '../../../test/fixtures/instances.js';
import { login, PASSWORD, signedInUser } from '../../../test/factories.js';

useTwoInstances();

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const meOn = (app: TestApp, token: string) =>
  app.request({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) });

async function sessionIdOf(token: string): Promise<string> {
  const res = await a.request({ method: 'GET', url: '/api/v1/users/me/sessions', headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).sessions.find((s: { isCurrent: boolean }) => s.isCurrent).id;
}

/** B has seen the token and holds its session as active. */
async function warmOnB(token: string) {
  for (let i = 0; i < 2; i++) expect((await meOn(b, token)).statusCode).toBe(200);
}

function expectRefusedOnB(res: Awaited<ReturnType<typeof meOn>>) {
  expect(res.statusCode, res.body).toBe(401);
  expect(json(res)).toEqual({
    success: false,
    error: { code: 'AUTHENTICATION_ERROR', message: expect.any(String), details: expect.any(String) },
  });
}

describe(
  onRedis ? 'revocation across two instances sharing Redis' : 'revocation on a single instance (no Redis)',
  () => {
    it('is two instances exactly when Redis is configured', () => {
      expect(b !== a).toBe(onRedis);
      if (onRedis) expect(b.deps.redisPrefix).toBe(a.deps.redisPrefix);
    });

    it('DELETE /users/me/sessions/{id} on A: the session is refused on B at once', async () => {
      const u = await signedInUser(a, 'cross-one');
      const target = await login(a, u.email);
      await warmOnB(target.accessToken);
      await warmOnB(u.accessToken);

      const res = await a.request({
        method: 'DELETE',
        url: `/api/v1/users/me/sessions/${await sessionIdOf(target.accessToken)}`,
        headers: u.auth,
      });
      expect(res.statusCode, res.body).toBe(200);
      expectRefusedOnB(await meOn(b, target.accessToken));
      // Only that session: the caller's goes on, on both instances.
      expect((await meOn(b, u.accessToken)).statusCode).toBe(200);
      expect((await meOn(a, u.accessToken)).statusCode).toBe(200);
    });

    it('POST /auth/logout on A: the session is refused on B at once', async () => {
      const u = await signedInUser(a, 'cross-logout');
      await warmOnB(u.accessToken);
      const res = await a.request({ method: 'POST', url: '/api/v1/auth/logout', headers: u.auth });
      expect(res.statusCode, res.body).toBe(200);
      expectRefusedOnB(await meOn(b, u.accessToken));
      const refreshed = await b.request({
        method: 'POST',
        url: '/api/v1/auth/refresh',
        payload: { refreshToken: u.refreshToken },
      });
      expect(refreshed.statusCode).toBe(401);
    });

    it.each(['/api/v1/users/me/sessions', '/api/v1/users/sessions'])(
      'DELETE %s on A: every session is refused on B at once',
      async (url) => {
        const u = await signedInUser(a, 'cross-all');
        const other = await login(a, u.email);
        await warmOnB(u.accessToken);
        await warmOnB(other.accessToken);
        const res = await a.request({ method: 'DELETE', url, headers: u.auth });
        expect(res.statusCode, res.body).toBe(200);
        expect(json(res).revoked).toBe(2);
        expectRefusedOnB(await meOn(b, other.accessToken));
        expectRefusedOnB(await meOn(b, u.accessToken));
      },
    );

    it('PUT /users/me/password on A: the other sessions are refused on B at once', async () => {
      const u = await signedInUser(a, 'cross-password');
      const other = await login(a, u.email);
      await warmOnB(other.accessToken);
      await warmOnB(u.accessToken);
      const res = await a.request({
        method: 'PUT',
        url: '/api/v1/users/me/password',
        headers: u.auth,
        payload: { currentPassword: PASSWORD, newPassword: 'Another-Pass-77' },
      });
      expect(res.statusCode, res.body).toBe(200);
      expectRefusedOnB(await meOn(b, other.accessToken));
      expect((await meOn(b, u.accessToken)).statusCode).toBe(200);
    });
  },
);
