// Accounts made the way a user makes them: over HTTP, with the link from the real mail.
import http from 'node:http';
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { expect } from 'vitest';
import { json, type TestApp } from './harness.js';

export const PASSWORD = 'Correct-Horse-9';
let counter = 0;

export const uniqueEmail = (label = 'user') => `${label}-${Date.now().toString(36)}-${++counter}@example.com`;

export async function registerUser(t: TestApp, email = uniqueEmail(), password = PASSWORD, fullName = 'Test User') {
  const res = await t.request({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password, fullName } });
  expect(res.statusCode, res.body).toBe(201);
  return { email, password, userId: json(res).userId as string };
}

export async function verifyEmailOf(t: TestApp, email: string) {
  const token = await t.mail.tokenFrom(email, /Verify your email/, '/verify-email');
  const res = await t.request({ method: 'POST', url: '/api/v1/auth/verify-email', payload: { token } });
  expect(res.statusCode, res.body).toBe(200);
}

export async function login(t: TestApp, email: string, password = PASSWORD, headers: Record<string, string> = {}) {
  const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, headers });
  expect(res.statusCode, res.body).toBe(200);
  const body = json(res);
  return { accessToken: body.accessToken as string, refreshToken: body.refreshToken as string, user: body.user };
}

/** A verified account, signed in. */
export async function signedInUser(t: TestApp, label = 'user') {
  const { email, password, userId } = await registerUser(t, uniqueEmail(label));
  await verifyEmailOf(t, email);
  const tokens = await login(t, email, password);
  return { email, password, userId, ...tokens, auth: { authorization: `Bearer ${tokens.accessToken}` } };
}

// ---- organizations ----------------------------------------------------------------

export type SignedInUser = Awaited<ReturnType<typeof signedInUser>>;
export type OrgRole = 'owner' | 'admin' | 'member' | 'viewer';

export const uniqueSlug = (label = 'org') => `${label}-${Date.now().toString(36)}-${++counter}`;

/** An organization created over HTTP by `owner` (201 checked). */
export async function createOrg(
  t: TestApp,
  owner: { auth: Record<string, string> },
  body: Record<string, unknown> = {},
) {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/organizations',
    headers: owner.auth,
    payload: { name: 'Test Org', slug: uniqueSlug(), ...body },
  });
  expect(res.statusCode, res.body).toBe(201);
  return json(res) as { id: string; name: string; slug: string } & Record<string, unknown>;
}

/** Billing does not exist yet: the plan column is set directly so an organization can hold more than 3 members. */
export async function setPlan(t: TestApp, orgId: string, plan: 'free' | 'pro' | 'enterprise') {
  await t.deps.db.execute(sql`update organizations set plan = ${plan} where id = ${orgId}`);
}

/** An invitation sent over HTTP (201 checked), with the token of its link. */
export async function invite(
  t: TestApp,
  orgId: string,
  by: { auth: Record<string, string> },
  email: string,
  role: Exclude<OrgRole, 'owner'>,
) {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/invitations`,
    headers: by.auth,
    payload: { email, role },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = json(res);
  const token = new URL(body.inviteUrl as string).searchParams.get('token')!;
  return { invitation: body.invitation as Record<string, any>, inviteUrl: body.inviteUrl as string, token }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** `user` joins the organization with `role`: invited by `by`, accepted over HTTP. Returns the membership. */
export async function addMember(
  t: TestApp,
  orgId: string,
  by: { auth: Record<string, string> },
  user: SignedInUser,
  role: Exclude<OrgRole, 'owner'>,
) {
  const { token } = await invite(t, orgId, by, user.email, role);
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/invitations/accept',
    headers: user.auth,
    payload: { token },
  });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { id: string; userId: string; role: OrgRole } & Record<string, unknown>;
}

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The rows of a raw `db.execute` (both drivers answer `{rows}`). */
export const rowsOf = (result: unknown): Row[] => (result as { rows: Row[] }).rows;

/** The organization's outbox events, oldest first. */
export async function eventsOf(t: TestApp, orgId: string): Promise<Row[]> {
  return rowsOf(
    await t.deps.db.execute(
      sql`select id, type, data, created_at from events where organization_id = ${orgId} order by created_at, id`,
    ),
  );
}

/** The organization's audit entries, oldest first, in the API's field names. */
export async function auditOf(t: TestApp, orgId: string): Promise<Row[]> {
  return rowsOf(
    await t.deps.db.execute(sql`
    select organization_id as "organizationId", actor_type as "actorType", actor_id as "actorId", action, method, path,
           status_code as "statusCode", ip_address as "ipAddress", user_agent as "userAgent"
    from audit_logs where organization_id = ${orgId} order by created_at, id`),
  );
}

/** The tables that hold an organization's rows (an organization_id column), read once per app. */
const orgTablesOf = new WeakMap<TestApp, Promise<string[]>>();
function orgTables(t: TestApp): Promise<string[]> {
  let tables = orgTablesOf.get(t);
  if (!tables) {
    tables = (async () =>
      rowsOf(
        await t.deps.db.execute(
          sql`select table_name from information_schema.columns where column_name = 'organization_id' and table_schema = current_schema() order by 1`,
        ),
      ).map((r) => r.table_name as string))();
    orgTablesOf.set(t, tables);
  }
  return tables;
}

/**
 * Every row the organizations own, in every table that holds an organization's rows, as text, in one
 * query: what a refused request must not change (compare before and after). `except` leaves tables
 * out (the audit log, which a key's refused request writes to).
 */
export async function organizationRows(t: TestApp, orgIds: string[], except?: RegExp): Promise<string[]> {
  const ids = sql.join(
    orgIds.map((id) => sql`${id}`),
    sql`, `,
  );
  const tables = (await orgTables(t)).filter((table) => !except?.test(table));
  const parts = [
    sql`select 'organizations'::text as t, row_to_json(x)::text as r from organizations x where id in (${ids})`,
    ...tables.map(
      (table) =>
        sql`select ${table}::text as t, row_to_json(x)::text as r from ${sql.identifier(table)} x where organization_id in (${ids})`,
    ),
  ];
  return rowsOf(await t.deps.db.execute(sql`${sql.join(parts, sql` union all `)} order by 1, 2`)).map(
    (row) => `${row.t} ${row.r}`,
  );
}

// ---- webhooks ---------------------------------------------------------------------

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** TCP connections accepted, whether or not a request followed. */
  connections: number;
  /** How it answers; replace at will. Default: 204. */
  handler: (req: ReceivedRequest, res: http.ServerResponse) => void;
  /** Resolves once `n` requests have arrived (headers and body read). */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A node:http webhook receiver on 127.0.0.1 that records every request. */
export async function startReceiver(handler?: Receiver['handler']): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      received.push(r);
      receiver.handler(r, res);
    });
  });
  server.on('connection', () => receiver.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    connections: 0,
    handler: handler ?? ((_req, res) => res.writeHead(204).end()),
    async waitFor(n, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} requests, expected ${n}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** A webhook endpoint created over HTTP on the organization path (201 checked): the `data` of the answer. */
export async function createWebhook(
  t: TestApp,
  orgId: string,
  by: { auth: Record<string, string> },
  payload: Record<string, unknown>,
) {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/webhooks`,
    headers: by.auth,
    payload,
  });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data as { id: string; secret: string; url: string; events: string[] } & Record<string, unknown>;
}

