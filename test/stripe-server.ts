// A fake Stripe API for tests: a local node:http server that speaks the part of Stripe's REST API
// the official `stripe` package calls for billing (customers, Checkout Sessions, Billing Portal
// sessions, subscriptions). Requests are form-encoded (`a[b][0][c]=v`), answers are JSON objects
// shaped like Stripe's, errors are Stripe's `{error: {type, code, message}}`. POSTs with an
// Idempotency-Key replay their first successful answer, as Stripe does. State lives in memory;
// every request is recorded. Signed events come from the package's own test-header helper.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';

export const WEBHOOK_SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';

export interface StripeRequest {
  method: string;
  path: string;
  /** Form body (POST) or query (GET/DELETE), decoded into nested objects. */
  params: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Failure {
  status: number;
  times: number;
  type: string;
  code?: string;
  message: string;
  /** Sent as `Stripe-Should-Retry`; the package retries 5xx unless told not to. */
  retryable: boolean;
  path?: RegExp;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const nowS = () => Math.floor(Date.now() / 1000);
const PERIOD_S = 30 * 24 * 60 * 60;

/** `a[b][0][c]=v` → {a: {b: [{c: 'v'}]}}: the encoding the package uses for v1 requests. */
export function decodeForm(body: string): Record<string, unknown> {
  const out: Obj = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const parts = key.replace(/\]/g, '').split('[');
    let cur: Obj = out;
    parts.forEach((p, i) => {
      const last = i === parts.length - 1;
      if (last) {
        if (Array.isArray(cur) && p === '') cur.push(value);
        else cur[p] = value;
        return;
      }
      if (cur[p] === undefined) cur[p] = /^\d*$/.test(parts[i + 1]!) ? [] : {};
      cur = cur[p];
    });
  }
  return out;
}

export interface FakeStripe {
  url: string;
  requests: StripeRequest[];
  customers: Map<string, Obj>;
  sessions: Map<string, Obj>;
  portals: Map<string, Obj>;
  subscriptions: Map<string, Obj>;
  /** Requests made to `path` (a string prefix or a pattern), optionally by method. */
  calls(method: string, path: string | RegExp): StripeRequest[];
  /** The next `times` matching calls (default 1) answer with this Stripe error. */
  failNext(status: number, opts?: Partial<Omit<Failure, 'status'>>): void;
  /** Clears pending failures. */
  recover(): void;
  /**
   * A slow provider: the next request matching `method` and `path` is answered (and acted on) only
   * once `release()` is called; `arrived` resolves when it comes in.
   */
  hold(method: string, path: RegExp): { arrived: Promise<void>; release(): void };
  /** Completes a checkout as a paying customer would: creates its subscription; returns the session. */
  completeCheckout(sessionId: string, opts?: { periodEnd?: number }): Obj;
  /** A subscription of `customer` on `price` (as Stripe would create it), stored and returned. */
  createSubscription(customer: string, price: string, opts?: { periodEnd?: number; metadata?: Obj }): Obj;
  /** A Stripe event object. */
  event(type: string, object: Obj, opts?: { id?: string; created?: number }): Obj;
  /** The body and headers of a signed webhook request (real current time in the signature). */
  signed(event: Obj, secret?: string): { payload: string; headers: Record<string, string> };
  /** The same for a body sent as is (any JSON, or none): Stripe signs bytes, not shapes. */
  signedRaw(payload: string, secret?: string): { payload: string; headers: Record<string, string> };
  close(): Promise<void>;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const requests: StripeRequest[] = [];
  const customers = new Map<string, Obj>();
  const sessions = new Map<string, Obj>();
  const portals = new Map<string, Obj>();
  const subscriptions = new Map<string, Obj>();
  const idempotent = new Map<string, { status: number; body: Obj }>();
  let failures: Failure[] = [];
  const holds: Array<{ method: string; path: RegExp; arrive: () => void; released: Promise<void> }> = [];
  const signer = new Stripe('sk_test_signer');

