// GET /users/me/sessions, DELETE /users/me/sessions/{id}, DELETE /users/me/sessions and its alias
// DELETE /users/sessions (docs/api.md#session-management).
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { PASSWORD, signedInUser } from '../../../test/factories.js';
import { expectError } from '../../../test/expect.js';

useApp();

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Tokens {
  accessToken: string;
  refreshToken: string;
}

async function loginFrom(email: string, userAgent = 'lightMyRequest', ipAddress = '127.0.0.1'): Promise<Tokens> {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { email, password: PASSWORD },
    headers: { 'user-agent': userAgent },
    remoteAddress: ipAddress,
  });
  expect(res.statusCode, res.body).toBe(200);
  return { accessToken: json(res).accessToken, refreshToken: json(res).refreshToken };
}

async function refresh(refreshToken: string): Promise<Tokens> {
  const res = await t.request({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken } });
  expect(res.statusCode, res.body).toBe(200);
  return { accessToken: json(res).accessToken, refreshToken: json(res).refreshToken };
}

const listSessions = (token: string, query = '') =>
  t.request({ method: 'GET', url: `/api/v1/users/me/sessions${query}`, headers: bearer(token) });

async function sessionsOf(token: string, query = '') {
  const res = await listSessions(token, query);
  expect(res.statusCode, res.body).toBe(200);
  return json(res);
}

/** The id of the session a token belongs to, as the list reports it. */
async function currentSessionId(token: string): Promise<string> {
  const current = (await sessionsOf(token, '?pageSize=100')).sessions.filter(
    (s: { isCurrent: boolean }) => s.isCurrent,
  );
  expect(current).toHaveLength(1);
  return current[0].id;
}

const revokeOne = (token: string, id: string) =>
  t.request({ method: 'DELETE', url: `/api/v1/users/me/sessions/${id}`, headers: bearer(token) });
const getMe = (token: string) => t.request({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) });

async function expectSignedOut(s: Tokens) {
  expectError(await getMe(s.accessToken), 401, 'AUTHENTICATION_ERROR');
  expectError(
    await t.request({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: s.refreshToken } }),
    401,
    'AUTHENTICATION_ERROR',
  );
}

describe('GET /users/me/sessions', () => {
  it('lists active sessions, most recently used first, with the caller marked and client details recorded', async () => {
    const u = await signedInUser(t, 'list');
    const t0 = t.clock.now().getTime();
    t.clock.advance(MINUTE);
    const laptop = await loginFrom(u.email, 'Mozilla/5.0 (Macintosh) Laptop', '203.0.113.7');
    t.clock.advance(MINUTE);
    const phone = await loginFrom(u.email, 'Tenantry-iOS/2.1', '2001:db8::42');
    t.clock.advance(MINUTE);
    // A refresh is a use: the first session becomes more recent than the phone.
    await refresh(u.refreshToken);
    t.clock.advance(MINUTE);

    const body = await sessionsOf(laptop.accessToken);
    expect(Object.keys(body).sort()).toEqual(['hasMore', 'page', 'pageSize', 'sessions', 'total']);
    expect(body).toMatchObject({ total: 3, page: 1, pageSize: 20, hasMore: false });
    const [first, second, third] = body.sessions;
    expect(body.sessions).toHaveLength(3);
    for (const s of body.sessions) {
      expect(Object.keys(s).sort()).toEqual([
        'createdAt',
        'expiresAt',
        'id',
        'ipAddress',
        'isCurrent',
        'lastUsedAt',
        'userAgent',
      ]);
      expect(s.id).toMatch(/^ses_[0-9a-z]{26}$/);
      for (const k of ['createdAt', 'expiresAt', 'lastUsedAt']) expect(s[k]).toMatch(ISO_MS);
    }
    // The caller's own request is its latest use; then the refreshed session; then the phone.
    expect(first).toMatchObject({
      isCurrent: true,
      userAgent: 'Mozilla/5.0 (Macintosh) Laptop',
      ipAddress: '203.0.113.7',
      createdAt: new Date(t0 + MINUTE).toISOString(),
      lastUsedAt: new Date(t0 + 4 * MINUTE).toISOString(),
      expiresAt: new Date(t0 + MINUTE + 7 * DAY).toISOString(),
    });
    expect(second).toMatchObject({
      isCurrent: false,
      createdAt: new Date(t0).toISOString(),
      lastUsedAt: new Date(t0 + 3 * MINUTE).toISOString(),
    });
    expect(third).toMatchObject({
      isCurrent: false,
      userAgent: 'Tenantry-iOS/2.1',
      ipAddress: '2001:db8::42',
      createdAt: new Date(t0 + 2 * MINUTE).toISOString(),
      lastUsedAt: new Date(t0 + 2 * MINUTE).toISOString(),
    });

    // Seen from the phone: the same sessions, only the phone is current, and it is now the latest.
    t.clock.advance(MINUTE);
    const fromPhone = await sessionsOf(phone.accessToken);
    expect(fromPhone.sessions.map((s: { id: string }) => s.id)).toEqual([third.id, first.id, second.id]);
    expect(fromPhone.sessions.map((s: { isCurrent: boolean }) => s.isCurrent)).toEqual([true, false, false]);
  });

  it('leaves out revoked and expired sessions', async () => {
    const u = await signedInUser(t, 'inactive');
    const gone = await loginFrom(u.email);
    const goneId = await currentSessionId(gone.accessToken);
    const out = await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(gone.accessToken) });
    expect(out.statusCode).toBe(200);

    // Six days on, a new session; a day later the first two have passed their 7 days.
    t.clock.advance(6 * DAY);
    const recent = await loginFrom(u.email);
    t.clock.advance(DAY + MINUTE);
    const renewed = await refresh(recent.refreshToken);
    const body = await sessionsOf(renewed.accessToken);
    expect(body.total).toBe(1);
    expect(body.sessions).toHaveLength(1);
    expect(body.sessions[0]).toMatchObject({ isCurrent: true });
    expect(body.sessions.map((s: { id: string }) => s.id)).not.toContain(goneId);
    await expectSignedOut(u);
  });

  it('pages with page and pageSize, and refuses a pageSize outside 1-100', async () => {
    const u = await signedInUser(t, 'pages');
    for (let i = 0; i < 3; i++) {
      t.clock.advance(MINUTE);
      await loginFrom(u.email, `Agent ${i}`);
    }
    const all = await sessionsOf(u.accessToken);
    expect(all).toMatchObject({ total: 4, page: 1, pageSize: 20, hasMore: false });
    const ids = all.sessions.map((s: { id: string }) => s.id);

    const p1 = await sessionsOf(u.accessToken, '?page=1&pageSize=3');
    expect(p1).toMatchObject({ total: 4, page: 1, pageSize: 3, hasMore: true });
    const p2 = await sessionsOf(u.accessToken, '?page=2&pageSize=3');
    expect(p2).toMatchObject({ total: 4, page: 2, pageSize: 3, hasMore: false });
    expect([...p1.sessions, ...p2.sessions].map((s: { id: string }) => s.id)).toEqual(ids);
    const p3 = await sessionsOf(u.accessToken, '?page=3&pageSize=3');
    expect(p3).toMatchObject({ sessions: [], total: 4, page: 3, hasMore: false });
    expect((await sessionsOf(u.accessToken, '?pageSize=1')).sessions).toHaveLength(1);
    expect((await sessionsOf(u.accessToken, '?pageSize=100')).sessions).toHaveLength(4);

    for (const q of ['?pageSize=0', '?pageSize=101', '?pageSize=-1', '?pageSize=abc']) {
      expectError(await listSessions(u.accessToken, q), 400, 'VALIDATION_ERROR', 'pageSize');
    }
    for (const q of ['?page=0', '?page=-1', '?page=x'])
      expectError(await listSessions(u.accessToken, q), 400, 'VALIDATION_ERROR', 'page');
  });
});

