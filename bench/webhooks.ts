// 6. Webhook delivery, end to end: event committed → receiver 2xx (PostgreSQL when reachable, else PGlite).
// Four parts, in this order (BENCH_WEBHOOKS_PARTS=drain,hot,noisy,claim runs some): the backlog
// drain and steady rate below; one hot endpoint (webhooks-hot.ts); a noisy neighbour
// (webhooks-noisy.ts); the claim statement on a long backlog (webhooks-claim.ts). Each part's rows
// are prefixed with its name.
// Part `drain`:
// The receiver is a minimal node:http server in this process answering 204; it records each
// delivery id once with the time it arrived and the payload's `timestamp` (taken in the transaction
// that recorded the event, so "commit → receive" is slightly overstated by the commit itself).
// The organization is made Enterprise through the API (the built-in test payment provider's
// checkout), so it may have ENDPOINTS endpoints: distinct paths on the one receiver, all subscribed
// to project.created, so each event fans out to ENDPOINTS deliveries.
//   Baseline: raw undici POSTs of a payload of the same size to the same receiver, 16 connections,
//   closed loop.
//   Throughput: the server starts without its worker; events are produced through the API (POST
//   …/projects, one project.created each, fanned out to every endpoint) for a few seconds, then the
//   worker is started (bench/server.ts, as src/main.ts runs it inline) and the backlog (≥ 15k
//   deliveries) timed until the receiver has every delivery: deliveries/s ÷ raw POSTs/s.
//   Latency: every endpoint but one disabled through the API (one delivery per event, as with a
//   single endpoint), then with the worker running, events at a steady 500/s (autocannon
//   overallRate) for 5 s, made by a machine client: POST …/projects with an API key (write:projects),
//   as an integration producing events at that rate would; p99 of receive time − payload timestamp.
import { request } from 'undici';
import {
  api,
  assertAllOk,
  type BenchContext,
  type Benchmark,
  closedLoop,
  cpuOf,
  createApiKey,
  createOrgOwner,
  type DatabaseChoice,
  fmt,
  fmtMs,
  foreignCpu,
  foreignCpuRow,
  info,
  load,
  percentile,
  postgresBackendPids,
  processCpuSeconds,
  type Row,
  sleep,
  startAppServer,
  targetRow,
} from './lib.js';
import { claimCost } from './webhooks-claim.js';
import { hotEndpoint } from './webhooks-hot.js';
import { makeEnterprise, startReceiver } from './webhooks-lib.js';
import { noisyNeighbour } from './webhooks-noisy.js';

const RAW_CONNECTIONS = 16;
const RAW_S = 3;
const BACKLOG_S = 5;
const ENDPOINTS = 10;
const MIN_BACKLOG = 15_000;
const BACKLOG_CONNECTIONS = 16;
const STEADY_RATE = 500;
const STEADY_S = 5;
const TARGET_RATIO = 0.2;
const TARGET_P99_MS = 250;

const PARTS = ['drain', 'hot', 'noisy', 'claim'] as const;
type Part = (typeof PARTS)[number];

export const webhooksBench: Benchmark = {
  name: 'webhooks',
  title:
    'Webhooks: backlog drain and 500 events/s vs raw undici POSTs; one hot endpoint; a noisy neighbour; the claim on a 100k backlog',
  async run(ctx) {
    const pgServer = await ctx.postgres();
    const database: DatabaseChoice =
      'error' in pgServer ? { kind: 'pglite' } : { kind: 'pg', adminUrl: pgServer.adminUrl };
    if ('error' in pgServer) ctx.say(`PostgreSQL not reachable (${pgServer.error}): on PGlite`);
    const asked = (process.env.BENCH_WEBHOOKS_PARTS ?? PARTS.join(',')).split(',').map((p) => p.trim());
    const unknown = asked.filter((p) => !PARTS.includes(p as Part));
    if (unknown.length > 0)
      throw new Error(`BENCH_WEBHOOKS_PARTS: unknown part(s) ${unknown.join(', ')} (of ${PARTS.join(', ')})`);
    const rows: Row[] = [];
    const run = async (part: Part, title: string, fn: () => Promise<Row[]>) => {
      if (!asked.includes(part)) return;
      ctx.say(`-- ${title}`);
      rows.push(...(await fn()).map((r) => ({ ...r, metric: `${part}: ${r.metric}` })));
    };
    await run('drain', 'backlog drain and steady 500 events/s (10 endpoints)', () => drainAndSteady(ctx, database));
    await run('hot', 'one hot endpoint: events through the API as fast as accepted, then at 500/s, worker inline', () =>
      hotEndpoint(ctx, database),
    );
    await run(
      'noisy',
      'a noisy neighbour: four free organizations with black-hole endpoints, a fifth one event every 500 ms',
      () => noisyNeighbour(ctx, database),
    );
    await run(
      'claim',
      'the claim statement with one endpoint at its cap and 1k to 100k due behind it (EXPLAIN ANALYZE)',
      () => claimCost(ctx, database),
    );
    return rows;
  },
};