  function subscriptionObject(customer: string, price: string, periodEnd: number, metadata: Obj = {}): Obj {
    const subId = id('sub');
    const start = periodEnd - PERIOD_S;
    return {
      id: subId,
      object: 'subscription',
      customer,
      status: 'active',
      cancel_at_period_end: false,
      cancel_at: null,
      canceled_at: null,
      ended_at: null,
      created: start,
      start_date: start,
      livemode: false,
      metadata,
      // API versions since 2025-03 carry the period on the items, not on the subscription.
      items: {
        object: 'list',
        data: [
          {
            id: id('si'),
            object: 'subscription_item',
            subscription: subId,
            quantity: 1,
            current_period_start: start,
            current_period_end: periodEnd,
            price: {
              id: price,
              object: 'price',
              active: true,
              currency: 'usd',
              unit_amount: 2900,
              recurring: { interval: 'month', interval_count: 1 },
            },
          },
        ],
        has_more: false,
        url: `/v1/subscription_items?subscription=${subId}`,
      },
    };
  }

  const periodEndOf = (s: Obj): number => s.items.data[0].current_period_end;

  const error = (status: number, type: string, message: string, code?: string, param?: string) => ({
    status,
    body: { error: { type, message, ...(code ? { code } : {}), ...(param ? { param } : {}) } },
  });
  const missing = (what: string, value: string) =>
    error(404, 'invalid_request_error', `No such ${what}: '${value}'`, 'resource_missing', 'id');

