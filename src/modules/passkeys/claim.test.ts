// A passkey set up on an account whose address was never proven goes when the address's owner
// claims the account (docs/security.md, pre-account takeover): with AUTH_REQUIRE_EMAIL_VERIFICATION
// off, a squatter can sign in to an unverified account and register a passkey on it.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { login, registerUser, uniqueEmail } from '../../../test/factories.js';
import { bearer, requestMagicLink } from '../../../test/fixtures/auth.js';
import { SoftAuthenticator } from '../../../test/webauthn.js';
import { expectError } from '../../../test/expect.js';

useApp({ env: { AUTH_REQUIRE_EMAIL_VERIFICATION: 'false' } });

describe('claiming an unverified address', () => {
  it("drops the squatter's passkey: it signs in no more", async () => {
    const email = uniqueEmail('pk-squat');
    const squatter = await registerUser(t, email);
    const { accessToken } = await login(t, email);
    const options = json(
      await t.request({
        method: 'POST',
        url: '/api/v1/auth/passkeys/registration/options',
        headers: bearer(accessToken),
      }),
    );
    const authenticator = new SoftAuthenticator();
    const registered = await t.request({
      method: 'POST',
      url: '/api/v1/auth/passkeys/registration/verify',
      headers: bearer(accessToken),
      payload: { response: authenticator.create(options as never) },
    });
    expect(registered.statusCode, registered.body).toBe(201);

    // The owner proves the address with a magic link: the account is claimed.
    const { token } = await requestMagicLink(t, email);
    const claimed = await t.request({ method: 'POST', url: '/api/v1/auth/magic-link/verify', payload: { token } });
    expect(claimed.statusCode, claimed.body).toBe(200);

    expect(await queryRows(t, sql`select id from passkeys where user_id = ${squatter.userId}`)).toEqual([]);
    const start = json(await t.request({ method: 'POST', url: '/api/v1/auth/passkeys/authentication/options' }));
    const signIn = await t.request({
      method: 'POST',
      url: '/api/v1/auth/passkeys/authentication/verify',
      payload: { challengeId: start.challengeId, response: authenticator.get(start.options) },
    });
    expectError(signIn, 401, 'AUTHENTICATION_ERROR');
  });
});
