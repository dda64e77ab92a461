// The shared security table (ARCHITECTURE.md, after unkey): every protected route adds one row to
// `protectedRoutes`, and `describeSecurityTable` runs every case of `securityCases` against every
// row. Bad tokens are forged here with node:crypto (HS256 by hand), so a bug in the token code under
// test cannot make its own forgeries pass.
import { createHmac, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from './harness.js';
import { createOrg, createWebhook, login, PASSWORD, registerUser, setPlan, signedInUser, uniqueEmail, verifyEmailOf } from './factories.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ProtectedRoute {
  method: HttpMethod;
  /**
   * A concrete path. Path parameters may be placeholders (authentication is decided before any
   * lookup), or `:name`, a fixture of the table (`TableFixtures`) filled in before each case.
   */
  url: string;
  /** The body; a string value that is exactly `:name` is replaced by that fixture. */
  payload?: unknown;
  query?: Record<string, string>;
  /** The status a valid token gets (the control); when absent, anything but 401. */
  okStatus?: number;
}

/** An organization that does not exist: rows under it change nothing once authenticated. */
const NO_ORG = '/api/v1/organizations/org_00000000000000000000000000';
/** The table's own organization (fixture `org`, owned by the table's account, on the enterprise plan). */
const ORG = '/api/v1/organizations/:org';
/** A webhook target that needs no private-URL switch; nothing is delivered (no worker runs here). */
const HOOK_URL = 'https://example.com/security-table';

/**
 * The table. Each issue that adds a protected route adds its row here, in its module's group.
 * Payloads are chosen so that an authenticated call changes nothing that matters (or fails later,
 * with another status), while the same call without valid credentials must answer 401 first.
 */
