// The token refresh of @tenantry/client's session, against a fake API (a fetch function): one refresh
// per expired pair however many calls see the 401, one retry per call, the call's body sent again,
// a refused refresh ending the session, and no refresh for the sign-in routes' own 401.
import { describe, expect, it } from 'vitest';
import { createSession, type TokenPair } from '../client/src/index.js';

const BASE = 'http://api.test';
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const unauthorized = (message = 'Invalid or expired token') =>
  json(401, { success: false, error: { code: 'AUTHENTICATION_ERROR', message, details: '' } });

/** A fake API: `live` is the one access token it accepts; refresh rotates the pair (a refresh token works once). */
function fakeApi(options: { refuseRefresh?: boolean } = {}) {
  let generation = 1;
  const state = {
    live: 'access-1',
    refreshToken: 'refresh-1',
    refreshes: 0,
    calls: [] as Array<{ method: string; path: string; authorization: string | null; body: string }>,
  };
  const fetch = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    const body = request.body ? await request.text() : '';
    state.calls.push({ method: request.method, path, authorization: request.headers.get('authorization'), body });
    await new Promise((r) => setTimeout(r, 5));
    if (path === '/api/v1/auth/login') {
      const { password } = JSON.parse(body) as { password: string };
      if (password !== 'right') return unauthorized('Invalid email or password');
      return json(200, {
        accessToken: state.live,
        refreshToken: state.refreshToken,
        expiresIn: 900,
        organizationId: null,
        user: { id: 'usr_1', email: 'a@example.com', fullName: null, emailVerified: null, twoFactorEnabled: false },
      });
    }
    if (path === '/api/v1/auth/refresh') {
      state.refreshes++;
      const { refreshToken } = JSON.parse(body) as { refreshToken: string };
      if (options.refuseRefresh || refreshToken !== state.refreshToken)
        return unauthorized('Invalid or expired refresh token');
      generation++;
      state.live = `access-${generation}`;
      state.refreshToken = `refresh-${generation}`;
      return json(200, {
        accessToken: state.live,
        refreshToken: state.refreshToken,
        expiresIn: 900,
        organizationId: null,
      });
    }
    if (request.headers.get('authorization') !== `Bearer ${state.live}`) return unauthorized();
    if (path === '/api/v1/users/me') return json(200, { id: 'usr_1', email: 'a@example.com' });
    if (path === '/api/v1/organizations') return json(201, { id: 'org_1', ...(JSON.parse(body) as object) });
    return json(404, { success: false, error: { code: 'NOT_FOUND', message: 'Route not found', details: '' } });
  };
  /** The access token expires: the API now wants the next one. */
  const expire = () => {
    state.live = 'expired-elsewhere';
  };
  return { state, fetch, expire };
}

const stale: TokenPair = { accessToken: 'access-0', refreshToken: 'refresh-1', expiresIn: 900, organizationId: null };

