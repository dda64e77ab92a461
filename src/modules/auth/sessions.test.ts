// The session cap (docs/api.md#sessions, docs/configuration.md#sign-in, AUTH_MAX_SESSIONS=5): beyond it the least recently used session is
// revoked, and its tokens fail at once.
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { login } from '../../../test/factories.js';
import { decodeJwt, getMe, listSessions, refreshRaw, verifiedUser } from '../../../test/fixtures/auth.js';
import { expectError } from '../../../test/expect.js';

useApp();

const SECOND = 1000;
// Several Argon2 verifications per test: room for a loaded machine.
const SLOW = 90_000;
const sessionIdOf = (accessToken: string) => decodeJwt(accessToken).payload.sessionId as string;

describe('session cap', () => {
  it(
    'six logins leave five active sessions; the first one’s tokens fail',
    async () => {
      const { email } = await verifiedUser(t, 'cap');
      const sessions = [];
      for (let i = 0; i < 6; i++) {
        sessions.push(await login(t, email));
        t.clock.advance(SECOND);
      }
      const list = json(await listSessions(t, sessions[5]!.accessToken));
      expect(list.total).toBe(5);
      expect(list.sessions.map((s: { id: string }) => s.id)).toEqual(
        sessions
          .slice(1)
          .reverse()
          .map((s) => sessionIdOf(s.accessToken)),
      );

      expectError(await getMe(t, sessions[0]!.accessToken), 401, 'AUTHENTICATION_ERROR');
      expectError(await refreshRaw(t, sessions[0]!.refreshToken), 401, 'AUTHENTICATION_ERROR');
      for (const s of sessions.slice(1)) expect((await getMe(t, s.accessToken)).statusCode).toBe(200);
    },
    SLOW,
  );

  it(
    'revokes the least recently used session, not the oldest',
    async () => {
      const { email } = await verifiedUser(t, 'lru');
      const sessions = [];
      for (let i = 0; i < 5; i++) {
        sessions.push(await login(t, email));
        t.clock.advance(SECOND);
      }
      // The first session is used again: now the second one is the least recently used.
      expect((await getMe(t, sessions[0]!.accessToken)).statusCode).toBe(200);
      t.clock.advance(SECOND);
      sessions.push(await login(t, email));

      expect((await getMe(t, sessions[0]!.accessToken)).statusCode).toBe(200);
      expectError(await getMe(t, sessions[1]!.accessToken), 401, 'AUTHENTICATION_ERROR');
      expect(json(await listSessions(t, sessions[5]!.accessToken)).total).toBe(5);
    },
    SLOW,
  );

  it(
    'counts a refresh as a use',
    async () => {
      const { email } = await verifiedUser(t, 'lru-refresh');
      const sessions = [];
      for (let i = 0; i < 5; i++) {
        sessions.push(await login(t, email));
        t.clock.advance(SECOND);
      }
      const refreshed = await refreshRaw(t, sessions[0]!.refreshToken);
      expect(refreshed.statusCode).toBe(200);
      t.clock.advance(SECOND);
      sessions.push(await login(t, email));
      expect((await getMe(t, json(refreshed).accessToken)).statusCode).toBe(200);
      expectError(await getMe(t, sessions[1]!.accessToken), 401, 'AUTHENTICATION_ERROR');
    },
    SLOW,
  );

  it(
    'never revokes the session a login just created, even when every session was used in the same millisecond',
    async () => {
      const { email } = await verifiedUser(t, 'same-ms');
      // The clock stands still: every session has the same lastUsedAt and createdAt.
      for (let i = 0; i < 7; i++) {
        const s = await login(t, email);
        expect((await getMe(t, s.accessToken)).statusCode, `login ${i + 1}`).toBe(200);
      }
      const last = await login(t, email);
      expect(json(await listSessions(t, last.accessToken)).total).toBe(5);
    },
    SLOW,
  );

  it(
    'lists only active sessions, most recently used first, marking the current one',
    async () => {
      const { email } = await verifiedUser(t, 'list');
      const a = await login(t, email);
      t.clock.advance(SECOND);
      const b = await login(t, email);
      t.clock.advance(SECOND);
      const c = await login(t, email);
      t.clock.advance(SECOND);
      expect((await getMe(t, a.accessToken)).statusCode).toBe(200);
      t.clock.advance(SECOND);
      // The listing request is itself a use of c.
      const list = json(await listSessions(t, c.accessToken));
      expect(list.total).toBe(3);
      expect(list.sessions.map((s: { id: string; isCurrent: boolean }) => [s.id, s.isCurrent])).toEqual([
        [sessionIdOf(c.accessToken), true],
        [sessionIdOf(a.accessToken), false],
        [sessionIdOf(b.accessToken), false],
      ]);
      expect(list.sessions[0].lastUsedAt).toBe(t.clock.now().toISOString());
      expect(list.sessions[1].lastUsedAt).toBe(new Date(t.clock.now().getTime() - SECOND).toISOString());
    },
    SLOW,
  );
});
