// A noisy neighbour (part `noisy` of `npm run bench -- webhooks`).
// Four Free organizations, each with its one endpoint on a receiver of its own that reads every
// request and never answers (a black hole: the attempt ends at WEBHOOK_TIMEOUT_MS, 30 s), and its
// one API key with the default rate limit. For 20 s each makes every project its plan lets it
// (8 connections; on a 429 it waits for Retry-After, as a client does), so the worker always has
// their deliveries due. A fifth organization creates one project every 500 ms through its own key;
// its endpoint answers 204. Measured: its commit → receive, with the worker inline, and the CPU of
// the server and of PostgreSQL per event made (the API request, and the delivery when one started:
// the fifth's, and the black holes' requests).
// Baseline: a raw undici POST to the fifth organization's receiver at each of its ticks.
import { Pool } from 'undici';
import {
  api,
  type BenchContext,
  type DatabaseChoice,
  cpuOf,
  createOrgOwner,
  fmt,
  fmtMs,
  foreignCpu,
  foreignCpuRow,
  info,
  percentile,
  type Row,
  type ServerChild,
  sleep,
  startAppServer,
  targetRow,
} from './lib.js';
import { backendMeter, createEndpoint, createPlainKey, startReceiver } from './webhooks-lib.js';

const NOISY_ORGS = 4;
const NOISY_CONNECTIONS = 8;
const RUN_S = 20;
const TICK_MS = 500;
const TARGET_P99_MS = 1000;

/** Projects through `key` as fast as accepted until `until`, waiting out each 429's Retry-After. */
async function produce(server: ServerChild, orgId: string, key: string, until: number) {
  const pool = new Pool(server.url, { connections: NOISY_CONNECTIONS });
  let accepted = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: NOISY_CONNECTIONS }, async () => {
      while (Date.now() < until) {
        const res = await pool.request({
          method: 'POST',
          path: `/api/v1/organizations/${orgId}/projects`,
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Noise' }),
        });
        await res.body.dump();
        if (res.statusCode === 201) accepted++;
        else if (res.statusCode === 429) {
          refused++;
          const wait = Number(res.headers['retry-after']) * 1000;
          await sleep(Math.min(Number.isFinite(wait) ? wait : 1000, Math.max(0, until - Date.now())));
        } else throw new Error(`noisy POST projects: ${res.statusCode}`);
      }
    }),
  );
  await pool.close();
  return { accepted, refused };
}