describe('createSession: token refresh', () => {
  it('on a 401 refreshes once, retries the call with the new token and reports the new pair', async () => {
    const api = fakeApi();
    const reported: Array<TokenPair | null> = [];
    const session = createSession({
      baseUrl: BASE,
      fetch: api.fetch,
      tokens: stale,
      onTokens: (p) => void reported.push(p),
    });
    const me = await session.client.GET('/api/v1/users/me');
    expect(me.data).toEqual({ id: 'usr_1', email: 'a@example.com' });
    expect(api.state.refreshes).toBe(1);
    expect(api.state.calls.map((c) => `${c.path} ${c.authorization}`)).toEqual([
      '/api/v1/users/me Bearer access-0',
      '/api/v1/auth/refresh null',
      '/api/v1/users/me Bearer access-2',
    ]);
    expect(reported).toEqual([
      { accessToken: 'access-2', refreshToken: 'refresh-2', expiresIn: 900, organizationId: null },
    ]);
    expect(session.tokens()?.accessToken).toBe('access-2');
  });

  it('shares one refresh between concurrent calls (a refresh token works once)', async () => {
    const api = fakeApi();
    const session = createSession({ baseUrl: BASE, fetch: api.fetch, tokens: stale });
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => session.client.GET('/api/v1/users/me')));
    expect(answers.map((a) => a.response.status)).toEqual([200, 200, 200, 200, 200]);
    expect(api.state.refreshes).toBe(1);
  });

  it('sends the body of a retried call again', async () => {
    const api = fakeApi();
    const session = createSession({ baseUrl: BASE, fetch: api.fetch, tokens: stale });
    const created = await session.client.POST('/api/v1/organizations', { body: { name: 'Acme', slug: 'acme' } });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ name: 'Acme', slug: 'acme' });
    const posts = api.state.calls.filter((c) => c.path === '/api/v1/organizations');
    expect(posts.map((c) => c.body)).toEqual([
      JSON.stringify({ name: 'Acme', slug: 'acme' }),
      JSON.stringify({ name: 'Acme', slug: 'acme' }),
    ]);
  });

  it('retries once: a call still refused after the refresh answers its 401', async () => {
    const api = fakeApi();
    // Every call but the refresh is refused, even with the fresh token (the account was deactivated, say).
    const fetch = async (request: Request) => {
      if (new URL(request.url).pathname === '/api/v1/auth/refresh') return api.fetch(request);
      api.state.calls.push({
        method: request.method,
        path: 'refused',
        authorization: request.headers.get('authorization'),
        body: '',
      });
      return unauthorized('This account is no longer active');
    };
    const session = createSession({ baseUrl: BASE, fetch, tokens: stale });
    const answer = await session.client.GET('/api/v1/users/me');
    expect(answer.response.status).toBe(401);
    expect(answer.error?.error.message).toBe('This account is no longer active');
    expect(api.state.calls.map((c) => c.path)).toEqual(['refused', '/api/v1/auth/refresh', 'refused']);
  });

  it('a refused refresh ends the session and answers the original 401', async () => {
    const api = fakeApi({ refuseRefresh: true });
    const reported: Array<TokenPair | null> = [];
    const session = createSession({
      baseUrl: BASE,
      fetch: api.fetch,
      tokens: stale,
      onTokens: (p) => void reported.push(p),
    });
    const me = await session.client.GET('/api/v1/users/me');
    expect(me.response.status).toBe(401);
    expect(me.error?.error.code).toBe('AUTHENTICATION_ERROR');
    expect(session.tokens()).toBeNull();
    expect(reported).toEqual([null]);
    // Signed out: later calls go without a token and without a refresh.
    await session.client.GET('/api/v1/users/me');
    expect(api.state.refreshes).toBe(1);
    expect(api.state.calls.at(-1)?.authorization).toBeNull();
  });

  it('signs in without a token and does not refresh on a wrong password', async () => {
    const api = fakeApi();
    const session = createSession({ baseUrl: BASE, fetch: api.fetch, tokens: stale });
    const wrong = await session.signIn({ email: 'a@example.com', password: 'wrong' });
    expect(wrong.response.status).toBe(401);
    expect(api.state.refreshes).toBe(0);
    expect(api.state.calls[0]?.authorization).toBeNull();
    expect(session.tokens()).toEqual(stale);

    const right = await session.signIn({ email: 'a@example.com', password: 'right' });
    expect(right.data?.user.id).toBe('usr_1');
    expect(session.tokens()).toEqual({
      accessToken: 'access-1',
      refreshToken: 'refresh-1',
      expiresIn: 900,
      organizationId: null,
    });
    expect((await session.client.GET('/api/v1/users/me')).response.status).toBe(200);
    expect(api.state.refreshes).toBe(0);
  });

  it('refresh() rotates the pair on demand, and an expired token later is refreshed again', async () => {
    const api = fakeApi();
    const session = createSession({
      baseUrl: BASE,
      fetch: api.fetch,
      tokens: { accessToken: 'access-1', refreshToken: 'refresh-1', expiresIn: 900, organizationId: null },
    });
    expect(await session.refresh()).toBe(true);
    expect(session.tokens()?.accessToken).toBe('access-2');
    expect((await session.client.GET('/api/v1/users/me')).response.status).toBe(200);
    api.expire();
    expect((await session.client.GET('/api/v1/users/me')).response.status).toBe(200);
    expect(api.state.refreshes).toBe(2);
    expect(session.tokens()?.accessToken).toBe('access-3');
  });
});