  function route(method: string, path: string, p: Obj): { status: number; body: Obj } {
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/v1/customers') {
      const customer = {
        id: id('cus'),
        object: 'customer',
        created: nowS(),
        livemode: false,
        name: p.name ?? null,
        email: p.email ?? null,
        metadata: p.metadata ?? {},
      };
      customers.set(customer.id, customer);
      return { status: 200, body: customer };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      if (!p.customer || !customers.has(p.customer)) return missing('customer', String(p.customer));
      if (!p.success_url)
        return error(
          400,
          'invalid_request_error',
          'Missing required param: success_url.',
          'parameter_missing',
          'success_url',
        );
      const sessionId = `cs_test_${randomBytes(16).toString('hex')}`;
      const session = {
        id: sessionId,
        object: 'checkout.session',
        mode: p.mode ?? 'payment',
        status: 'open',
        payment_status: 'unpaid',
        customer: p.customer,
        client_reference_id: p.client_reference_id ?? null,
        metadata: p.metadata ?? {},
        success_url: p.success_url,
        cancel_url: p.cancel_url ?? null,
        subscription: null,
        line_items_input: p.line_items ?? [],
        url: `https://checkout.stripe.test/c/pay/${sessionId}`,
        created: nowS(),
        livemode: false,
      };
      sessions.set(sessionId, session);
      return { status: 200, body: session };
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (!p.customer || !customers.has(p.customer)) return missing('customer', String(p.customer));
      const portal = {
        id: id('bps'),
        object: 'billing_portal.session',
        customer: p.customer,
        return_url: p.return_url ?? null,
        url: `https://billing.stripe.test/p/session/${id('test')}`,
        created: nowS(),
        livemode: false,
      };
      portals.set(portal.id, portal);
      return { status: 200, body: portal };
    }
    if ((m = /^\/v1\/subscriptions\/([^/]+)$/.exec(path))) {
      const subId = decodeURIComponent(m[1]!);
      const sub = subscriptions.get(subId);
      if (!sub) return missing('subscription', subId);
      if (method === 'GET') return { status: 200, body: sub };
      if (method === 'POST') {
        if (sub.status === 'canceled')
          return error(
            400,
            'invalid_request_error',
            'A canceled subscription can only update its cancellation_details and metadata.',
          );
        if (p.cancel_at_period_end !== undefined) {
          sub.cancel_at_period_end = p.cancel_at_period_end === 'true';
          sub.cancel_at = sub.cancel_at_period_end ? periodEndOf(sub) : null;
          sub.canceled_at = sub.cancel_at_period_end ? nowS() : null;
        }
        if (p.metadata) sub.metadata = { ...sub.metadata, ...p.metadata };
        return { status: 200, body: sub };
      }
      if (method === 'DELETE') {
        if (sub.status === 'canceled')
          return error(400, 'invalid_request_error', `This subscription has already been canceled: ${subId}`);
        sub.status = 'canceled';
        sub.canceled_at = nowS();
        sub.ended_at = nowS();
        return { status: 200, body: sub };
      }
    }
    return error(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}).`);
  }

  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', async () => {
      const u = new URL(req.url ?? '/', 'http://stripe.local');
      const method = req.method ?? 'GET';
      const params = decodeForm(method === 'POST' ? body : u.searchParams.toString());
      requests.push({ method, path: u.pathname, params, headers: req.headers });
      const hi = holds.findIndex((h) => h.method === method && h.path.test(u.pathname));
      if (hi >= 0) {
        const [h] = holds.splice(hi, 1);
        h!.arrive();
        await h!.released;
      }
      const send = (status: number, payload: Obj, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req'), ...headers });
        res.end(JSON.stringify(payload));
      };
      if (!/^Bearer sk_test_/.test(req.headers.authorization ?? '')) {
        send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
        return;
      }
      const fi = failures.findIndex((f) => !f.path || f.path.test(u.pathname));
      if (fi >= 0) {
        const f = failures[fi]!;
        if (--f.times <= 0) failures.splice(fi, 1);
        send(
          f.status,
          { error: { type: f.type, message: f.message, ...(f.code ? { code: f.code } : {}) } },
          { 'stripe-should-retry': String(f.retryable) },
        );
        return;
      }
      const key = method === 'POST' ? req.headers['idempotency-key'] : undefined;
      const replay = typeof key === 'string' ? idempotent.get(key) : undefined;
      if (replay) {
        send(replay.status, replay.body, { 'idempotent-replayed': 'true' });
        return;
      }
      const out = route(method, u.pathname, params as Obj);
      if (typeof key === 'string' && out.status < 500) idempotent.set(key, out);
      send(out.status, out.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  const fake: FakeStripe = {
    url: `http://127.0.0.1:${port}`,
    requests,
    customers,
    sessions,
    portals,
    subscriptions,
    calls: (method, path) =>
      requests.filter(
        (r) => r.method === method && (typeof path === 'string' ? r.path.startsWith(path) : path.test(r.path)),
      ),
    failNext(status, opts = {}) {
      const type = status === 402 ? 'card_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
      failures.push({
        status,
        times: opts.times ?? 1,
        type: opts.type ?? type,
        message: opts.message ?? (status === 402 ? 'Your card was declined.' : 'An unknown error occurred'),
        retryable: opts.retryable ?? false,
        ...(opts.code ? { code: opts.code } : status === 402 ? { code: 'card_declined' } : {}),
        ...(opts.path ? { path: opts.path } : {}),
      });
    },
    recover() {
      failures = [];
    },
    hold(method, path) {
      let arrive = () => {};
      let release = () => {};
      const arrived = new Promise<void>((r) => (arrive = r));
      const released = new Promise<void>((r) => (release = r));
      holds.push({ method, path, arrive, released });
      return { arrived, release };
    },
    createSubscription(customer, price, opts = {}) {
      const sub = subscriptionObject(customer, price, opts.periodEnd ?? nowS() + PERIOD_S, opts.metadata);
      subscriptions.set(sub.id, sub);
      return sub;
    },
    completeCheckout(sessionId, opts = {}) {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`fake stripe: no checkout session ${sessionId}`);
      const price = session.line_items_input?.[0]?.price as string;
      const sub = fake.createSubscription(session.customer, price, { ...opts, metadata: session.metadata });
      Object.assign(session, { status: 'complete', payment_status: 'paid', subscription: sub.id });
      return session;
    },
    event(type, object, opts = {}) {
      return {
        id: opts.id ?? id('evt'),
        object: 'event',
        api_version: '2026-10-28.endive',
        created: opts.created ?? nowS(),
        data: { object: structuredClone(object) },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      };
    },
    signed(event, secret = WEBHOOK_SECRET) {
      return fake.signedRaw(JSON.stringify(event, null, 2), secret);
    },
    signedRaw(payload, secret = WEBHOOK_SECRET) {
      const header = signer.webhooks.generateTestHeaderString({ payload, secret, timestamp: nowS() });
      return { payload, headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header } };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
