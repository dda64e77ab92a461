// One hot endpoint, events made while the worker runs inline (part `hot` of `npm run bench -- webhooks`).
// One organization (Enterprise, so its monthly request quota does not end the run), one endpoint on
// a node:http receiver answering 204, subscribed to project.created. A machine client (API key,
// write:projects) creates projects:
//   flood   15 s as fast as the server accepts them, 50 connections (closed loop);
//   paced   15 s at 500/s (autocannon overallRate, 50 connections).
// The worker runs in the server process from the start, as src/main.ts runs it inline.
// Measured: events accepted/s and deliveries received/s over the 30 s, commit → receive in the
// paced phase, the deliveries still owed (accepted − received) when the paced phase ends, and CPU
// of the server and of PostgreSQL per event (the API request that made it and its delivery
// together). Then every delivery is awaited: none missing, none twice.
// Baseline: raw undici POSTs of a body of the same size to the same receiver, 16 connections.
import {
  assertAllOk,
  closedLoop,
  type BenchContext,
  type DatabaseChoice,
  createApiKey,
  createOrgOwner,
  cpuOf,
  fmt,
  fmtMs,
  foreignCpu,
  foreignCpuRow,
  info,
  load,
  percentile,
  type Row,
  sqlOn,
  startAppServer,
  targetRow,
} from './lib.js';
import { backendMeter, createEndpoint, dbUrl, makeEnterprise, startReceiver } from './webhooks-lib.js';

const FLOOD_S = 15;
const PACED_S = 15;
const PACED_RATE = 500;
const CONNECTIONS = 50;
const RAW_CONNECTIONS = 16;
const TARGET_KEEP_UP = 0.9;
const TARGET_P99_MS = 250;

