// The shared set-up of the invitation tests (invitations-*.test.ts): an app on its own database with
// its fake clock, an owner, an admin, a member and a viewer, and the calls.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { login, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';

export let t: TestApp;
export let owner: SignedInUser;
export let admin: SignedInUser;
export let member: SignedInUser;
export let viewer: SignedInUser;

export type Caller = { auth: Record<string, string> } | null;
export function api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, caller: Caller, payload?: unknown) {
  return t.request({ method, url: `/api/v1${url}`, headers: caller?.auth ?? {}, ...(payload !== undefined ? { payload: payload as object } : {}) });
}

export function expectError(res: LightMyRequestResponse, status: number, code: string, details?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  expect(json(res)).toMatchObject({ success: false, error: { code } });
  if (details) expect(json(res).error.details).toMatch(details);
}

/**
 * Moves the clock. Access tokens live 15 minutes and sessions 7 days, so the file's users and
 * `others` sign in again afterwards.
 */
export async function travel(ms: number, ...others: SignedInUser[]) {
  t.clock.advance(ms);
  if (ms < 10 * 60 * 1000) return;
  for (const u of [owner, admin, member, viewer, ...others]) {
    const s = await login(t, u.email);
    u.accessToken = s.accessToken;
    u.refreshToken = s.refreshToken;
    u.auth = { authorization: `Bearer ${s.accessToken}` };
  }
}

export const accept = (caller: Caller, token: string) => api('POST', '/invitations/accept', caller, { token });
export const DAY = 24 * 60 * 60 * 1000;

export async function listStatus(orgId: string, status?: string) {
  const res = await api('GET', `/organizations/${orgId}/invitations${status ? `?status=${status}` : ''}`, owner);
  expect(res.statusCode, res.body).toBe(200);
  return json(res);
}

/** The app of the file and its hooks: call once at the top of each test file. */
export function useInvitationsApp() {
  beforeAll(async () => {
    t = await createTestApp();
    [owner, admin, member, viewer] = [await signedInUser(t, 'owner'), await signedInUser(t, 'admin'), await signedInUser(t, 'member'), await signedInUser(t, 'viewer')];
  });
  afterAll(async () => {
    await t?.close();
  });
}