export async function noisyNeighbour(ctx: BenchContext, database: DatabaseChoice): Promise<Row[]> {
  const holes = await Promise.all(Array.from({ length: NOISY_ORGS }, () => startReceiver({ blackHole: true })));
  const receiver = await startReceiver();
  const { server, databaseLabel, postgres } = await startAppServer(ctx, 'webhooks-noisy', database, {
    NODE_ENV: 'development',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_WORKER: 'inline',
  });
  const { token, orgId: quietOrg } = await createOrgOwner(server, 'noisy@bench.test', 'bench-quiet');
  const noisy: Array<{ orgId: string; key: string }> = [];
  for (let i = 0; i < NOISY_ORGS; i++) {
    const org = await api<{ id: string }>(
      server.url,
      'POST',
      '/api/v1/organizations',
      { name: `Noisy ${i}`, slug: `bench-noisy-${i}` },
      token,
    );
    if (org.status !== 201) throw new Error(`create organization: ${org.status} ${JSON.stringify(org.body)}`);
    await createEndpoint(server, token, org.body.id, `${holes[i]!.url}/hole`);
    noisy.push({ orgId: org.body.id, key: await createPlainKey(server, token, org.body.id, ['write:projects']) });
  }
  await createEndpoint(server, token, quietOrg, `${receiver.url}/quiet`);
  const quietKey = await createPlainKey(server, token, quietOrg, ['write:projects']);
  await server.startWorker();
  ctx.say(
    `${NOISY_ORGS} Free organizations with a black-hole endpoint each, a fifth with a 204 endpoint; Free API keys (default rate limit); worker running (${databaseLabel})`,
  );

  const meter = foreignCpu([server.pid]);
  const db = backendMeter(postgres);
  const db0 = await db.snapshot();
  const cpu0 = cpuOf([server.pid]);
  const until = Date.now() + RUN_S * 1000;
  const producers = Promise.all(noisy.map((n) => produce(server, n.orgId, n.key, until)));
  const raw: number[] = [];
  const quietPosts: number[] = [];
  const quietPool = new Pool(server.url, { connections: 2 });
  const rawPool = new Pool(receiver.url, { connections: 2 });
  const ticks: Array<Promise<void>> = [];
  for (let next = Date.now(); next < until; next += TICK_MS) {
    await sleep(Math.max(0, next - Date.now()));
    ticks.push(
      (async () => {
        const t0 = performance.now();
        const res = await quietPool.request({
          method: 'POST',
          path: `/api/v1/organizations/${quietOrg}/projects`,
          headers: { 'x-api-key': quietKey, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Quiet' }),
        });
        await res.body.dump();
        if (res.statusCode !== 201) throw new Error(`quiet POST projects: ${res.statusCode}`);
        quietPosts.push(performance.now() - t0);
      })(),
      (async () => {
        const t0 = performance.now();
        const res = await rawPool.request({
          method: 'POST',
          path: '/raw',
          headers: { 'content-type': 'application/json' },
          body: '{"type":"raw"}',
        });
        await res.body.dump();
        raw.push(performance.now() - t0);
      })(),
    );
  }
  await Promise.all(ticks);
  const made = await producers;
  const quietEvents = quietPosts.length;
  await receiver.waitFor(quietEvents, 30_000).catch((err: Error) => ctx.say(err.message));
  const serverCpuS = cpuOf([server.pid]) - cpu0;
  const dbCpuS = await db.since(db0);
  const foreign = meter.stop();
  await quietPool.close();
  await rawPool.close();

  const lat = [...receiver.deliveries.values()].map((d) => d.at - d.committedAt);
  const p50 = percentile(lat, 50);
  const p99 = percentile(lat, 99);
  const rawP99 = percentile(raw, 99);
  const noisyAccepted = made.reduce((n, m) => n + m.accepted, 0);
  const noisyRefused = made.reduce((n, m) => n + m.refused, 0);
  const held = holes.map((h) => h.requests());
  const started = receiver.deliveries.size + held.reduce((a, b) => a + b, 0);
  const events = noisyAccepted + quietEvents;
  ctx.say(
    `noisy: ${fmt(noisyAccepted)} events accepted (${fmt(noisyRefused)} requests refused with 429); black holes hold ${held.join(' + ')} requests`,
  );
  ctx.say(
    `quiet: ${fmt(quietEvents)} events, ${fmt(lat.length)} delivered; commit → receive p50 ${fmtMs(p50)}, p99 ${fmtMs(p99)}, max ${fmtMs(Math.max(...lat))}; raw POST p99 ${fmtMs(rawP99)}`,
  );
  // Black holes first: the attempts they hold fail at once instead of holding the server's stop.
  for (const h of holes) await h.stop();
  await server.stop();
  await receiver.stop();
  return [
    info(
      'noisy organizations',
      `${NOISY_ORGS} × Free: ${fmt(noisyAccepted)} events accepted in ${RUN_S} s (${fmt(noisyRefused)} × 429), ${held.join(' + ')} attempts held by the black holes`,
    ),
    info(
      'raw undici POST to the fifth organization’s receiver',
      `p50 ${fmtMs(percentile(raw, 50))}, p99 ${fmtMs(rawP99)}`,
    ),
    targetRow(
      'fifth organization: commit → receive p99',
      p99,
      `${fmtMs(p99)} (p50 ${fmtMs(p50)}, ${fmt(lat.length)} of ${fmt(quietEvents)}; ${fmt(p99 / Math.max(rawP99, 1), 1)} × raw POST p99)`,
      {
        below: TARGET_P99_MS + 1,
        text: `≤ ${TARGET_P99_MS} ms`,
      },
    ),
    info('its POST …/projects', `p50 ${fmtMs(percentile(quietPosts, 50))}, p99 ${fmtMs(percentile(quietPosts, 99))}`),
    info(
      `CPU per event made (its request, and its delivery when one was started; ${databaseLabel})`,
      `${fmt((serverCpuS / Math.max(events, 1)) * 1e6)} µs server${postgres ? ` + ${fmt((dbCpuS / Math.max(events, 1)) * 1e6)} µs PostgreSQL` : ''} (${fmt(events)} events, ${fmt(started)} deliveries started)`,
    ),
    foreignCpuRow(foreign),
  ];
}