describe('DELETE /users/me/sessions/{sessionId}', () => {
  it('refuses to revoke the current session with 400, which keeps working', async () => {
    const u = await signedInUser(t, 'selfrevoke');
    const id = await currentSessionId(u.accessToken);
    expectError(await revokeOne(u.accessToken, id), 400, 'VALIDATION_ERROR', 'sessionId');
    expect((await getMe(u.accessToken)).statusCode).toBe(200);
  });

  it("answers 404 for another user's session, which keeps working, and for an unknown id", async () => {
    const u = await signedInUser(t, 'mine');
    const other = await signedInUser(t, 'theirs');
    const otherId = await currentSessionId(other.accessToken);
    expectError(await revokeOne(u.accessToken, otherId), 404, 'NOT_FOUND');
    expect((await getMe(other.accessToken)).statusCode).toBe(200);
    expect((await sessionsOf(other.accessToken)).total).toBe(1);
    expectError(await revokeOne(u.accessToken, 'ses_00000000000000000000000000'), 404, 'NOT_FOUND');
    expectError(await revokeOne(u.accessToken, 'not-a-session'), 404, 'NOT_FOUND');
  });

  it("revokes another of the caller's sessions: its tokens fail at once", async () => {
    const u = await signedInUser(t, 'revokeone');
    const tablet = await loginFrom(u.email, 'Tablet');
    expect((await getMe(tablet.accessToken)).statusCode).toBe(200);
    const tabletId = await currentSessionId(tablet.accessToken);

    const res = await revokeOne(u.accessToken, tabletId);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ message: expect.stringMatching(/\S/) });
    await expectSignedOut(tablet);

    const left = await sessionsOf(u.accessToken);
    expect(left.total).toBe(1);
    expect(left.sessions.map((s: { id: string }) => s.id)).not.toContain(tabletId);
    // Already revoked: not found.
    expectError(await revokeOne(u.accessToken, tabletId), 404, 'NOT_FOUND');
    expect((await getMe(u.accessToken)).statusCode).toBe(200);
  });
});

describe.each(['/api/v1/users/me/sessions', '/api/v1/users/sessions'])('DELETE %s', (url) => {
  it('revokes every session of the caller, the current one included, and counts them', async () => {
    const u = await signedInUser(t, 'revokeall');
    const a = await loginFrom(u.email, 'A');
    const b = await loginFrom(u.email, 'B');
    const c = await loginFrom(u.email, 'C');
    // Already revoked before: not counted again.
    expect((await revokeOne(u.accessToken, await currentSessionId(c.accessToken))).statusCode).toBe(200);
    const other = await signedInUser(t, 'bystander');

    const res = await t.request({ method: 'DELETE', url, headers: bearer(a.accessToken) });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ message: expect.stringMatching(/\S/), revoked: 3 });
    for (const s of [u, a, b, c]) await expectSignedOut(s);
    // Another user's sessions are untouched.
    expect((await getMe(other.accessToken)).statusCode).toBe(200);

    // Signing in again works, with only the new session listed.
    const again = await loginFrom(u.email);
    expect((await sessionsOf(again.accessToken)).total).toBe(1);
  });

  it('counts only the sessions that were still active (an expired one is not counted)', async () => {
    const u = await signedInUser(t, 'revokeexpired');
    t.clock.advance(7 * DAY + MINUTE);
    const a = await loginFrom(u.email);
    await loginFrom(u.email);
    expect((await sessionsOf(a.accessToken)).total).toBe(2);
    const res = await t.request({ method: 'DELETE', url, headers: bearer(a.accessToken) });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).revoked).toBe(2);
  });
});
