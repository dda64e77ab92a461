// The shared security table (ARCHITECTURE.md, after unkey): every protected operation of the route
// table (src/routes.ts) is a row, and `describeSecurityTable` runs every case of `securityCases`
// against every row. The rows are generated: a route whose guard is not 'none' has one, and so has
// each of its aliases; what its declaration cannot say (the control's status, a body that changes
// nothing, which fixture a parameter names) is its entry in `CONTROLS`. Bad tokens are forged here
// with node:crypto (HS256 by hand), so a bug in the token code under test cannot make its own
// forgeries pass.
import { createHmac, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from './harness.js';
import {
  createOrg,
  createWebhook,
  login,
  PASSWORD,
  registerUser,
  setPlan,
  uniqueEmail,
  verifyEmailOf,
} from './factories.js';
import {
  BODIES,
  entryOf,
  HOOK_URL,
  type Ids,
  type Operation,
  operations,
  paramValues,
  pathOf,
  QUERIES,
  strayEntries,
  UNKNOWN,
} from './route-table.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ProtectedRoute {
  operationId: string;
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
  /** The guard is 'optional': without a token the route answers as it does to anyone (`anonymous`). */
  optional?: boolean;
  /** An optional route's answer without a credential; when absent, `okStatus`. */
  anonymous?: number;
}

/**
 * What the table knows of an operation beyond its declaration. Every field is optional; the
 * completeness test (security.test.ts) says when one is needed.
 */
export interface Control {
  /**
   * Path parameters, where the default is not meant: `:name` for a fixture (a row that destroys what
   * it names has a fixture of its own), else a literal. Default: the table's fixture of the
   * parameter's kind (`org`, `key`, `hook`, `delivery`), else an id that names nothing.
   */
  params?: Record<string, string>;
  /** The body, where the valid one (BODIES in route-table.ts) would change something that matters. */
  payload?: unknown;
  query?: Record<string, string>;
  /**
   * The control's status, needed by every state-changing operation (someone must have decided that
   * its call changes nothing that matters to the other rows) and by a read that names something
   * other than a fixture. Default, for a read of fixtures: the route's first success status.
   */
  okStatus?: number;
  /** Where the guard is 'optional': the answer without a credential, where it is not the control's. */
  anonymous?: number;
  /** Operations whose rows must come after this one, on the same account. */
  before?: string[];
}

/** An organization that does not exist: calls under it change nothing once authenticated (404). */
const NO_ORG = { orgId: UNKNOWN.org };

/**
 * The hand-kept knowledge of the table, by operationId (an alias has its route's entry, under its
 * own). Payloads are chosen so that an authenticated call changes nothing that matters (or fails
 * later, with another status), while the same call without valid credentials must answer 401 first.
 * The rows of the table's own organization (`:org`, on the enterprise plan) succeed for its owner.
 */
