// The browser session. Sign-ins and refreshes send `X-Session-Mode: cookie`: the refresh token then
// lives only in an HttpOnly cookie the page never sees, and the access token (15 minutes) only in
// this module's memory, never in localStorage or sessionStorage. On load the session is restored by
// a refresh (the cookie goes along, same origin); it is refreshed a minute before the access token
// expires and once on a 401, one refresh at a time (across tabs too, through a Web Lock), since a
// refresh token works once. The session's active organization (the tokens' org_* claims, for the
// product's own services) is switched by a refresh that names it.
import { createClient, type Schema } from '@tenantry/client';
import type { Client } from 'openapi-fetch';
import type { BrowserSignIn, WebPaths } from './contract';

export const COOKIE_MODE = { 'X-Session-Mode': 'cookie' } as const;

export type WebClient = Client<WebPaths, 'application/json'>;
export type Me = Pick<Schema<'User'>, 'id' | 'email' | 'fullName' | 'twoFactorEnabled'>;

export type SessionState =
  | { status: 'loading' }
  | { status: 'signed-out'; reason?: string }
  | { status: 'signed-in'; user: Me; organizationId: string | null };

// Sign-in routes take no access token, and their 401 speaks of the credentials given, not of an
// expired token: no token is sent there and their 401 does not start a refresh.
const PUBLIC_AUTH =
  /\/api\/v1\/auth\/(?:login|refresh|register|verify-email|resend-verification|password\/|magic-link|two-factor\/login|oauth\/)/;
const REFRESH_EARLY_S = 60;

let state: SessionState = { status: 'loading' };
const listeners = new Set<() => void>();
let access: string | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | null = null;
let started: Promise<void> | null = null;
/** The session's active organization, as the last sign-in or refresh said. */
let activeOrganization: string | null = null;

function publish(next: SessionState) {
  state = next;
  for (const listener of listeners) listener();
}

export const sessionStore = {
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  get: (): SessionState => state,
};

const origin = window.location.origin;
/** Calls that carry no access token: sign-in, refresh, mailed links. */
export const publicApi = createClient({ baseUrl: origin }) as unknown as WebClient;

function keep(accessToken: string, expiresIn: number, organizationId: string | null) {
  access = accessToken;
  if (organizationId !== activeOrganization) {
    activeOrganization = organizationId;
    if (state.status === 'signed-in') publish({ ...state, organizationId });
  }
  clearTimeout(timer);
  timer = setTimeout(() => void refreshNow(accessToken), Math.max(5, expiresIn - REFRESH_EARLY_S) * 1000);
}

function end(reason?: string) {
  access = null;
  clearTimeout(timer);
  publish(reason ? { status: 'signed-out', reason } : { status: 'signed-out' });
}

/** Runs fn holding the page's refresh lock, shared by every tab of this origin where browsers have one. */
function locked<T>(fn: () => Promise<T>): Promise<T> {
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  return locks ? (locks.request('tenantry-session-refresh', fn) as Promise<T>) : fn();
}

async function refresh(): Promise<boolean> {
  try {
    const { data, response } = await locked(() => publicApi.POST('/api/v1/auth/refresh', { headers: COOKIE_MODE }));
    if (data) {
      keep(data.accessToken, data.expiresIn, data.organizationId ?? null);
      return true;
    }
    // Refused: no cookie, or a spent, revoked or expired one. Other failures keep what there is.
    if (response.status === 400 || response.status === 401) end();
    return false;
  } catch {
    return false;
  }
}

/** One refresh for every caller that saw `used` fail; a token already replaced is simply used. */
function refreshNow(used: string | null): Promise<boolean> {
  if (access && access !== used) return Promise.resolve(true);
  refreshing ??= refresh().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/**
 * A 401 with `reauthenticationRequired` is about the password or code the call sent (or did not
 * send), not about the token: it is answered as it is, never refreshed and sent again (sending a
 * wrong password twice would count it twice toward the lockout).
 */
async function asksForProof(response: Response): Promise<boolean> {
  try {
    const body = (await response.clone().json()) as { reauthenticationRequired?: unknown };
    return body.reauthenticationRequired === true;
  } catch {
    return false;
  }
}

async function sessionFetch(request: Request): Promise<Response> {
  if (PUBLIC_AUTH.test(new URL(request.url).pathname) || request.headers.has('authorization')) return fetch(request);
  if (refreshing) await refreshing;
  const token = access;
  if (!token) return fetch(request);
  const retry = request.clone();
  request.headers.set('authorization', `Bearer ${token}`);
  const first = await fetch(request);
  if (first.status !== 401 || (await asksForProof(first))) return first;
  if (!(await refreshNow(token)) || !access) return first;
  await first.body?.cancel();
  retry.headers.set('authorization', `Bearer ${access}`);
  return fetch(retry);
}

/** The API as the signed-in person (a 401 refreshes once and sends the call again). */
export const api = createClient({ baseUrl: origin, fetch: sessionFetch }) as unknown as WebClient;

async function loadMe(): Promise<void> {
  const { data } = await api.GET('/api/v1/users/me');
  if (data) publish({ status: 'signed-in', user: data, organizationId: activeOrganization });
  else end();
}

/**
 * Makes `organizationId` the session's active organization (null: none), by a refresh that names it:
 * the next tokens carry it. Answers the API's error when refused (403: not a member).
 */
export async function switchOrganization(organizationId: string | null): Promise<unknown> {
  while (refreshing) await refreshing;
  let problem: unknown = null;
  const run = async () => {
    try {
      const { data, error, response } = await locked(() =>
        publicApi.POST('/api/v1/auth/refresh', { headers: COOKIE_MODE, body: { organizationId } }),
      );
      if (data) {
        keep(data.accessToken, data.expiresIn, data.organizationId ?? null);
        return true;
      }
      problem = error;
      if (response.status === 400 || response.status === 401) end();
      return false;
    } catch (err) {
      problem = err;
      return false;
    }
  };
  // Requests made meanwhile wait for the new token, as for any refresh.
  refreshing = run().finally(() => {
    refreshing = null;
  });
  await refreshing;
  return problem;
}

/** Restores the session from the cookie, once per page load. */
export function startSession(): Promise<void> {
  started ??= (async () => {
    if (await refreshNow(null)) await loadMe();
    else if (state.status === 'loading') end();
  })();
  return started;
}

/** Keeps the access token of a successful sign-in (its refresh token is in the cookie). */
export function signedIn(answer: BrowserSignIn) {
  keep(answer.accessToken, answer.expiresIn, answer.organizationId ?? null);
  publish({ status: 'signed-in', user: answer.user, organizationId: activeOrganization });
}

/** The user changed (profile, two-factor): read it again. */
export const reloadMe = loadMe;

/** POST /auth/logout in cookie mode (the cookie is cleared), then forget the token. */
export async function signOut(): Promise<void> {
  try {
    if (access) await api.POST('/api/v1/auth/logout', { headers: COOKIE_MODE });
  } finally {
    end();
  }
}

/** After "sign out everywhere" (the current session is gone too). */
export const signedOutHere = () => end('You were signed out of every session.');
