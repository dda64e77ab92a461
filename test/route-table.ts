// The route table (src/routes.ts) as the security tables read it: every operation a test app serves,
// a route or one of its aliases, with its guard and where an organization route finds its
// organization. The three tables are generated from it (test/security.ts for authentication,
// organizations/access.test.ts for roles, api-keys/scopes.test.ts for key scopes), so a route is
// covered by declaring it. What a declaration cannot say is kept here, by operationId, once for all
// three: a valid body (the guard runs after body validation, so even a refused request needs one) and
// a required query. Each table keeps only its own knowledge (a control's status, a fixture's name).
import { isOrgGuard, type Guard, type Method, type OrgLocator, type Route } from '../src/http/route.js';
import {
  ROLE_PERMISSIONS,
  SCOPE_PERMISSIONS,
  SCOPES,
  type Permission,
  type Scope,
} from '../src/platform/permissions.js';
import type { BuiltInRole as Role } from '../src/db/tables/organizations.js';
import { routes } from '../src/routes.js';
import { PASSWORD, uniqueEmail, uniqueSlug } from './factories.js';
import type { TestApp } from './harness.js';

export const API = '/api/v1';

/**
 * Where an organization route finds its organization: a path parameter (`orgId`), a lookup from
 * the path's first parameter (the flat paths: the key's or the endpoint's organization), or the body
 * (`organizationId` of the flat create routes): a function locator on a path without parameters.
 */
export type OrgPlace = { in: 'path' | 'lookup'; param: string } | { in: 'body' };

export interface Operation {
  operationId: string;
  method: Method;
  /** The path as registered, `:name` parameters included: /api/v1/… */
  url: string;
  /** The path parameters, in the order of the path. */
  params: string[];
  auth: Guard;
  /** An organization route's permission and where it finds its organization. */
  org?: { permission: Permission; place: OrgPlace };
  /** The request needs a body (declared, and not optional). */
  needsBody: boolean;
  /** The query parameters the route requires. */
  requiredQuery: string[];
  /** The first success status of the route. */
  success: number;
  /** The route's operationId, for an alias (its hand-kept knowledge applies to the alias too). */
  aliasOf?: string;
  /** The route is switched on in the app's configuration (`enabled`); a route switched off answers 404. */
  served: boolean;
}

const paramsOf = (url: string) => [...url.matchAll(/:(\w+)/g)].map((m) => m[1]!);

function placeOf(locator: OrgLocator, params: string[]): OrgPlace {
  if (typeof locator === 'string') return { in: 'path', param: locator };
  return params.length ? { in: 'lookup', param: params[0]! } : { in: 'body' };
}

function requiredOf(schema: unknown): string[] {
  const required = (schema as { required?: unknown } | undefined)?.required;
  return Array.isArray(required) ? (required as string[]) : [];
}

/** Every operation of the route table, in its order; `served` says which the app serves. */
export function operations(t: TestApp): Operation[] {
  const out: Operation[] = [];
  const add = (r: Route, url: string, operationId: string, locator: OrgLocator | undefined, aliasOf?: string) => {
    const params = paramsOf(url);
    out.push({
      operationId,
      method: r.method,
      url: `${API}${url}`,
      params,
      auth: r.auth,
      ...(isOrgGuard(r.auth) ? { org: { permission: r.auth.permission, place: placeOf(locator!, params) } } : {}),
      needsBody: r.schema.body !== undefined && !r.optionalBody,
      requiredQuery: requiredOf(r.schema.querystring),
      success: Object.keys(r.schema.response)
        .map(Number)
        .filter((s) => s >= 200 && s < 300)
        .sort((a, b) => a - b)[0]!,
      ...(aliasOf ? { aliasOf } : {}),
      served: !r.enabled || r.enabled(t.deps.config),
    });
  };
  for (const r of routes(t.deps)) {
    const locator = isOrgGuard(r.auth) ? r.auth.org : undefined;
    add(r, r.url, r.operationId, locator);
    for (const a of r.aliases ?? []) add(r, a.url, a.operationId, a.org ?? locator, r.operationId);
  }
  return out;
}

/** The hand-kept entry of an operation: its own, over its route's (an alias shares its route's). */
export function entryOf<T>(map: Record<string, T>, op: Operation): T | undefined {
  const own = map[op.operationId];
  const route = op.aliasOf ? map[op.aliasOf] : undefined;
  if (typeof own === 'object' && typeof route === 'object') return { ...route, ...own };
  return own ?? route;
}