export const CONTROLS: Record<string, Control> = {
  // users
  updateMe: { okStatus: 200 },
  revokeSession: { okStatus: 404 },
  revokeAllSessions: { okStatus: 200 },
  // organizations, members, invitations, projects (docs/api.md#organizations): the writes meet an
  // unknown organization (404), or an invalid body (400).
  createOrganization: { payload: { name: 'Security', slug: 'x' }, okStatus: 400 },
  updateOrganization: { params: NO_ORG, okStatus: 404 },
  deleteOrganization: { params: NO_ORG, okStatus: 404 },
  transferOwnership: { params: NO_ORG, okStatus: 404 },
  updateMemberRole: { params: NO_ORG, okStatus: 404 },
  removeMember: { params: NO_ORG, okStatus: 404 },
  leaveOrganization: { params: NO_ORG, okStatus: 404 },
  createInvitation: { params: NO_ORG, okStatus: 404 },
  revokeInvitation: { params: NO_ORG, okStatus: 404 },
  resendInvitation: { params: NO_ORG, okStatus: 404 },
  // An unknown token: 400 once authenticated, and to anyone on the optional decline.
  acceptInvitation: { okStatus: 400 },
  declineInvitation: { okStatus: 400 },
  // An invitation id that is not the caller's: 404 once authenticated.
  acceptMyInvitation: { okStatus: 404 },
  declineMyInvitation: { okStatus: 404 },
  createProject: { params: NO_ORG, okStatus: 404 },
  getProject: { params: NO_ORG, okStatus: 404 },
  updateProject: { params: NO_ORG, okStatus: 404 },
  deleteProject: { params: NO_ORG, okStatus: 404 },
  // API keys
  createApiKey: { okStatus: 201 },
  createOrganizationApiKey: { okStatus: 201 },
  revokeApiKey: { params: { keyId: ':keyToRevoke' }, okStatus: 200 },
  revokeApiKeyById: { params: { keyId: ':keyToRevokeFlat' }, okStatus: 200 },
  // webhooks, on both path shapes; the product's own events
  publishEvent: { okStatus: 201 },
  createWebhookEndpoint: { okStatus: 201 },
  createWebhookEndpointFlat: { okStatus: 201 },
  updateWebhookEndpoint: { okStatus: 200 },
  deleteWebhookEndpoint: { params: { id: ':hookToDelete' }, okStatus: 200 },
  deleteWebhookEndpointFlat: { params: { id: ':hookToDeleteFlat' } },
  sendWebhookTestEvent: { okStatus: 200 },
  rotateWebhookSecret: { okStatus: 200 },
  recoverWebhookDeliveries: { okStatus: 202 },
  // A pending delivery (of the fixture's test event) may be retried: 200.
  retryWebhookDelivery: { okStatus: 200 },
  // billing (the built-in test provider: no Stripe). No subscription to cancel: 409 for a valid
  // caller (the plan was set in the database, not bought).
  createCheckout: { okStatus: 200 },
  cancelSubscription: { okStatus: 409 },
  // auth and passkeys. Two-factor verify and disable run before setup: until the setup control has
  // run the account has no pending secret, so '000000' cannot happen to be a right code (400 either
  // way), and two-factor is never enabled for the account whose sign-ins the table needs; setup leaves
  // only a pending secret.
  // Without an access token, logout takes a refresh token instead: with neither, 401.
  logout: { okStatus: 200, anonymous: 401 },
  verifyTwoFactor: { payload: { code: '000000' }, okStatus: 400, before: ['setUpTwoFactor'] },
  disableTwoFactor: { payload: { password: PASSWORD, code: '000000' }, okStatus: 400, before: ['setUpTwoFactor'] },
  setUpTwoFactor: { payload: { password: PASSWORD }, okStatus: 200 },
  // Same new password as the current one: 400 once authenticated, so the account is untouched.
  changePassword: { payload: { currentPassword: PASSWORD, newPassword: PASSWORD }, okStatus: 400 },
  // The account's life: an invalid address, or no proof at all, answers 400 once authenticated.
  requestEmailChange: { payload: { newEmail: 'not-an-address', password: PASSWORD }, okStatus: 400 },
  deleteMe: { payload: {}, okStatus: 400 },
  // passkeys (docs/api.md#passkeys): options change nothing but a challenge; the rest meet nothing.
  passkeyRegistrationOptions: { okStatus: 200 },
  passkeyRegistrationVerify: {
    payload: { response: { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA' } } },
    okStatus: 400,
  },
  listPasskeys: { okStatus: 200 },
  reauthenticate: { okStatus: 200 },
  // An unknown token: 400 once authenticated.
  confirmEmailChange: { okStatus: 400 },
  // roles: a new role of the table's organization; the others name no role of it (404).
  createRole: { okStatus: 201 },
  updateRole: { okStatus: 404 },
  deleteRole: { okStatus: 404 },
  checkPermissions: { okStatus: 200 },
  renamePasskey: { params: { id: 'pk_00000000000000000000000000' }, payload: { name: 'Security' }, okStatus: 404 },
  deletePasskey: { params: { id: 'pk_00000000000000000000000000' }, okStatus: 404 },
};

/**
 * The documented operations that answer to anyone, with or without a credential (auth 'none'), in
 * the route table or not yet: every other documented operation is a row. A public route has no row,
 * so each is named here, where making a route public shows as a decision; a guard dropped by mistake
 * would otherwise drop its row with it (security.test.ts checks the document against both lists).
 */
export const PUBLIC_OPERATIONS = [
  'getHealth',
  'getReadiness',
  // the public keys that verify access tokens (docs/tokens.md)
  'getJwks',
  'getWellKnownJwks',
  // auth and passkeys: signing up and in, mailed links, tokens
  'register',
  'login',
  'forgotPassword',
  'resetPassword',
  'completeTwoFactorLogin',
  'requestMagicLink',
  'verifyMagicLink',
  'verifyEmail',
  'resendVerificationEmail',
  'refreshTokens',
  'passkeyAuthenticationOptions',
  'passkeyAuthenticationVerify',
  // the invitation page: what an invitation offers, by its token
  'previewInvitation',
  // billing: Stripe's inbound events, and the built-in test provider's checkout page
  'receiveStripeEvent',
  'showTestCheckout',
  'completeTestCheckout',
  'cancelTestCheckout',
];

/** The table's fixtures as the `:name` placeholders `resolveRoute` fills in; the other kinds name nothing. */
const FIXTURE_IDS: Ids = { ...UNKNOWN, org: ':org', key: ':key', hook: ':hook', delivery: ':delivery' };

export interface SecurityTable {
  rows: ProtectedRoute[];
  /** What the rows lack, and hand-kept entries that name no row: the completeness test fails on any. */
  problems: string[];
}

/** The rows of every protected operation of the route table (`ops`) the app serves. */
export function securityTable(ops: Operation[]): SecurityTable {
  const problems: string[] = [];
  const row = (op: Operation, control: Control): ProtectedRoute => {
    const url = pathOf(op, FIXTURE_IDS, control.params);
    const onFixtures = Object.values(paramValues(op, FIXTURE_IDS, control.params)).every((v) => v.startsWith(':'));
    const payload = control.payload ?? entryOf(BODIES, op)?.(FIXTURE_IDS);
    const query = control.query ?? entryOf(QUERIES, op);
    const okStatus = control.okStatus ?? (op.method === 'GET' && onFixtures ? op.success : undefined);
    const what = `${op.operationId} (${op.method} ${op.url})`;
    if (okStatus === undefined)
      problems.push(`${what}: needs the status of its control in CONTROLS (test/security.ts)`);
    if (op.needsBody && payload === undefined)
      problems.push(`${what}: needs a body, in BODIES (test/route-table.ts) or CONTROLS`);
    if (op.requiredQuery.length && query === undefined) {
      problems.push(`${what}: requires ${op.requiredQuery.join(', ')}, in QUERIES (test/route-table.ts) or CONTROLS`);
    }
    return {
      operationId: op.operationId,
      method: op.method,
      url,
      ...(payload !== undefined ? { payload } : {}),
      ...(query !== undefined ? { query } : {}),
      ...(okStatus !== undefined ? { okStatus } : {}),
      ...(op.auth === 'optional' || op.auth === 'optionalUser'
        ? { optional: true, ...(control.anonymous !== undefined ? { anonymous: control.anonymous } : {}) }
        : {}),
    };
  };

  const before = new Map<string, string[]>();
  const rows: ProtectedRoute[] = [];
  for (const op of ops) {
    if (op.auth === 'none' || !op.served) continue;
    const control = entryOf(CONTROLS, op) ?? {};
    rows.push(row(op, control));
    if (control.before) before.set(op.operationId, control.before);
  }

  // Hand-kept entries that name no row.
  const named = new Set(rows.map((r) => r.operationId));
  for (const id of strayEntries(CONTROLS, ops)) problems.push(`CONTROLS.${id}: names no operation of the route table`);
  for (const op of ops) {
    if (op.auth === 'none' && CONTROLS[op.operationId])
      problems.push(`CONTROLS.${op.operationId}: the route is public (auth 'none')`);
  }
  for (const [id, later] of before)
    for (const l of later) if (!named.has(l)) problems.push(`${id}.before: ${l} names no row`);

  // A row comes before the rows it names in `before`.
  for (const [id, later] of before) {
    for (const l of later) {
      const i = rows.findIndex((r) => r.operationId === id);
      const j = rows.findIndex((r) => r.operationId === l);
      if (j === -1 || j > i) continue;
      const [moved] = rows.splice(j, 1);
      rows.splice(i, 0, moved!); // right after `id`, now at i - 1
    }
  }
  return { rows, problems };
}

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
export function send(
  t: TestApp,
  route: ProtectedRoute,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.request({
    method: route.method,
    url: route.url,
    headers,
    ...(route.query !== undefined ? { query: route.query } : {}),
    ...(route.payload !== undefined ? { payload: route.payload as object } : {}),
  });
}

const PROBE: ProtectedRoute = { operationId: 'getMe', method: 'GET', url: '/api/v1/users/me' };

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
    return {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      claims: decodeJwt(tokens.accessToken),
    };
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
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org}/api-keys`,
      headers: owner.auth,
      payload: { name },
    });
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
  const test = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${org}/webhooks/${fixtures.hook}/test`,
    headers: owner.auth,
  });
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
    name: "no token: 401 (where the guard is 'optional', the answer to anyone)",
    async run({ t }, route) {
      if (route.optional) {
        // The route is open to anyone: no credential is no caller, and the answer is the one anyone gets.
        const expected = route.anonymous ?? route.okStatus;
        for (const headers of [{}, { authorization: '' }] as Record<string, string>[]) {
          const res = await send(t, route, headers);
          if (expected === 401) expectAuthenticationError(res, `no credential: ${JSON.stringify(headers)}`);
          else expect(res.statusCode, res.body).toBe(expected);
        }
        return;
      }
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
      for (const authorization of headers)
        expectAuthenticationError(await send(t, route, { authorization }), JSON.stringify(authorization));
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
        expectAuthenticationError(
          await send(t, route, bearer(`${forgeJwt({ alg, typ: 'JWT' }, claims)}${signed}`)),
          `alg ${alg} with a signature`,
        );
      }
      expectAuthenticationError(await send(t, route, bearer(forgeJwt(HS256, claims))), 'HS256 without a signature');
    },
  },
  {
    name: 'expired access token: 401',
    async run({ t, freshSession }, route) {
      // A session of its own: the clock moves, and this session must not have been touched by another
      // case (a new sign-in of the table's account; a new account would cost a sign-up per row).
      const user = await freshSession();
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
      expectAuthenticationError(
        await send(t, route, bearer(crossSigned)),
        'access claims signed with the refresh secret',
      );
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
      expectAuthenticationError(
        await send(t, route, bearer(forgeJwt(HS256, unknownSession, secret))),
        'unknown session',
      );
      const otherUser = accessClaims(t, { ...s.claims, userId: 'usr_00000000000000000000000000' });
      expectAuthenticationError(
        await send(t, route, bearer(forgeJwt(HS256, otherUser, secret))),
        'session of another user',
      );
      const wrongIssuer = { ...accessClaims(t, s.claims), iss: 'someone-else' };
      expectAuthenticationError(await send(t, route, bearer(forgeJwt(HS256, wrongIssuer, secret))), 'wrong issuer');
    },
  },
];