export async function hotEndpoint(ctx: BenchContext, database: DatabaseChoice): Promise<Row[]> {
  const receiver = await startReceiver();
  const { server, databaseLabel, postgres } = await startAppServer(ctx, 'webhooks-hot', database, {
    NODE_ENV: 'development',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_WORKER: 'inline',
  });
  const { token, orgId } = await createOrgOwner(server, 'hot@bench.test', 'bench-hot');
  await makeEnterprise(server.url, token, orgId);
  await createEndpoint(server, token, orgId, `${receiver.url}/hot`);
  const key = await createApiKey(server, token, orgId, ['write:projects']);
  await server.startWorker();
  ctx.say(
    `one endpoint (${receiver.url}/hot), Enterprise organization, API key; worker running in the server (${databaseLabel})`,
  );

  const path = `/api/v1/organizations/${orgId}/projects`;
  const headers = { 'x-api-key': key.plainKey, 'content-type': 'application/json' };
  const sampleBody = JSON.stringify({
    id: 'evt_00000000000000000000000000',
    type: 'project.created',
    timestamp: new Date().toISOString(),
    data: { projectId: 'prj_00000000000000000000000000', organizationId: orgId, name: 'Hot 12345' },
  });
  const raw = await closedLoop({
    url: receiver.url,
    connections: RAW_CONNECTIONS,
    seconds: 3,
    request: () => ({
      method: 'POST',
      path: '/raw',
      headers: { 'content-type': 'application/json' },
      body: sampleBody,
    }),
  });
  assertAllOk('raw undici POST', raw);
  ctx.say(`raw undici POST → receiver: ${fmt(raw.okPerSec)} req/s, p99 ${fmtMs(raw.latency.p99)}`);

  const meter = foreignCpu([server.pid]);
  const db = backendMeter(postgres);
  const db0 = await db.snapshot();
  const cpu0 = cpuOf([server.pid]);
  const start = Date.now();
  const flood = await closedLoop({
    url: server.url,
    connections: CONNECTIONS,
    seconds: FLOOD_S,
    request: (n) => ({ method: 'POST', path, headers, body: JSON.stringify({ name: `Hot ${n}` }) }),
  });
  assertAllOk('POST projects (flood)', flood);
  const floodEnd = Date.now();
  const floodEvents = flood.completed;
  const atFloodEnd = receiver.deliveries.size;
  ctx.say(
    `flood: ${fmt(flood.okPerSec)} events/s accepted for ${fmt(flood.durationS, 1)} s (POST p99 ${fmtMs(flood.latency.p99)}); ${fmt(atFloodEnd)} of ${fmt(floodEvents)} delivered by its end`,
  );

  const pacedStart = Date.now();
  const paced = await load({
    url: `${server.url}${path}`,
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Paced' }),
    connections: CONNECTIONS,
    overallRate: PACED_RATE,
    duration: PACED_S,
  });
  assertAllOk('POST projects (paced)', paced);
  const end = Date.now();
  const received = [...receiver.deliveries.values()].filter((d) => d.at <= end).length;
  // autocannon stops counting the requests in flight when its time is up, though the server still
  // makes their events: on PostgreSQL the events are counted where they are (one delivery each), and
  // what is owed is what is still pending (queued, or in flight and not yet recorded).
  const inDb = postgres
    ? (
        await sqlOn<{ n: number; pending: number }>(
          dbUrl(postgres),
          `select count(*)::int as n, (count(*) filter (where status = 'pending'))::int as pending from webhook_deliveries`,
        )
      )[0]!
    : null;
  const accepted = inDb ? inDb.n : floodEvents + paced.completed;
  const owed = inDb ? inDb.pending : accepted - received;
  const serverCpuS = cpuOf([server.pid]) - cpu0;
  const dbCpuS = await db.since(db0);
  const foreign = meter.stop();

  const spanS = (end - start) / 1000;
  const eventsPerS = accepted / spanS;
  const deliveriesPerS = received / spanS;
  const keepUp = deliveriesPerS / eventsPerS;
  const lat = [...receiver.deliveries.values()]
    .filter((d) => d.committedAt >= pacedStart && d.committedAt <= end)
    .map((d) => d.at - d.committedAt);
  const p50 = percentile(lat, 50);
  const p99 = percentile(lat, 99);
  const floodLat = [...receiver.deliveries.values()]
    .filter((d) => d.committedAt < floodEnd)
    .map((d) => d.at - d.committedAt);
  ctx.say(
    `paced: ${fmt(paced.okPerSec)} events/s for ${paced.durationS} s (POST p99 ${fmtMs(paced.latency.p99)}); commit → receive p50 ${fmtMs(p50)}, p99 ${fmtMs(p99)}, max ${fmtMs(Math.max(...lat))}`,
  );
  ctx.say(
    `over ${fmt(spanS, 1)} s: ${fmt(eventsPerS)} events/s accepted, ${fmt(deliveriesPerS)} deliveries/s; owed at the end ${fmt(owed)}`,
  );

  await receiver.waitFor(accepted, 120_000);
  const usPerEvent = (serverCpuS / accepted) * 1e6;
  const dbUsPerEvent = (dbCpuS / accepted) * 1e6;
  await server.stop();
  await receiver.stop();
  return [
    info(
      'raw undici POST → node:http 204',
      `${fmt(raw.okPerSec)} req/s (${RAW_CONNECTIONS} connections), p99 ${fmtMs(raw.latency.p99)}`,
    ),
    info(
      'events accepted (flood, then paced)',
      `${fmt(flood.okPerSec)}/s for ${FLOOD_S} s, then ${fmt(paced.okPerSec)}/s of ${PACED_RATE}/s asked: ${fmt(accepted)} in ${fmt(spanS, 1)} s`,
    ),
    targetRow(
      'deliveries/s ÷ events accepted/s over the 30 s',
      keepUp,
      `${fmt(keepUp, 3)} (${fmt(deliveriesPerS)}/s; ${fmt(deliveriesPerS / raw.okPerSec, 3)} of raw POSTs/s)`,
      {
        atLeast: TARGET_KEEP_UP,
        text: `≥ ${TARGET_KEEP_UP}`,
      },
    ),
    info(
      'commit → receive during the flood',
      `p50 ${fmtMs(percentile(floodLat, 50))}, p99 ${fmtMs(percentile(floodLat, 99))}`,
    ),
    targetRow(
      'commit → receive p99, paced phase',
      p99,
      `${fmtMs(p99)} (p50 ${fmtMs(p50)}; ${fmt(p99 / Math.max(raw.latency.p99, 1), 1)} × raw POST p99)`,
      {
        below: TARGET_P99_MS + 1,
        text: `≤ ${TARGET_P99_MS} ms`,
      },
    ),
    targetRow(
      'owed at the end of the paced phase (pending deliveries)',
      owed,
      `${fmt(owed)} (${fmt(owed / paced.okPerSec, 2)} s of events)`,
      {
        below: paced.okPerSec + 1,
        text: '≤ 1 s of events',
      },
    ),
    info(
      `CPU per event (its request and its delivery, ${databaseLabel})`,
      `${fmt(usPerEvent)} µs server${postgres ? ` + ${fmt(dbUsPerEvent)} µs PostgreSQL` : ''}`,
    ),
    info('deliveries received twice', fmt(receiver.duplicates())),
    foreignCpuRow(foreign),
  ];
}
