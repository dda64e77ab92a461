// The shared set-up of the passkey tests: an app on its own database (fake clock), the calls, and a
// registration through the software authenticator of test/webauthn.ts.
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { bearer } from '../../../test/auth-helpers.js';
import { type AuthenticatorForm, type CeremonyOptions, SoftAuthenticator } from '../../../test/webauthn.js';

export let t: TestApp;

export function usePasskeyApp() {
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
}

export const post = (url: string, payload?: unknown, accessToken?: string, headers: Record<string, string> = {}) =>
  t.request({
    method: 'POST',
    url: `/api/v1${url}`,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    headers: { ...(accessToken ? bearer(accessToken) : {}), ...headers },
  });

export const listPasskeys = async (accessToken: string) => {
  const res = await t.request({ method: 'GET', url: '/api/v1/users/me/passkeys', headers: bearer(accessToken) });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).passkeys as Array<{ id: string; name: string; createdAt: string; lastUsedAt: string | null }>;
};

export async function registrationOptions(accessToken: string) {
  const res = await post('/auth/passkeys/registration/options', undefined, accessToken);
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { challenge: string; rp: { id: string; name: string }; user: { id: string; name: string }; excludeCredentials?: Array<{ id: string }> };
}

/** A passkey registered for the account over HTTP (201 checked). */
export async function registerPasskey(accessToken: string, opts: CeremonyOptions & { name?: string; form?: AuthenticatorForm } = {}) {
  const authenticator = new SoftAuthenticator(undefined, opts.form);
  const options = await registrationOptions(accessToken);
  const res = await post('/auth/passkeys/registration/verify', { response: authenticator.create(options, opts), ...(opts.name ? { name: opts.name } : {}) }, accessToken);
  expect(res.statusCode, res.body).toBe(201);
  return { authenticator, passkey: json(res) as { id: string; name: string; createdAt: string; lastUsedAt: string | null } };
}

export async function authenticationOptions(email?: string) {
  const res = await post('/auth/passkeys/authentication/options', email === undefined ? undefined : { email });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { challengeId: string; options: { challenge: string; rpId: string; allowCredentials?: Array<{ id: string }> } };
}

/** One sign-in attempt: fresh options (by email or discoverable), an assertion, the verify's answer. */
export async function signInWith(authenticator: SoftAuthenticator, opts: CeremonyOptions & { email?: string; headers?: Record<string, string> } = {}) {
  const { challengeId, options } = await authenticationOptions(opts.email);
  return post('/auth/passkeys/authentication/verify', { challengeId, response: authenticator.get(options, opts) }, undefined, opts.headers);
}
