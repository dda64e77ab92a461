// GET /users/me reads the user through an in-process cache (src/modules/users/user-cache.ts). Every
// change to what it shows must be seen at once, on every instance: with Redis (TEST_REDIS_URL) the
// user is read on instance B (so B holds it cached) and changed on instance A on the same database,
// and B's very next read must show the change. Without Redis there is one instance (the service's
// documented limit) and the same scenarios run on it.
import { describe, expect, it } from 'vitest';
import { json, onRedis, type TestApp } from '../../../test/harness.js';
import { login, PASSWORD, registerUser, signedInUser, uniqueEmail, verifyEmailOf } from '../../../test/factories.js';
import { a, b, useTwoInstances } from '../../../test/fixtures/instances.js';
import { totpCode } from '../../../test/totp.js';

// Unverified accounts may sign in here, so the verification itself can be watched from /users/me.
useTwoInstances({ AUTH_REQUIRE_EMAIL_VERIFICATION: 'false' });

type Auth = { authorization: string };

/** GET /users/me on an instance, twice, so the second answer comes from its cache. */
async function meOn(app: TestApp, auth: Auth) {
  let body: Record<string, unknown> = {};
  for (let i = 0; i < 2; i++) {
    const res = await app.request({ method: 'GET', url: '/api/v1/users/me', headers: auth });
    expect(res.statusCode, res.body).toBe(200);
    body = json(res);
  }
  return body;
}

async function onA(method: 'PATCH' | 'PUT' | 'POST', url: string, auth: Auth | null, payload: Record<string, unknown>) {
  const res = await a.request({ method, url: `/api/v1${url}`, headers: auth ?? {}, payload });
  expect(res.statusCode, res.body).toBe(200);
  return json(res);
}

describe(
  onRedis
    ? 'the cached profile across two instances sharing Redis'
    : 'the cached profile on a single instance (no Redis)',
  () => {
    it('is two instances exactly when Redis is configured', () => {
      expect(b !== a).toBe(onRedis);
    });

    it('PATCH /users/me on A shows on B at once, every field and the preferences', async () => {
      const u = await signedInUser(a, 'cache-patch');
      const before = await meOn(b, u.auth);
      a.clock.advance(1000);
      const patched = await onA('PATCH', '/users/me', u.auth, {
        fullName: 'Renamed',
        avatarUrl: 'https://img.example.com/a.png',
        preferences: { theme: 'dark' },
      });
      const after = await meOn(b, u.auth);
      expect(after).toEqual(patched);
      expect(after).toMatchObject({
        fullName: 'Renamed',
        avatarUrl: 'https://img.example.com/a.png',
        preferences: { theme: 'dark' },
      });
      expect(after.updatedAt).not.toBe(before.updatedAt);

      await onA('PATCH', '/users/me', u.auth, { avatarUrl: null });
      expect((await meOn(b, u.auth)).avatarUrl).toBeNull();
    });

    it('email verification on A shows on B at once', async () => {
      const { email } = await registerUser(a, uniqueEmail('cache-verify'));
      const tokens = await login(a, email);
      const auth = { authorization: `Bearer ${tokens.accessToken}` };
      expect((await meOn(b, auth)).emailVerified).toBeNull();
      await verifyEmailOf(a, email);
      expect((await meOn(b, auth)).emailVerified).toEqual(expect.any(String));
    });

    it('two-factor enabled and disabled on A shows on B at once', async () => {
      const u = await signedInUser(a, 'cache-2fa');
      expect((await meOn(b, u.auth)).twoFactorEnabled).toBe(false);
      const { secret } = await onA('POST', '/auth/two-factor/setup', u.auth, { password: PASSWORD });
      await onA('POST', '/auth/two-factor/verify', u.auth, { code: totpCode(secret, a.clock.now()) });
      expect((await meOn(b, u.auth)).twoFactorEnabled).toBe(true);
      a.clock.advance(30_000);
      await onA('POST', '/auth/two-factor/disable', u.auth, {
        password: PASSWORD,
        code: totpCode(secret, a.clock.now()),
      });
      expect((await meOn(b, u.auth)).twoFactorEnabled).toBe(false);
    });

    it('a password change on A moves updatedAt on B at once', async () => {
      const u = await signedInUser(a, 'cache-pw');
      const before = await meOn(b, u.auth);
      a.clock.advance(1000);
      await onA('PUT', '/users/me/password', u.auth, { currentPassword: PASSWORD, newPassword: 'Another-Horse-10' });
      expect((await meOn(b, u.auth)).updatedAt).not.toBe(before.updatedAt);
    });

    it('one user’s change leaves another user’s cached profile as it is', async () => {
      const u = await signedInUser(a, 'cache-one');
      const other = await signedInUser(a, 'cache-other');
      const otherBefore = await meOn(b, other.auth);
      await onA('PATCH', '/users/me', u.auth, { fullName: 'Only Me' });
      expect(await meOn(b, other.auth)).toEqual(otherBefore);
      expect((await meOn(b, u.auth)).fullName).toBe('Only Me');
    });
  },
);