/** The keys of a hand-kept map that name no operation of the table (a stale or misspelt entry). */
export function strayEntries(map: Record<string, unknown>, ops: Operation[]): string[] {
  const ids = new Set(ops.map((op) => op.operationId));
  return Object.keys(map).filter((id) => !ids.has(id));
}

// ---- the ids a request names ------------------------------------------------------------------

/** The rows of an organization a request can name, by kind. */
export interface Ids {
  org: string;
  member: string;
  invitation: string;
  project: string;
  key: string;
  hook: string;
  delivery: string;
  /** A custom role's key. */
  role: string;
}

/** What a path parameter names, by its name (the same in every route that has it). */
export const PARAM_IDS: Record<string, keyof Ids> = {
  orgId: 'org',
  memberId: 'member',
  invitationId: 'invitation',
  projectId: 'project',
  keyId: 'key',
  id: 'hook',
  deliveryId: 'delivery',
  key: 'role',
};

/** Well-formed ids that name nothing. */
export const UNKNOWN: Ids = {
  org: 'org_00000000000000000000000000',
  member: 'mbr_00000000000000000000000000',
  invitation: 'inv_00000000000000000000000000',
  project: 'prj_00000000000000000000000000',
  key: 'key_00000000000000000000000000',
  hook: 'wh_00000000000000000000000000',
  delivery: 'dlv_00000000000000000000000000',
  role: 'no-such-role',
};
/** The value of a path parameter that names no kind of `Ids` (a session, a passkey). */
export const placeholder = (param: string) => `${param.replace(/Id$/, '')}_00000000000000000000000000`;

/** The kind of id that names the organization of an organization route: the one to make unknown or foreign. */
export function orgKind(op: Operation): keyof Ids {
  const place = op.org!.place;
  if (place.in === 'body') return 'org';
  const kind = PARAM_IDS[place.param];
  if (!kind)
    throw new Error(`${op.operationId}: the organization's parameter :${place.param} names no kind of id (PARAM_IDS)`);
  return kind;
}

/** The kinds of id in the path other than the organization's (another organization's must be 404). */
export function subKinds(op: Operation): (keyof Ids)[] {
  const org = op.org ? orgKind(op) : undefined;
  return op.params.map((p) => PARAM_IDS[p]).filter((k): k is keyof Ids => k !== undefined && k !== org);
}

/** The path parameters that name no kind of id (the completeness tests ask for an entry). */
export const unnamedParams = (op: Operation) => op.params.filter((p) => !PARAM_IDS[p]);

/** The value of each path parameter: `values` first, then `ids` by kind, else a placeholder. */
export function paramValues(
  op: Operation,
  ids: Partial<Ids>,
  values: Record<string, string> = {},
): Record<string, string> {
  return Object.fromEntries(
    op.params.map((p) => {
      const kind = PARAM_IDS[p];
      return [p, values[p] ?? (kind ? ids[kind] : undefined) ?? placeholder(p)];
    }),
  );
}

/** The path with its parameters filled in (`paramValues`). */
export function pathOf(op: Operation, ids: Partial<Ids>, values: Record<string, string> = {}): string {
  const filled = paramValues(op, ids, values);
  return op.url.replace(/:(\w+)/g, (_, p: string) => filled[p]!);
}

// ---- what a request carries ---------------------------------------------------------------------

/** A webhook target that needs no private-URL switch; nothing is delivered (no worker runs in tests). */
export const HOOK_URL = 'https://example.com/security-table';

/**
 * A valid body of each operation that needs one, from the ids of the organization it acts on. Valid
 * means it passes validation and reaches the guard; what it does once allowed is each table's affair.
 */