/** `{id}`-style OpenAPI path → a regular expression matching concrete paths. */
export const pathPattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);

/** The table runs in this many files (security-table-N.test.ts), so that its parts run in parallel. */
export const TABLE_PARTS = 4;

/**
 * Part `part` (1 to `parts`) of the rows: contiguous, in the table's order, each row in exactly one
 * part. A part runs on an account and fixtures of its own, so the order the rows rely on (`before`)
 * holds within each.
 */
export function tablePart(rows: ProtectedRoute[], part: number, parts = TABLE_PARTS): ProtectedRoute[] {
  const size = Math.ceil(rows.length / parts);
  return rows.slice((part - 1) * size, part * size);
}

/**
 * Part `part` of the table, on an app of its own: the app is made while the file is collected, since
 * the rows are read from its route table (the switches of its configuration decide which routes exist).
 */
export async function describeSecurityTablePart(part: number): Promise<void> {
  const t = await createTestApp();
  afterAll(async () => {
    await t.close();
  });
  describeSecurityTable(tablePart(securityTable(operations(t)).rows, part), () => t);
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
      describe(`${route.operationId}: ${route.method} ${route.url}`, () => {
        for (const c of securityCases) it(c.name, () => c.run(ctx, resolveRoute(route, fixtures)));
      });
    }
  });
}
