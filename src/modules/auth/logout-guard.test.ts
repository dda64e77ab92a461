// POST /auth/logout's guard (`optionalUser`, http/route.ts): an API key has no session to end and is
// refused before the handler runs, with or without a refresh token in the body; the session of the
// key's creator lives on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createOrg, type MadeKey, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { expectError } from '../../../test/expect.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;
let owner: SignedInUser;
let key: MadeKey;
beforeAll(async () => {
  t = await createTestApp();
  owner = await signedInUser(t, 'logout-guard');
  const org = await createOrg(t, owner);
  key = await createApiKey(t, org.id, owner, ['read:projects']);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const logout = (headers: Record<string, string>, payload?: Record<string, unknown>) =>
  t.request({ method: 'POST', url: '/api/v1/auth/logout', headers, ...(payload ? { payload } : {}) });

describe('POST /auth/logout with an API key', () => {
  it('403 under either header, with or without a refresh token; the creator stays signed in', async () => {
    const asBearer = { authorization: `Bearer ${key.plain}` };
    for (const [what, headers, payload] of [
      ['X-API-Key, no body', key.headers, undefined],
      ['bearer key, no body', asBearer, undefined],
      ['X-API-Key and the refresh token', key.headers, { refreshToken: owner.refreshToken }],
    ] as const) {
      expectError(await logout(headers, payload), 403, 'AUTHORIZATION_ERROR', {
        what,
        message: 'API keys cannot use this route',
        details: 'Sign in as a user and send an access token',
      });
    }
    const me = await t.request({ method: 'GET', url: '/api/v1/users/me', headers: owner.auth });
    expect(me.statusCode, me.body).toBe(200);
    const refresh = await t.request({
      method: 'POST',
      url: '/api/v1/auth/refresh',
      payload: { refreshToken: owner.refreshToken },
    });
    expect(refresh.statusCode, refresh.body).toBe(200);
  });
});
