// What the webhook benchmarks share (bench/webhooks*.ts): local receivers, the organization made
// Enterprise through the test checkout, API keys as a client would make them, and the CPU of the
// database's backends.
// A receiver is a minimal node:http server in the benchmark's process answering 204; it records each
// delivery id once with the time it arrived and the payload's `timestamp` (taken in the transaction
// that recorded the event, so "commit → receive" is slightly overstated by the commit itself). A
// black hole reads each request and never answers (the worker's timeout ends the attempt).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { api, onCleanup, postgresBackendPids, processCpuSeconds, type ServerChild } from './lib.js';

export interface Received {
  at: number;
  committedAt: number;
}

export async function startReceiver(opts: { blackHole?: boolean } = {}) {
  const deliveries = new Map<string, Received>();
  let raw = 0;
  let duplicates = 0;
  let requests = 0;
  // Each waiter with the count it waits for: woken once, not on every delivery.
  const waiters = new Map<() => void, number>();
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      if (opts.blackHole) return;
      const at = Date.now();
      const id = req.headers['x-webhook-delivery-id'];
      if (typeof id === 'string') {
        if (!deliveries.has(id)) {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
          deliveries.set(id, { at, committedAt: Date.parse(body.timestamp) });
          for (const [w, n] of waiters) if (deliveries.size >= n) w();
        } else duplicates++;
      } else raw++;
      res.writeHead(204).end();
    });
  });
  srv.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  const stop = onCleanup(
    'webhook receiver',
    () => new Promise<void>((resolve) => (srv.closeAllConnections(), srv.close(() => resolve()))),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    rawCount: () => raw,
    /** Requests whose body was read (a black hole's never answered). */
    requests: () => requests,
    /** The same delivery id received again. */
    duplicates: () => duplicates,
    stop,
    /** Resolves once `n` distinct deliveries have arrived; rejects after `timeoutMs`. */
    async waitFor(n: number, timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (deliveries.size < n) {
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`receiver got ${deliveries.size} of ${n} deliveries within ${timeoutMs / 1000} s`);
        await new Promise<void>((resolve) => {
          const done = () => (clearTimeout(t), waiters.delete(done), resolve());
          const t = setTimeout(done, Math.min(left, 500));
          waiters.set(done, n);
        });
      }
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** The organization on Enterprise (endpoints and API requests unlimited) through the test payment provider's checkout, as a person would. */
export async function makeEnterprise(baseUrl: string, token: string, orgId: string): Promise<void> {
  const checkout = await api<{ data: { sessionId: string } }>(
    baseUrl,
    'POST',
    `/api/v1/organizations/${orgId}/billing/checkout`,
    {
      priceId: 'price_enterprise',
      successUrl: 'http://localhost:3000/billing/done',
      cancelUrl: 'http://localhost:3000/billing',
    },
    token,
  );
  if (checkout.status !== 200) throw new Error(`billing checkout: ${checkout.status} ${JSON.stringify(checkout.body)}`);
  const done = await request(
    `${baseUrl}/api/v1/billing/test-checkout/${encodeURIComponent(checkout.body.data.sessionId)}/complete`,
    { method: 'POST' },
  );
  await done.body.text();
  if (done.statusCode !== 303) throw new Error(`complete test checkout: ${done.statusCode}`);
  const billing = await api<{ data: { plan: { name: string } } }>(
    baseUrl,
    'GET',
    `/api/v1/organizations/${orgId}/billing`,
    undefined,
    token,
  );
  if (billing.body.data?.plan?.name !== 'Enterprise')
    throw new Error(`organization plan after checkout: ${JSON.stringify(billing.body)}`);
}

/** An endpoint through the API; its id. */
export async function createEndpoint(
  server: ServerChild,
  token: string,
  orgId: string,
  url: string,
  events = ['project.created'],
): Promise<string> {
  const hook = await api<{ data: { id: string } }>(
    server.url,
    'POST',
    `/api/v1/organizations/${orgId}/webhooks`,
    { url, events },
    token,
  );
  if (hook.status !== 201) throw new Error(`create webhook endpoint: ${hook.status} ${JSON.stringify(hook.body)}`);
  return hook.body.data.id;
}

/** An API key with the plan's and the server's defaults (no rate limit of its own), as most clients make them. */
export async function createPlainKey(
  server: ServerChild,
  token: string,
  orgId: string,
  scopes: string[],
): Promise<string> {
  const res = await api<{ plainKey: string }>(
    server.url,
    'POST',
    `/api/v1/organizations/${orgId}/api-keys`,
    { name: 'bench', scopes },
    token,
  );
  if (res.status !== 201) throw new Error(`create API key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.plainKey;
}

/**
 * CPU of the database's backends: a snapshot now; `since(before)` is the CPU seconds they used
 * after it (a backend that appeared meanwhile, like the worker's connections, counts whole).
 */
export function backendMeter(postgres: { adminUrl: string; name: string } | null) {
  const snapshot = async () =>
    new Map(
      (postgres ? await postgresBackendPids(postgres.adminUrl, postgres.name) : []).map(
        (pid) => [pid, processCpuSeconds(pid)] as const,
      ),
    );
  return {
    snapshot,
    async since(before: Map<number, number>): Promise<number> {
      const now = await snapshot();
      return [...now].reduce((sum, [pid, cpu]) => sum + cpu - (before.get(pid) ?? 0), 0);
    },
  };
}

/** The URL of a benchmark's own database, on the admin URL's server. */
export function dbUrl(postgres: { adminUrl: string; name: string }): string {
  const u = new URL(postgres.adminUrl);
  u.pathname = `/${postgres.name}`;
  return u.toString();
}