async function drainAndSteady(ctx: BenchContext, database: DatabaseChoice): Promise<Row[]> {
  const receiver = await startReceiver();
  // The receiver is on 127.0.0.1, which production refuses to deliver to (and refuses to start
  // with WEBHOOK_ALLOW_PRIVATE_URLS=true): this app runs in development mode, which changes nothing else.
  const { server, databaseLabel, postgres } = await startAppServer(ctx, 'webhooks', database, {
    NODE_ENV: 'development',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_WORKER: 'inline',
  });
  const { token, orgId } = await createOrgOwner(server, 'hooks@bench.test', 'bench-hooks');
  await makeEnterprise(server.url, token, orgId);
  const hookIds: string[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    const hook = await api<{ data: { id: string } }>(
      server.url,
      'POST',
      `/api/v1/organizations/${orgId}/webhooks`,
      { url: `${receiver.url}/hook/${i}`, events: ['project.created'] },
      token,
    );
    if (hook.status !== 201) throw new Error(`create webhook endpoint: ${hook.status} ${JSON.stringify(hook.body)}`);
    hookIds.push(hook.body.data.id);
  }
  ctx.say(
    `receiver on ${receiver.url}; account, organization (Enterprise by test checkout) and ${ENDPOINTS} endpoints (project.created, /hook/0…${ENDPOINTS - 1}) created through the API`,
  );

  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const machine = await createApiKey(server, token, orgId, ['write:projects']);
  const projectsPath = `/api/v1/organizations/${orgId}/projects`;
  const backends = postgres ? await postgresBackendPids(postgres.adminUrl, postgres.name) : [];
  const meter = foreignCpu([server.pid, ...backends]);
  const backendCpu = async () =>
    new Map(
      (postgres ? await postgresBackendPids(postgres.adminUrl, postgres.name) : []).map(
        (pid) => [pid, processCpuSeconds(pid)] as const,
      ),
    );

  // Baseline: raw undici POSTs of a body like a delivery's.
  const sampleBody = JSON.stringify({
    type: 'project.created',
    timestamp: new Date().toISOString(),
    data: {
      projectId: 'prj_0000000000000000000000',
      organizationId: orgId,
      name: 'Project 123456',
      description: null,
      createdBy: 'usr_00000000000000000000',
    },
  });
  const rawRequest = () => ({
    method: 'POST' as const,
    path: '/raw',
    headers: { 'content-type': 'application/json' },
    body: sampleBody,
  });
  await closedLoop({ url: receiver.url, connections: RAW_CONNECTIONS, seconds: 1, request: rawRequest });
  const raw = await closedLoop({
    url: receiver.url,
    connections: RAW_CONNECTIONS,
    seconds: RAW_S,
    request: rawRequest,
  });
  assertAllOk('raw undici POST', raw);
  ctx.say(
    `raw undici POST → receiver: ${fmt(raw.okPerSec)} req/s (${RAW_CONNECTIONS} connections, ${RAW_S} s), p99 ${fmtMs(raw.latency.p99)}`,
  );

  // Throughput: a backlog through the API with the worker stopped, then drained.
  let events = 0;
  let producedS = 0;
  while (events * ENDPOINTS < MIN_BACKLOG) {
    const produced = await closedLoop({
      url: server.url,
      connections: BACKLOG_CONNECTIONS,
      seconds: BACKLOG_S,
      request: (n) => ({
        method: 'POST',
        path: projectsPath,
        headers,
        body: JSON.stringify({ name: `Backlog ${events + n}` }),
      }),
    });
    assertAllOk('POST projects (backlog)', produced);
    events += produced.completed;
    producedS += produced.durationS;
  }
  const backlog = events * ENDPOINTS;
  ctx.say(
    `backlog: ${fmt(events)} project.created events through the API in ${fmt(producedS, 1)} s (${fmt(events / producedS)}/s) × ${ENDPOINTS} endpoints = ${fmt(backlog)} deliveries, worker stopped`,
  );
  const cpu0 = cpuOf([server.pid]);
  // The database's backends now (the pool has grown while the backlog was made) and after: one
  // that appears meanwhile (the worker's LISTEN connection…) counts whole.
  const db0 = await backendCpu();
  await server.startWorker();
  // Timed from the worker's first claim (it has connected and listens by now).
  const t0 = Date.now();
  await receiver.waitFor(backlog, 120_000);
  const drainS = ([...receiver.deliveries.values()].reduce((m, d) => Math.max(m, d.at), 0) - t0) / 1000;
  // The last results are written a few milliseconds after their requests: count that CPU too.
  await sleep(300);
  const deliveryCpuUs = ((cpuOf([server.pid]) - cpu0) / backlog) * 1e6;
  const db1 = await backendCpu();
  const deliveryDbUs = ([...db1].reduce((sum, [pid, cpu]) => sum + cpu - (db0.get(pid) ?? 0), 0) / backlog) * 1e6;
  const perSec = backlog / drainS;
  const ratio = perSec / raw.okPerSec;
  ctx.say(
    `  drained in ${fmt(drainS, 2)} s: ${fmt(perSec)} deliveries/s, ${fmt(deliveryCpuUs)} µs server CPU per delivery${postgres ? ` + ${fmt(deliveryDbUs)} µs in PostgreSQL` : ''}`,
  );

  // One delivery per event from here on, as with a single endpoint.
  for (const id of hookIds.slice(1)) {
    const res = await request(`${server.url}/api/v1/organizations/${orgId}/webhooks/${id}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ isActive: false }),
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`disable webhook endpoint: ${res.statusCode}`);
  }

  // Latency at a steady rate, worker running.
  await sleep(500);
  const before = new Set(receiver.deliveries.keys());
  const steadyStart = Date.now();
  const steady = await load({
    url: `${server.url}${projectsPath}`,
    method: 'POST',
    headers: { 'x-api-key': machine.plainKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Steady' }),
    // Enough connections that the asked rate is not capped by one request's latency per connection
    // (autocannon splits overallRate across them).
    connections: 50,
    overallRate: STEADY_RATE,
    duration: STEADY_S,
  });
  assertAllOk('POST projects (steady)', steady);
  const steadyEvents = Math.round(steady.okPerSec * steady.durationS);
  await receiver.waitFor(before.size + steadyEvents, 60_000).catch((err: Error) => ctx.say(`  ${err.message}`));
  const lat = [...receiver.deliveries.entries()]
    .filter(([id, d]) => !before.has(id) && d.committedAt >= steadyStart)
    .map(([, d]) => d.at - d.committedAt);
  const p50 = percentile(lat, 50);
  const p99 = percentile(lat, 99);
  ctx.say(
    `  steady: ${fmt(steady.okPerSec)} events/s for ${steady.durationS} s (POST p50 ${fmtMs(steady.latency.p50)}, p99 ${fmtMs(steady.latency.p99)}); ${fmt(lat.length)} deliveries, commit → receive p50 ${fmtMs(p50)}, p99 ${fmtMs(p99)}, max ${fmtMs(Math.max(...lat))}`,
  );
  const foreign = meter.stop();
  await server.stop();
  await receiver.stop();
  return [
    info('raw undici POST → node:http 204', `${fmt(raw.okPerSec)} req/s (${RAW_CONNECTIONS} connections)`),
    info(
      `deliveries, backlog of ${fmt(backlog)} (${fmt(events)} events × ${ENDPOINTS} endpoints, ${databaseLabel})`,
      `${fmt(perSec)}/s, ${fmt(deliveryCpuUs)} µs CPU/delivery${postgres ? ` + ${fmt(deliveryDbUs)} in PostgreSQL` : ''}`,
    ),
    targetRow('deliveries/s ÷ raw POSTs/s', ratio, fmt(ratio, 3), { atLeast: TARGET_RATIO, text: `≥ ${TARGET_RATIO}` }),
    info(
      'steady event rate achieved',
      `${fmt(steady.okPerSec)}/s of ${STEADY_RATE}/s asked, ${fmt(lat.length)} deliveries`,
    ),
    targetRow('commit → receive p99 at steady rate', p99, `${fmtMs(p99)} (p50 ${fmtMs(p50)})`, {
      below: TARGET_P99_MS,
      text: `< ${TARGET_P99_MS} ms`,
    }),
    foreignCpuRow(foreign),
  ];
}
