// GET /metrics (http/metrics.ts): Prometheus text, request durations by route pattern, the worker's
// delivery outcomes, the webhook queue read through a short cache, the password-hash queue, the
// process defaults; METRICS_TOKEN; never rate limited nor in the OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, createWebhook, setPlan, signedInUser, type SignedInUser } from '../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../test/harness.js';
import { workerFixtures } from '../../test/fixtures/worker.js';
import { Semaphore } from '../lib/semaphore.js';
import { startWorkerMetrics } from '../worker-metrics.js';
import { bearerMatches, createQueueReader } from './metrics.js';
import { waitUntil } from '../../test/expect.js';

const apps: TestApp[] = [];
async function app(env: Record<string, string> = {}, productionHashCost = false) {
  const made = await createTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS: '60', ...env },
    productionHashCost,
  });
  apps.push(made);
  return made;
}
let t: TestApp;
let owner: SignedInUser;
const fx = workerFixtures(() => t);
beforeAll(async () => {
  t = await app();
  owner = await signedInUser(t, 'metrics');
});
afterAll(async () => {
  await fx.stopAll();
  for (const a of apps.reverse()) await a.close();
});

const scrape = async (a: TestApp, headers: Record<string, string> = {}) =>
  a.request({ method: 'GET', url: '/metrics', headers });