export const BODIES: Record<string, (ids: Ids) => object> = {
  // auth and passkeys
  setUpTwoFactor: () => ({ password: PASSWORD }),
  verifyTwoFactor: () => ({ code: '000000' }),
  disableTwoFactor: () => ({ password: PASSWORD, code: '000000' }),
  changePassword: () => ({ currentPassword: PASSWORD, newPassword: 'Another-Horse-10' }),
  requestEmailChange: () => ({ newEmail: uniqueEmail('new-address'), password: PASSWORD }),
  deleteMe: () => ({ password: PASSWORD }),
  passkeyRegistrationVerify: () => ({
    response: { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA' } },
  }),
  renamePasskey: () => ({ name: 'Renamed' }),
  // the route table
  updateMe: () => ({ preferences: { language: 'en' } }),
  updateMemberRole: () => ({ role: 'viewer' }),
  createInvitation: () => ({ email: uniqueEmail('invitee'), role: 'viewer' }),
  acceptInvitation: () => ({ token: 'x'.repeat(43) }),
  declineInvitation: () => ({ token: 'x'.repeat(43) }),
  createOrganization: () => ({ name: 'Made by the table', slug: uniqueSlug('table') }),
  updateOrganization: () => ({ name: 'Changed', settings: { features: { webhooks: true } } }),
  transferOwnership: (ids) => ({ memberId: ids.member }),
  createProject: () => ({ name: 'Made by the table', description: 'x' }),
  updateProject: () => ({ name: 'Renamed' }),
  createApiKey: () => ({ name: 'Made by the table', scopes: [...SCOPES] }),
  createOrganizationApiKey: (ids) => ({ organizationId: ids.org, name: 'Made by the table' }),
  publishEvent: () => ({ type: 'order.shipped', data: { orderId: 'o_1' } }),
  updateWebhookEndpoint: () => ({ description: 'Changed by the table' }),
  recoverWebhookDeliveries: () => ({ since: '2026-01-01T00:00:00.000Z' }),
  createWebhookEndpoint: () => ({ url: HOOK_URL }),
  createWebhookEndpointFlat: (ids) => ({ organizationId: ids.org, url: HOOK_URL }),
  reauthenticate: () => ({ password: PASSWORD }),
  confirmEmailChange: () => ({ token: 'x'.repeat(43) }),
  createRole: () => ({
    key: uniqueSlug('table-role').slice(0, 40),
    name: 'Made by the table',
    permissions: ['org:read'],
  }),
  updateRole: () => ({ name: 'Renamed by the table' }),
  checkPermissions: () => ({ userId: 'usr_00000000000000000000000000', permissions: ['org:read'] }),
  createCheckout: () => ({
    priceId: 'price_pro',
    successUrl: 'http://app.test/billing/success',
    cancelUrl: 'http://app.test/billing/cancel',
  }),
};

/** The ids a body names besides the organization's (another organization's must be 404). */
export const BODY_IDS: Record<string, (keyof Ids)[]> = { transferOwnership: ['member'] };

/** The query of each operation that requires one (URLs on the harness's APP_ORIGIN). */
export const QUERIES: Record<string, Record<string, string>> = {
  createBillingPortalSession: { return_url: 'http://app.test/billing' },
};

/** The body and query of an operation, from `ids`. */
export function inputOf(op: Operation, ids: Ids): { payload?: object; query?: Record<string, string> } {
  const body = entryOf(BODIES, op);
  const query = entryOf(QUERIES, op);
  return { ...(body ? { payload: body(ids) } : {}), ...(query ? { query } : {}) };
}

/** What an operation lacks of this file's knowledge: a body it needs, a query it requires. */
export function missingInput(op: Operation): string[] {
  const out: string[] = [];
  if (op.needsBody && !entryOf(BODIES, op))
    out.push(`${op.operationId}: needs a valid body in BODIES (test/route-table.ts)`);
  if (op.requiredQuery.length && !entryOf(QUERIES, op))
    out.push(`${op.operationId}: requires ${op.requiredQuery.join(', ')} in QUERIES (test/route-table.ts)`);
  return out;
}

// ---- who may: roles and scopes ------------------------------------------------------------------

/** The roles, lowest first. */
export const RANK: Role[] = ['viewer', 'member', 'admin', 'owner'];

/** The roles granted `permission` (ROLE_PERMISSIONS), lowest first. */
export const rolesWith = (permission: Permission) => RANK.filter((r) => ROLE_PERMISSIONS[r].has(permission));

/** The scopes that reach `permission` (SCOPE_PERMISSIONS). */
export const scopesReaching = (permission: Permission): Scope[] =>
  SCOPES.filter((s) => (SCOPE_PERMISSIONS[s] as readonly Permission[]).includes(permission));

/** The scope that reaches `permission` with the fewest other permissions: the control of a key table. */
export function narrowestScope(permission: Permission): Scope | undefined {
  return [...scopesReaching(permission)].sort((a, b) => SCOPE_PERMISSIONS[a].length - SCOPE_PERMISSIONS[b].length)[0];
}