export const protectedRoutes: ProtectedRoute[] = [
  // auth
  { method: 'GET', url: '/api/v1/auth/session', okStatus: 200 },
  { method: 'POST', url: '/api/v1/auth/logout', okStatus: 200 },
  // No proof once authenticated: 400, nothing counted toward the lockout.
  { method: 'POST', url: '/api/v1/auth/reauthenticate', payload: {}, okStatus: 400 },
  // A token that is no email-change link's: 400 once authenticated.
  { method: 'POST', url: '/api/v1/auth/confirm-email-change', payload: { token: 'not-a-live-token' }, okStatus: 400 },
  // two-factor. verify and disable come before setup: until the setup control has run the account has
  // no pending secret, so '000000' cannot happen to be a right code (400 either way), and two-factor is
  // never enabled for the account whose sign-ins the table needs. setup leaves only a pending secret.
  { method: 'POST', url: '/api/v1/auth/two-factor/verify', payload: { code: '000000' }, okStatus: 400 },
  { method: 'POST', url: '/api/v1/auth/two-factor/disable', payload: { password: PASSWORD, code: '000000' }, okStatus: 400 },
  { method: 'POST', url: '/api/v1/auth/two-factor/setup', payload: { password: PASSWORD }, okStatus: 200 },
  // users
  { method: 'GET', url: '/api/v1/users/me', okStatus: 200 },
  { method: 'PATCH', url: '/api/v1/users/me', payload: { preferences: { language: 'en' } }, okStatus: 200 },
  // Same new password as the current one: 400 once authenticated, so the account is untouched.
  { method: 'PUT', url: '/api/v1/users/me/password', payload: { currentPassword: PASSWORD, newPassword: PASSWORD }, okStatus: 400 },
  { method: 'GET', url: '/api/v1/users/me/sessions', okStatus: 200 },
  { method: 'DELETE', url: '/api/v1/users/me/sessions/ses_00000000000000000000000000', okStatus: 404 },
  { method: 'DELETE', url: '/api/v1/users/me/sessions', okStatus: 200 },
  { method: 'DELETE', url: '/api/v1/users/sessions', okStatus: 200 },
  // The account's life: an invalid address, or no proof at all, answers 400 once authenticated.
  { method: 'POST', url: '/api/v1/users/me/email', payload: { newEmail: 'not-an-address', password: PASSWORD }, okStatus: 400 },
  { method: 'GET', url: '/api/v1/users/me/export', okStatus: 200 },
  { method: 'DELETE', url: '/api/v1/users/me', payload: {}, okStatus: 400 },
  // passkeys (docs/api.md#passkeys): options change nothing but a challenge; the rest meet nothing.
  { method: 'POST', url: '/api/v1/auth/passkeys/registration/options', okStatus: 200 },
  {
    method: 'POST',
    url: '/api/v1/auth/passkeys/registration/verify',
    payload: { response: { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA' } } },
    okStatus: 400,
  },
  { method: 'GET', url: '/api/v1/users/me/passkeys', okStatus: 200 },
  { method: 'PATCH', url: '/api/v1/users/me/passkeys/pk_00000000000000000000000000', payload: { name: 'Security' }, okStatus: 404 },
  { method: 'DELETE', url: '/api/v1/users/me/passkeys/pk_00000000000000000000000000', okStatus: 404 },
  // organizations, members, invitations, projects (docs/api.md#organizations). The caller belongs to no organization,
  // so an authenticated call meets an unknown organization (404) or an invalid body (400).
  { method: 'POST', url: '/api/v1/organizations', payload: { name: 'Security', slug: 'x' }, okStatus: 400 },
  { method: 'GET', url: '/api/v1/users/me/organizations', okStatus: 200 },
  { method: 'GET', url: NO_ORG, okStatus: 404 },
  { method: 'PATCH', url: NO_ORG, payload: { name: 'Changed' }, okStatus: 404 },
  { method: 'DELETE', url: NO_ORG, okStatus: 404 },
  { method: 'POST', url: `${NO_ORG}/transfer-ownership`, payload: { memberId: 'mbr_00000000000000000000000000' }, okStatus: 404 },
  { method: 'GET', url: `${NO_ORG}/members`, okStatus: 404 },
  { method: 'PATCH', url: `${NO_ORG}/members/mbr_00000000000000000000000000`, payload: { role: 'viewer' }, okStatus: 404 },
  { method: 'DELETE', url: `${NO_ORG}/members/mbr_00000000000000000000000000`, okStatus: 404 },
  { method: 'POST', url: `${NO_ORG}/leave`, okStatus: 404 },
  { method: 'GET', url: `${NO_ORG}/invitations`, okStatus: 404 },
  { method: 'POST', url: `${NO_ORG}/invitations`, payload: { email: 'nobody@example.com', role: 'viewer' }, okStatus: 404 },
  { method: 'DELETE', url: `${NO_ORG}/invitations/inv_00000000000000000000000000`, okStatus: 404 },
  { method: 'POST', url: `${NO_ORG}/invitations/inv_00000000000000000000000000/resend`, okStatus: 404 },
  // An unknown token: 400 once authenticated.
  { method: 'POST', url: '/api/v1/invitations/accept', payload: { token: 'x'.repeat(43) }, okStatus: 400 },
  // roles (docs/api.md#custom-roles)
  { method: 'GET', url: '/api/v1/permissions', okStatus: 200 },
  { method: 'GET', url: `${NO_ORG}/roles`, okStatus: 404 },
  { method: 'POST', url: `${NO_ORG}/roles`, payload: { key: 'security', name: 'Security', permissions: ['org:read'] }, okStatus: 404 },
  { method: 'PATCH', url: `${NO_ORG}/roles/security`, payload: { name: 'Changed' }, okStatus: 404 },
  { method: 'DELETE', url: `${NO_ORG}/roles/security`, okStatus: 404 },
  { method: 'POST', url: `${NO_ORG}/permissions/check`, payload: { userId: 'usr_00000000000000000000000000', permissions: ['org:read'] }, okStatus: 404 },
  { method: 'GET', url: `${NO_ORG}/projects`, okStatus: 404 },
  { method: 'POST', url: `${NO_ORG}/projects`, payload: { name: 'Security' }, okStatus: 404 },
  { method: 'GET', url: `${NO_ORG}/projects/prj_00000000000000000000000000`, okStatus: 404 },
  { method: 'PATCH', url: `${NO_ORG}/projects/prj_00000000000000000000000000`, payload: { name: 'Changed' }, okStatus: 404 },
  { method: 'DELETE', url: `${NO_ORG}/projects/prj_00000000000000000000000000`, okStatus: 404 },
  // The rows below run against the table's fixtures (TableFixtures): each control is the route's
  // success for its owner. A row that destroys what it names has a fixture of its own.
  // API keys
  { method: 'GET', url: `${ORG}/api-keys`, okStatus: 200 },
  { method: 'POST', url: `${ORG}/api-keys`, payload: { name: 'Security table' }, okStatus: 201 },
  { method: 'POST', url: '/api/v1/api-keys', payload: { organizationId: ':org', name: 'Security table' }, okStatus: 201 },
  { method: 'DELETE', url: `${ORG}/api-keys/:keyToRevoke`, okStatus: 200 },
  { method: 'DELETE', url: '/api/v1/api-keys/:keyToRevokeFlat', okStatus: 200 },
  { method: 'GET', url: '/api/v1/api-keys/:key/usage', okStatus: 200 },
  // audit
  { method: 'GET', url: `${ORG}/audit-logs`, okStatus: 200 },
  // webhooks, on both path shapes
  { method: 'GET', url: `${ORG}/webhooks`, okStatus: 200 },
  { method: 'POST', url: `${ORG}/webhooks`, payload: { url: HOOK_URL }, okStatus: 201 },
  { method: 'POST', url: '/api/v1/webhooks', payload: { organizationId: ':org', url: HOOK_URL }, okStatus: 201 },
  ...[
    [`${ORG}/webhooks`, ':hookToDelete'],
    ['/api/v1/webhooks', ':hookToDeleteFlat'],
  ].flatMap(([base, toDelete]): ProtectedRoute[] => [
    { method: 'GET', url: `${base}/:hook`, okStatus: 200 },
    { method: 'PATCH', url: `${base}/:hook`, payload: { description: 'Security table' }, okStatus: 200 },
    { method: 'GET', url: `${base}/:hook/deliveries`, okStatus: 200 },
    { method: 'GET', url: `${base}/:hook/deliveries/:delivery/attempts`, okStatus: 200 },
    { method: 'POST', url: `${base}/:hook/test`, okStatus: 200 },
    { method: 'POST', url: `${base}/:hook/rotate-secret`, okStatus: 200 },
    { method: 'POST', url: `${base}/:hook/recover`, payload: { since: '2026-01-01T00:00:00.000Z' }, okStatus: 202 },
    // A pending delivery (of the fixture's test event) may be retried: 200.
    { method: 'POST', url: `${base}/:hook/deliveries/:delivery/retry`, okStatus: 200 },
    { method: 'DELETE', url: `${base}/${toDelete}`, okStatus: 200 },
  ]),
  // the product's own events, published to the organization's endpoints.
  { method: 'POST', url: `${ORG}/events`, payload: { type: 'order.shipped', data: { orderId: 'o_1' } }, okStatus: 201 },
  // billing (the built-in test provider: no Stripe). URLs are on the harness's APP_ORIGIN.
  { method: 'GET', url: `${ORG}/billing`, okStatus: 200 },
  {
    method: 'POST',
    url: `${ORG}/billing/checkout`,
    payload: { priceId: 'price_pro', successUrl: 'http://app.test/billing/success', cancelUrl: 'http://app.test/billing/cancel' },
    okStatus: 200,
  },
  { method: 'GET', url: `${ORG}/billing/portal`, query: { return_url: 'http://app.test/billing' }, okStatus: 200 },
  // No subscription to cancel: 409 for a valid caller (the plan was set in the database, not bought).
  { method: 'POST', url: `${ORG}/billing/cancel`, okStatus: 409 },
];

/**
 * Protected routes (OpenAPI path templates) that have not joined the table yet: they arrived from
 * other issues while the table was being built. The issue that owns one replaces its entry with a row
 * above. The completeness test (security.test.ts) fails for a protected route in neither list, and for
 * an entry here that has a row or is no longer a protected route.
 */
export const awaitingRows: string[] = [];

// ---- forging tokens -------------------------------------------------------------------------

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** A JWT built by hand: HMAC-SHA256 over `header.payload` with `secret`, or no signature at all. */
export function forgeJwt(header: Record<string, unknown>, payload: Record<string, unknown>, secret?: string): string {
  const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  const signature = secret === undefined ? '' : createHmac('sha256', secret).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}

/** The claims of a JWT, read without verifying it. */
export function decodeJwt(token: string): Record<string, unknown> {
  const part = token.split('.')[1];
  if (part === undefined) throw new Error(`not a JWT: ${token}`);
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

const HS256 = { alg: 'HS256', typ: 'JWT' };

/** Access claims like the service's own (docs/api.md#bearer-access-tokens), valid for 15 minutes from the app's clock. */
function accessClaims(t: TestApp, of: Record<string, unknown>): Record<string, unknown> {
  const iat = Math.floor(t.clock.now().getTime() / 1000);
  return { userId: of.userId, email: of.email, sessionId: of.sessionId, iss: 'tenantry', iat, exp: iat + 900 };
}

// ---- requests and assertions --------------------------------------------------------------

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Sends the route's request with the given headers. */
export function send(t: TestApp, route: ProtectedRoute, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.request({
    method: route.method,
    url: route.url,
    headers,
    ...(route.query !== undefined ? { query: route.query } : {}),
    ...(route.payload !== undefined ? { payload: route.payload as object } : {}),
  });
}

const PROBE: ProtectedRoute = { method: 'GET', url: '/api/v1/users/me' };

/** 401 with exactly the error envelope of docs/api.md#errors. */
export function expectAuthenticationError(res: LightMyRequestResponse, what = '') {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(401);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(json(res)).toEqual({
    success: false,
    error: { code: 'AUTHENTICATION_ERROR', message: expect.stringMatching(/\S/), details: expect.any(String) },
  });
}

async function expectAccepted(t: TestApp, token: string, what: string) {
  const res = await send(t, PROBE, bearer(token));
  expect(res.statusCode, `${what} should be accepted: ${res.body}`).toBe(200);
}

// ---- the context every case shares ----------------------------------------------------------

export interface Session {
  accessToken: string;
  refreshToken: string;
  claims: Record<string, unknown>;
}

export interface SecurityContext {
  t: TestApp;
  /** A verified account with a known password. */
  owner: { email: string; password: string; userId: string };
  /** A new session of the owner. */
  freshSession(): Promise<Session>;
  /** A session of the owner that works right now (checked; replaced when a case revoked or outlived it). */
  liveSession(): Promise<Session>;
}

export function createSecurityContext(t: TestApp, owner: SecurityContext['owner']): SecurityContext {
  let live: Session | null = null;
  const freshSession = async (): Promise<Session> => {
    const tokens = await login(t, owner.email, owner.password);
    return { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, claims: decodeJwt(tokens.accessToken) };
  };
  return {
    t,
    owner,
    freshSession,
    async liveSession() {
      if (live && (await send(t, PROBE, bearer(live.accessToken))).statusCode === 200) return live;
      live = await freshSession();
      await expectAccepted(t, live.accessToken, 'a fresh access token');
      return live;
    },
  };
}

// ---- fixtures ------------------------------------------------------------------------------

/**
 * What the rows name as `:name`, made over HTTP once per table by the table's account: an
 * organization on the enterprise plan (so no plan limit gets in the way), API keys and webhook
 * endpoints (one for each row that revokes or deletes), and a pending delivery of a test event.
 */
export interface TableFixtures {
  org: string;
  key: string;
  keyToRevoke: string;
  keyToRevokeFlat: string;
  hook: string;
  hookToDelete: string;
  hookToDeleteFlat: string;
  delivery: string;
}

export async function createTableFixtures(t: TestApp, accessToken: string): Promise<TableFixtures> {
  const owner = { auth: bearer(accessToken) };
  const org = (await createOrg(t, owner, { name: 'Security table' })).id;
  await setPlan(t, org, 'enterprise');
  const apiKey = async (name: string) => {
    const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${org}/api-keys`, headers: owner.auth, payload: { name } });
    expect(res.statusCode, res.body).toBe(201);
    return json(res).apiKey.id as string;
  };
  const hook = async (description: string) => (await createWebhook(t, org, owner, { url: HOOK_URL, description })).id;
  const fixtures: Omit<TableFixtures, 'delivery'> = {
    org,
    key: await apiKey('usage'),
    keyToRevoke: await apiKey('revoked on the organization path'),
    keyToRevokeFlat: await apiKey('revoked on the flat path'),
    hook: await hook('read and changed'),
    hookToDelete: await hook('deleted on the organization path'),
    hookToDeleteFlat: await hook('deleted on the flat path'),
  };
  const test = await t.request({ method: 'POST', url: `/api/v1/organizations/${org}/webhooks/${fixtures.hook}/test`, headers: owner.auth });
  expect(test.statusCode, test.body).toBe(200);
  return { ...fixtures, delivery: json(test).data.deliveryId as string };
}

/** The row with its `:name` placeholders (path segments, and payload strings that are exactly one) filled in. */
export function resolveRoute(route: ProtectedRoute, fixtures: TableFixtures): ProtectedRoute {
  const value = (name: string) => {
    const v = (fixtures as unknown as Record<string, string | undefined>)[name];
    if (v === undefined) throw new Error(`${route.method} ${route.url}: no fixture named :${name}`);
    return v;
  };
  const fill = (v: unknown): unknown => {
    if (typeof v === 'string') return /^:\w+$/.test(v) ? value(v.slice(1)) : v;
    if (Array.isArray(v)) return v.map(fill);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };
  return {
    ...route,
    url: route.url.replace(/\/:(\w+)/g, (_, name: string) => `/${value(name)}`),
    ...(route.payload !== undefined ? { payload: fill(route.payload) } : {}),
  };
}

// ---- the cases -------------------------------------------------------------------------------

export interface SecurityCase {
  name: string;
  run(ctx: SecurityContext, route: ProtectedRoute): Promise<void>;
}

export const securityCases: SecurityCase[] = [
  {
    name: 'accepts a valid access token (control)',
    async run({ t, freshSession }, route) {
      const s = await freshSession();
      const res = await send(t, route, bearer(s.accessToken));
      if (route.okStatus !== undefined) expect(res.statusCode, res.body).toBe(route.okStatus);
      else expect(res.statusCode, res.body).not.toBe(401);
    },
  },
  {
    name: 'no token: 401',
    async run({ t }, route) {
      expectAuthenticationError(await send(t, route), 'no Authorization header');
      expectAuthenticationError(await send(t, route, { authorization: '' }), 'empty Authorization header');
    },
  },
  {
    name: 'malformed Authorization header: 401',
    async run({ t, liveSession }, route) {
      const token = (await liveSession()).accessToken;
      const headers = [
        'Bearer',
        'Bearer ',
        `Bearer${token}`,
        token,
        `Token ${token}`,
        `Basic ${Buffer.from(`${PASSWORD}:${PASSWORD}`).toString('base64')}`,
        `Bearer ${token} ${token}`,
        `Bearer ${token}x`,
        `Bearer ${token.split('.').slice(0, 2).join('.')}`,
        'Bearer not-a-jwt',
        'Bearer a.b.c',
        'Bearer ...',
      ];
      for (const authorization of headers) expectAuthenticationError(await send(t, route, { authorization }), JSON.stringify(authorization));
    },
  },
  {
    name: 'token signed with another secret: 401',
    async run({ t, liveSession }, route) {
      const s = await liveSession();
      const claims = accessClaims(t, s.claims);
      // Control: the same forgery signed with the service's secret is accepted, so only the key differs.
      await expectAccepted(t, forgeJwt(HS256, claims, t.deps.config.jwtSecret), 'a token forged with the right secret');
      const otherSecret = randomBytes(32).toString('hex');
      expectAuthenticationError(await send(t, route, bearer(forgeJwt(HS256, claims, otherSecret))), 'random secret');
      expectAuthenticationError(await send(t, route, bearer(forgeJwt(HS256, claims, ''))), 'empty secret');
      // A real token whose payload was edited after signing.
      const [h, , sig] = s.accessToken.split('.');
      const edited = `${h}.${b64url(JSON.stringify({ ...s.claims, userId: 'usr_00000000000000000000000000' }))}.${sig}`;
      expectAuthenticationError(await send(t, route, bearer(edited)), 'edited payload');
    },
  },
  {
    name: "'alg: none' token: 401",
    async run({ t, liveSession }, route) {
      const claims = accessClaims(t, (await liveSession()).claims);
      for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
        expectAuthenticationError(await send(t, route, bearer(forgeJwt({ alg, typ: 'JWT' }, claims))), `alg ${alg}`);
        // Some parsers accept a signature that is present but ignored.
        const signed = forgeJwt(HS256, claims, t.deps.config.jwtSecret).split('.')[2]!;
        expectAuthenticationError(await send(t, route, bearer(`${forgeJwt({ alg, typ: 'JWT' }, claims)}${signed}`)), `alg ${alg} with a signature`);
      }
      expectAuthenticationError(await send(t, route, bearer(forgeJwt(HS256, claims))), 'HS256 without a signature');
    },
  },
  {
    name: 'expired access token: 401',
    async run({ t }, route) {
      // A user of its own: the clock moves, and this session must not have been touched by another case.
      const user = await signedInUser(t, 'expired');
      const { iat, exp } = decodeJwt(user.accessToken) as { iat: number; exp: number };
      expect(exp - iat).toBe(15 * 60);
      t.clock.advance(exp * 1000 - 1000 - t.clock.now().getTime());
      await expectAccepted(t, user.accessToken, 'a token one second before its expiry');
      t.clock.advance(1000);
      expectAuthenticationError(await send(t, route, bearer(user.accessToken)), 'token at its expiry');
      t.clock.advance(60 * 60 * 1000);
      expectAuthenticationError(await send(t, route, bearer(user.accessToken)), 'token an hour after its expiry');
    },
  },
  {
    name: 'refresh token used as an access token: 401',
    async run({ t, liveSession }, route) {
      const s = await liveSession();
      expectAuthenticationError(await send(t, route, bearer(s.refreshToken)), 'the refresh token');
      // Access claims signed with the refresh secret: the two secrets must not be interchangeable.
      const crossSigned = forgeJwt(HS256, accessClaims(t, s.claims), t.deps.config.jwtRefreshSecret);
      expectAuthenticationError(await send(t, route, bearer(crossSigned)), 'access claims signed with the refresh secret');
    },
  },
  {
    name: 'token of a revoked session (after logout): 401',
    async run({ t, freshSession }, route) {
      const s = await freshSession();
      await expectAccepted(t, s.accessToken, 'the token before logout');
      const out = await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.accessToken) });
      expect(out.statusCode, out.body).toBe(200);
      expectAuthenticationError(await send(t, route, bearer(s.accessToken)), 'token of the logged-out session');
    },
  },
  {
    name: 'well-signed token naming an unknown session or another user: 401',
    async run({ t, liveSession }, route) {
      const s = await liveSession();
      const secret = t.deps.config.jwtSecret;
      const unknownSession = accessClaims(t, { ...s.claims, sessionId: 'ses_00000000000000000000000000' });
      expectAuthenticationError(await send(t, route, bearer(forgeJwt(HS256, unknownSession, secret))), 'unknown session');
      const otherUser = accessClaims(t, { ...s.claims, userId: 'usr_00000000000000000000000000' });
      expectAuthenticationError(await send(t, route, bearer(forgeJwt(HS256, otherUser, secret))), 'session of another user');
      const wrongIssuer = { ...accessClaims(t, s.claims), iss: 'someone-else' };
      expectAuthenticationError(await send(t, route, bearer(forgeJwt(HS256, wrongIssuer, secret))), 'wrong issuer');
    },
  },
];

/** `{id}`-style OpenAPI path → a regular expression matching concrete paths. */
export const pathPattern = (path: string) => new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);

/** The table runs in this many files (security-table-N.test.ts), so that its parts run in parallel. */
export const TABLE_PARTS = 4;

/**
 * Part `part` (1 to `parts`) of the rows: contiguous, in the table's order, each row in exactly one
 * part. A part runs on an account and fixtures of its own, so the order the rows rely on (two-factor
 * verify and disable before setup) holds within each.
 */
export function tablePart(part: number, parts = TABLE_PARTS): ProtectedRoute[] {
  const size = Math.ceil(protectedRoutes.length / parts);
  return protectedRoutes.slice((part - 1) * size, part * size);
}

/**
 * One `describe` per route, one test per case. `app` gives the file's TestApp; without it the table
 * starts its own.
 */
export function describeSecurityTable(routes: ProtectedRoute[], app?: () => TestApp) {
  describe('security table', () => {
    let own: TestApp | undefined;
    let ctx: SecurityContext;
    let fixtures: TableFixtures;
    beforeAll(async () => {
      if (!app) own = await createTestApp();
      const t = app ? app() : own!;
      const email = uniqueEmail('security');
      const owner = await registerUser(t, email);
      await verifyEmailOf(t, email);
      ctx = createSecurityContext(t, owner);
      fixtures = await createTableFixtures(t, (await ctx.liveSession()).accessToken);
    });
    afterAll(async () => {
      await own?.close();
    });

    for (const route of routes) {
      describe(`${route.method} ${route.url}`, () => {
        for (const c of securityCases) it(c.name, () => c.run(ctx, resolveRoute(route, fixtures)));
      });
    }
  });
}