/** The value of one series, e.g. value(text, 'tenantry_webhook_deliveries_total{outcome="delivered"}'). */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('answers Prometheus text with the process defaults, outside rate limits and the OpenAPI document', async () => {
    const res = await scrape(t);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toMatch(/^# TYPE process_cpu_user_seconds_total counter$/m);
    expect(res.body).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    const doc = json(await t.request({ method: 'GET', url: '/docs/json' }));
    expect(Object.keys(doc.paths as object)).not.toContain('/metrics');

    const strict = await app({ RATE_LIMIT_ANON_PER_MIN: '1' });
    const answers = await Promise.all(Array.from({ length: 5 }, () => scrape(strict)));
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
  });

  it('times requests by route pattern, never the raw URL; no route is "unmatched"', async () => {
    const orgId = 'org_metrics_does_not_exist';
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers: owner.auth }))
        .statusCode,
    ).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/no-such-route/abc123' })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const text = (await scrape(t)).body;
    expect(
      value(
        text,
        'http_request_duration_seconds_count{route="/api/v1/organizations/:orgId/projects",method="GET",status="404"}',
      ),
    ).toBe(1);
    expect(
      value(text, 'http_request_duration_seconds_count{route="unmatched",method="GET",status="404"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(text, 'http_request_duration_seconds_count{route="/health",method="GET",status="200"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(
      /^http_request_duration_seconds_bucket\{le="0\.005",route="\/health",method="GET",status="200"\} \d+$/m,
    );
    expect(text).not.toContain(orgId);
    expect(text).not.toContain('abc123');
  });

  it('with METRICS_TOKEN: 401 in the error envelope without the bearer token or with another one', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const guarded = await app({ METRICS_TOKEN: token });
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong' },
      { authorization: `Bearer ${token}x` },
      { authorization: token },
    ]) {
      const res = await scrape(guarded, headers);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(json(res)).toEqual({
        success: false,
        error: { code: 'AUTHENTICATION_ERROR', message: 'Metrics token required', details: expect.any(String) },
      });
    }
    const ok = await scrape(guarded, { authorization: `Bearer ${token}` });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('tenantry_webhook_queue_depth');
    expect(bearerMatches(`bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(undefined, token)).toBe(false);
  });

  it('counts the worker results by outcome: delivered, retried, failed, canceled', async () => {
    const before = (await scrape(t)).body;
    for (const outcome of ['delivered', 'retried', 'failed', 'canceled'])
      expect(value(before, `tenantry_webhook_deliveries_total{outcome="${outcome}"}`)).toBe(0);
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    const ok = await fx.receiver();
    const broken = await fx.receiver((_req, res) => res.writeHead(500).end());
    const good = await createWebhook(t, org.id, owner, { url: ok.url });
    const bad = await createWebhook(t, org.id, owner, { url: broken.url });
    const gone = await createWebhook(t, org.id, owner, { url: ok.url });
    await fx.record(org.id, 2);
    // Turned off after its deliveries were recorded: the worker cancels them.
    const off = await t.request({
      method: 'PATCH',
      url: `/api/v1/organizations/${org.id}/webhooks/${gone.id}`,
      headers: owner.auth,
      payload: { isActive: false },
    });
    expect(off.statusCode).toBe(200);
    const worker = fx.worker();
    await worker.start();
    await worker.drain();
    // The second (last) attempts of the broken endpoint's deliveries fail for good.
    t.clock.advance(61_000);
    await worker.drain();
    expect(await fx.statusCounts(good.id)).toEqual({ delivered: 2 });
    expect(await fx.statusCounts(bad.id)).toEqual({ failed: 2 });
    const text = (await scrape(t)).body;
    expect(value(text, 'tenantry_webhook_deliveries_total{outcome="delivered"}')).toBe(2);
    expect(value(text, 'tenantry_webhook_deliveries_total{outcome="retried"}')).toBe(2);
    expect(value(text, 'tenantry_webhook_deliveries_total{outcome="failed"}')).toBe(2);
    expect(value(text, 'tenantry_webhook_deliveries_total{outcome="canceled"}')).toBe(2);
    await fx.stopAll();
  });

  it('reads the webhook queue once per cache period: depth, and how long the oldest due delivery has waited', async () => {
    const a = await app();
    const who = await signedInUser(a, 'queue');
    const org = await createOrg(a, who);
    await createWebhook(a, org.id, who, { url: 'http://127.0.0.1:9/never-attempted' });
    const record = (n: number) => workerFixtures(() => a).record(org.id, n);

    const first = (await scrape(a)).body;
    expect(value(first, 'tenantry_webhook_queue_depth')).toBe(0);
    expect(value(first, 'tenantry_webhook_oldest_pending_seconds')).toBe(0);

    const fresh = createQueueReader(a.deps, 0);
    await record(3);
    a.clock.advance(90_000);
    expect(await fresh()).toEqual({ depth: 3, oldestDueS: 90 });

    // Within the cache period the scrape still shows what it read first; a reader past its period reads again.
    const cached = createQueueReader(a.deps, 60_000);
    const [x, y] = await Promise.all([cached(), cached()]);
    expect(x).toEqual({ depth: 3, oldestDueS: 90 });
    expect(y).toBe(x);
    await record(2);
    expect(await cached()).toEqual({ depth: 3, oldestDueS: 90 });
    expect(await fresh()).toEqual({ depth: 5, oldestDueS: 90 });
  });

  it('exports the password hashes waiting for a slot', async () => {
    const gate = new Semaphore(1, 10);
    let release = () => {};
    const held = gate.run(() => new Promise<void>((r) => (release = r)));
    const waiting = [gate.run(async () => {}), gate.run(async () => {})];
    expect(gate.queued).toBe(2);
    release();
    await Promise.all([held, ...waiting]);
    expect(gate.queued).toBe(0);

    // At the production cost, one hash at a time: the ones behind it wait while /metrics is read.
    const slow = await app({ AUTH_HASH_CONCURRENCY: '1' }, true);
    const hashes = Array.from({ length: 8 }, () => slow.deps.passwords.hash('Queued-Password-1'));
    expect(slow.deps.passwords.queueDepth()).toBe(7);
    const depth = value((await scrape(slow)).body, 'tenantry_password_hash_queue_depth');
    expect(depth).toBeGreaterThan(0);
    expect(depth).toBeLessThanOrEqual(7);
    await Promise.all(hashes);
    await waitUntil('the hash queue is empty', () => slow.deps.passwords.queueDepth() === 0);
    expect(value((await scrape(slow)).body, 'tenantry_password_hash_queue_depth')).toBe(0);
  });

  it("a separate worker's own /metrics over HTTP (WORKER_METRICS_PORT): its delivery outcomes, the queue, behind METRICS_TOKEN", async () => {
    const token = 'worker-metrics-token-0123456789abcdef';
    const a = await app({ METRICS_TOKEN: token, WEBHOOK_WORKER: 'off' });
    const who = await signedInUser(a, 'worker-metrics');
    const org = await createOrg(a, who);
    await setPlan(a, org.id, 'pro');
    const wfx = workerFixtures(() => a);
    const rx = await wfx.receiver();
    await createWebhook(a, org.id, who, { url: rx.url });
    const server = await startWorkerMetrics(a.deps, 0, '127.0.0.1');
    try {
      const base = `http://127.0.0.1:${(server.server.address() as { port: number }).port}`;
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect((await fetch(`${base}/metrics`)).status).toBe(401);
      await wfx.record(org.id, 3);
      const worker = wfx.worker();
      await worker.start();
      await worker.drain();
      const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(value(text, 'tenantry_webhook_deliveries_total{outcome="delivered"}')).toBe(3);
      expect(text).toMatch(/^# TYPE tenantry_webhook_queue_depth gauge$/m);
      expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    } finally {
      await server.close();
      await wfx.stopAll();
    }
  });
});