/** The endpoint's deliveries straight from the database, oldest first, with their event's data (`event_data`). */
export async function deliveryRows(t: TestApp, endpointId: string): Promise<Row[]> {
  return rowsOf(
    await t.deps.db.execute(sql`select d.*, e.data as event_data from webhook_deliveries d
      join events e on e.organization_id = d.organization_id and e.id = d.event_id
      where d.endpoint_id = ${endpointId} order by d.created_at, d.id`),
  );
}

/** The recorded attempts of a delivery, in order. */
export async function attemptRows(t: TestApp, deliveryId: string): Promise<Row[]> {
  return rowsOf(
    await t.deps.db.execute(sql`select * from webhook_attempts where delivery_id = ${deliveryId} order by attempt`),
  );
}

/** Verifies a received request with the official `stripe` package, at the app's (fake) clock time. Throws when it does not verify. */
export function stripeVerify(t: TestApp, req: ReceivedRequest, secret: string): Record<string, unknown> {
  const now = Math.floor(t.clock.now().getTime() / 1000);
  const stripe = new Stripe('sk_test_x');
  return stripe.webhooks.constructEvent(
    req.body,
    req.headers['x-webhook-signature'] as string,
    secret,
    300,
    undefined,
    now,
  ) as unknown as Record<string, unknown>;
}

// ---- API keys -------------------------------------------------------------------------------

export interface MadeKey {
  id: string;
  plain: string;
  /** The key as an `X-API-Key` header. */
  headers: Record<string, string>;
}

/** An API key created over HTTP by `by` (201 checked). */
export async function createApiKey(
  t: TestApp,
  orgId: string,
  by: { auth: Record<string, string> },
  scopes: string[],
  name = 'test key',
): Promise<MadeKey> {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/api-keys`,
    headers: by.auth,
    payload: { name, scopes },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = json(res);
  return {
    id: body.apiKey.id as string,
    plain: body.plainKey as string,
    headers: { 'x-api-key': body.plainKey as string },
  };
}

/** The stored state of a key: whether it is active and when it was revoked (null: not revoked). */
export async function keyState(
  t: TestApp,
  keyId: string,
): Promise<{ isActive: boolean; revokedAt: string | null } | undefined> {
  const [row] = rowsOf(await t.deps.db.execute(sql`select is_active, revoked_at from api_keys where id = ${keyId}`));
  if (!row) return undefined;
  return {
    isActive: row.is_active as boolean,
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at as string).toISOString(),
  };
}

/** The membership's role, or undefined when it is gone. */
export async function memberRoleOf(t: TestApp, memberId: string): Promise<string | undefined> {
  const [row] = rowsOf(await t.deps.db.execute(sql`select role from memberships where id = ${memberId}`));
  return row?.role as string | undefined;
}
