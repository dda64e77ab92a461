// @tenantry/client over real HTTP against the app (listening on an ephemeral port): the flow a new
// user follows, every call typed by the generated schema (tsc checks this file), and the session's
// refresh when the access token expires.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createSession, type ErrorCode, type Schema, type TokenPair } from '../client/src/index.js';
import { createTestApp, type TestApp } from './harness.js';
import { PASSWORD, uniqueEmail, uniqueSlug } from './factories.js';

let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t?.close();
});

/** A verified account made through the client, with the link from the mail. */
async function registerAndVerify(label: string) {
  const anonymous = createClient({ baseUrl });
  const email = uniqueEmail(label);
  const registered = await anonymous.POST('/api/v1/auth/register', {
    body: { email, password: PASSWORD, fullName: 'Ada Lovelace' },
  });
  expect(registered.response.status, JSON.stringify(registered.error)).toBe(201);
  expect(registered.data?.userId).toMatch(/^usr_/);

  const token = await t.mail.tokenFrom(email, /Verify your email/, '/verify-email');
  const verified = await anonymous.POST('/api/v1/auth/verify-email', { body: { token } });
  expect(verified.data).toEqual({ message: 'Email verified' });
  return email;
}

describe('@tenantry/client against the running app', () => {
  it('register → verify → sign in → organization → project → API key → the key lists the projects', async () => {
    const email = await registerAndVerify('client-flow');

    const saved: Array<TokenPair | null> = [];
    const session = createSession({ baseUrl, onTokens: (pair) => void saved.push(pair) });
    const signedIn = await session.signIn({ email, password: PASSWORD });
    expect(signedIn.error).toBeUndefined();
    expect(signedIn.data?.user).toMatchObject({ email, fullName: 'Ada Lovelace', twoFactorEnabled: false });
    expect(saved).toHaveLength(1);
    expect(session.tokens()?.accessToken).toBe(signedIn.data?.accessToken);

    const me = await session.client.GET('/api/v1/users/me');
    expect(me.data?.email).toBe(email);

    const slug = uniqueSlug('client');
    const org = await session.client.POST('/api/v1/organizations', { body: { name: 'Analytical Engines', slug } });
    expect(org.response.status).toBe(201);
    const orgId = org.data!.id;
    const path = { orgId };

    const project = await session.client.POST('/api/v1/organizations/{orgId}/projects', {
      params: { path },
      body: { name: 'Website', description: 'The marketing site' },
    });
    expect(project.response.status).toBe(201);
    expect(project.data).toMatchObject({ organizationId: orgId, name: 'Website' });

    const created = await session.client.POST('/api/v1/organizations/{orgId}/api-keys', {
      params: { path },
      body: { name: 'ci', scopes: ['read:projects'], rateLimit: 120 },
    });
    expect(created.response.status).toBe(201);
    const plainKey = created.data!.plainKey;
    expect(plainKey).toMatch(/^svc_live_[0-9a-f]{32}$/);

    const machine = createClient({ baseUrl, apiKey: plainKey });
    const listed = await machine.GET('/api/v1/organizations/{orgId}/projects', {
      params: { path, query: { pageSize: 10 } },
    });
    expect(listed.error).toBeUndefined();
    const page: Schema<'ProjectList'> | undefined = listed.data;
    expect(page).toEqual({ data: [project.data], total: 1, page: 1, pageSize: 10, hasMore: false });

    // What the scope does not reach answers the typed error envelope.
    const refused = await machine.POST('/api/v1/organizations/{orgId}/projects', {
      params: { path },
      body: { name: 'Nope' },
    });
    expect(refused.response.status).toBe(403);
    const code: ErrorCode | undefined = refused.error?.error.code;
    expect(code).toBe('AUTHORIZATION_ERROR');

    // The same with Authorization: Bearer <key> sent by hand, and an access token given as a function.
    const viaBearer = createClient({ baseUrl, headers: { authorization: `Bearer ${plainKey}` } });
    expect((await viaBearer.GET('/api/v1/organizations/{orgId}/projects', { params: { path } })).data?.total).toBe(1);
    const asPerson = createClient({ baseUrl, accessToken: async () => session.tokens()?.accessToken });
    expect((await asPerson.GET('/api/v1/organizations/{orgId}', { params: { path } })).data?.slug).toBe(slug);

    await session.signOut();
    expect(session.tokens()).toBeNull();
    expect(saved.at(-1)).toBeNull();
    expect((await asPerson.GET('/api/v1/users/me')).response.status).toBe(401);
  });

  it('refreshes an expired access token once and retries the call', async () => {
    const email = await registerAndVerify('client-refresh');
    const session = createSession({ baseUrl });
    await session.signIn({ email, password: PASSWORD });
    const before = session.tokens()!;

    t.clock.advance(16 * 60 * 1000); // past the 15-minute access token
    const [a, b] = await Promise.all([
      session.client.GET('/api/v1/users/me'),
      session.client.GET('/api/v1/users/me/sessions'),
    ]);
    expect(a.data?.email).toBe(email);
    expect(b.data?.total).toBe(1);
    const after = session.tokens()!;
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);

    // The spent refresh token is refused by the API: the pair the session holds is the live one.
    const replay = await createClient({ baseUrl }).POST('/api/v1/auth/refresh', {
      body: { refreshToken: before.refreshToken },
    });
    expect(replay.response.status).toBe(401);
    expect((await session.client.GET('/api/v1/users/me')).data?.email).toBe(email);
  });

  it('keeps the two-factor answer of a sign-in typed', async () => {
    const session = createSession({ baseUrl });
    const wrong = await session.signIn({ email: uniqueEmail('nobody'), password: PASSWORD });
    expect(wrong.response.status).toBe(401);
    expect(wrong.error?.error).toMatchObject({ code: 'AUTHENTICATION_ERROR', message: 'Invalid email or password' });
    // Only the 401 of a sign-in may carry requiresTwoFactor: the union narrows on it.
    const asksForCode = wrong.error && 'requiresTwoFactor' in wrong.error ? wrong.error.requiresTwoFactor : undefined;
    expect(asksForCode).toBeUndefined();
    expect(session.tokens()).toBeNull();
  });
});

// Compile-time checks (never called): paths, parameters and bodies are the API's own.
export function typeChecks(client: ReturnType<typeof createClient>) {
  // @ts-expect-error: no such route
  void client.GET('/api/v1/nope');
  // @ts-expect-error: orgId is required
  void client.GET('/api/v1/organizations/{orgId}/projects', { params: { path: {} } });
  void client.POST('/api/v1/organizations/{orgId}/api-keys', {
    params: { path: { orgId: 'org_1' } },
    // @ts-expect-error: unknown scope
    body: { name: 'ci', scopes: ['read:everything'] },
  });
}
