// The shared set-up of the social sign-in tests (oauth-*.test.ts): an app on its own database,
// configured for Google and GitHub against a real local OAuth 2.0 / OIDC server (oauth2-mock-server),
// and the browser round trip (start, sign in at the provider, come back).
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { startOAuthServer, type Identity, type OAuthTestServer } from '../../../test/oauth-server.js';
import { oauthAccounts } from '../../db/tables/auth.js';

export let o: OAuthTestServer;
export let t: TestApp;

export const CALLBACK = 'http://localhost:3000/api/v1/auth/oauth/google/callback';
export let subCounter = 1000;
export const identity = (email: string | null, emailVerified = true, extra: Partial<Identity> = {}): Identity => ({
  sub: String(++subCounter),
  email,
  emailVerified,
  name: 'Social User',
  ...extra,
});

/** GET /auth/oauth/{provider}: the provider URL, the state and the state cookie. */
export async function start(provider = 'google') {
  const res = await t.request({ method: 'GET', url: `/api/v1/auth/oauth/${provider}` });
  expect(res.statusCode, res.body).toBe(302);
  const url = new URL(res.headers.location as string);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = /^tenantry_oauth_state=([^;]+)/.exec(setCookie)?.[1];
  return { res, url, setCookie, cookie: cookie!, state: url.searchParams.get('state')! };
}

export const callback = (provider: string, query: Record<string, string>, cookie?: string) =>
  t.request({
    method: 'GET',
    url: `/api/v1/auth/oauth/${provider}/callback`,
    query,
    headers: cookie === undefined ? {} : { cookie: `other=1; tenantry_oauth_state=${cookie}` },
  });

/** The whole browser round trip: start, sign in at the provider as `who`, come back. */
export async function signIn(who: Identity, provider = 'google'): Promise<LightMyRequestResponse> {
  const s = await start(provider);
  const back = await o.authorize(s.url.toString(), who);
  expect(back.state).toBe(s.state);
  return callback(provider, { code: back.code, state: back.state }, s.cookie);
}

export const linksOf = (userId: string) => t.deps.db.select().from(oauthAccounts).where(eq(oauthAccounts.userId, userId));

/** The app of the file and its hooks: call once at the top of each test file. */
export function useOAuthApp() {
  beforeAll(async () => {
    o = await startOAuthServer();
    t = await createTestApp({ env: { ...o.googleEnv, ...o.githubEnv } });
  });
  afterAll(async () => {
    await t?.close();
    await o?.close();
  });
}
