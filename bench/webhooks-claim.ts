// The claim statement behind one endpoint at its cap (part `claim` of `npm run bench -- webhooks`,
// PostgreSQL only). A fresh database (migrated by a server started and stopped for it) gets one
// organization with an endpoint whose due backlog grows to 1,000, 10,000 and 100,000 rows (bulk
// INSERT, then VACUUM ANALYZE as autovacuum would), plus a few due rows of other organizations. At
// each size the worker's claim (src/modules/webhooks/worker/claim.ts), prepared with its generic
// plan as the worker runs it, is run under EXPLAIN ANALYZE in a transaction rolled back:
//   at cap    the endpoint and its organization have every slot they may hold: the claim must take
//             the other organizations' rows and cost the same whatever the backlog;
//   idle      the same, and the other organizations at their cap too: the claim takes nothing (the
//             case that read the whole backlog for nothing before);
//   room      nothing in flight: the claim takes 32 (the other organizations' and the front of the backlog).
// Reported: the median execution time of 5 runs and the buffers read, per size.
import pg from 'pg';
import { CLAIM } from '../src/modules/webhooks/worker/claim.js';
import {
  type BenchContext,
  createOrgOwner,
  type DatabaseChoice,
  fmt,
  info,
  type Row,
  startAppServer,
  targetRow,
} from './lib.js';
import { createEndpoint, dbUrl } from './webhooks-lib.js';

const SIZES = [1_000, 10_000, 100_000];
const RUNS = 5;
const TARGET_MS = 1;

interface Explained {
  ms: number;
  buffers: number;
  rows: number;
}

export async function claimCost(ctx: BenchContext, database: DatabaseChoice): Promise<Row[]> {
  if (database.kind !== 'pg') return [{ metric: 'claim cost', value: 'PostgreSQL only', status: 'SKIP' }];
  const { server, postgres } = await startAppServer(ctx, 'webhooks-claim', database, {
    NODE_ENV: 'development',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_WORKER: 'off',
  });
  const { token, orgId } = await createOrgOwner(server, 'claim@bench.test', 'bench-claim');
  const endpointId = await createEndpoint(server, token, orgId, 'http://127.0.0.1:9/backlog');
  const others: string[] = [];
  for (let i = 0; i < 3; i++) {
    const o = await createOrgOwner(server, `claim-${i}@bench.test`, `bench-claim-${i}`);
    others.push(o.orgId);
  }
  await server.stop();

  const c = new pg.Client({ connectionString: dbUrl(postgres!) });
  await c.connect();
  const rows: Row[] = [];
  const figures: Array<{ size: number; cap: Explained; idle: Explained; room: Explained }> = [];
  try {
    // A few due rows of other organizations, behind the backlog in due order (each delivery's event first).
    await c.query(
      `insert into events (organization_id, id, type, data, created_at)
       select o, 'evt_other_' || o || '_' || i, 'project.created', '{}'::jsonb, now() from unnest($1::text[]) o, generate_series(1, 5) i`,
      [others],
    );
    await c.query(
      `insert into webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, next_retry_at, created_at, updated_at)
       select o, 'dlv_other_' || o || '_' || i, 'wh_other_' || o, 'evt_other_' || o || '_' || i, 'project.created', 'pending', now(), now(), now()
       from unnest($1::text[]) o, generate_series(1, 5) i`,
      [others],
    );
    await c.query('set plan_cache_mode = force_generic_plan');
    await c.query(`prepare claim(timestamptz, timestamptz, text, int, text, int, text, int, text) as ${CLAIM}`);
    let have = 0;
    for (const size of SIZES) {
      // Due before the other organizations' rows: the head of the queue in due order.
      await c.query(
        `insert into events (organization_id, id, type, data, created_at)
         select $1, 'evt_backlog_' || i, 'project.created', '{}'::jsonb, '2026-01-01T00:00:00.000Z'::timestamptz from generate_series($2::int + 1, $3::int) i`,
        [orgId, have, size],
      );
      await c.query(
        `insert into webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, next_retry_at, created_at, updated_at)
         select $1, 'dlv_backlog_' || lpad(i::text, 7, '0'), $2, 'evt_backlog_' || i, 'project.created', 'pending',
           now() - interval '1 hour' + i * interval '1 ms', now(), now()
         from generate_series($3::int + 1, $4::int) i`,
        [orgId, endpointId, have, size],
      );
      have = size;
      await c.query('vacuum analyze webhook_deliveries');
      await c.query('vacuum analyze events');
      const atCap = { [endpointId]: 32 };
      const orgAtCap = { [orgId]: 32 };
      const cap = await explain(c, 224, atCap, orgAtCap);
      const idle = await explain(c, 96, atCap, { ...orgAtCap, ...Object.fromEntries(others.map((o) => [o, 32])) });
      const room = await explain(c, 32, {}, {});
      figures.push({ size, cap, idle, room });
      ctx.say(
        `backlog ${fmt(size)}: at cap ${fmt(cap.ms, 3)} ms (${fmt(cap.buffers)} buffers, ${cap.rows} rows of other organizations taken); all at cap ${fmt(idle.ms, 3)} ms (${fmt(idle.buffers)} buffers, ${idle.rows} rows); with room ${fmt(room.ms, 3)} ms (${fmt(room.buffers)} buffers, ${room.rows} rows)`,
      );
    }
  } finally {
    await c.end();
  }
  const first = figures[0]!;
  const last = figures[figures.length - 1]!;
  for (const f of figures) {
    rows.push(
      info(
        `claim, backlog of ${fmt(f.size)}`,
        `at cap ${fmt(f.cap.ms, 3)} ms / ${fmt(f.cap.buffers)} buffers; all at cap ${fmt(f.idle.ms, 3)} ms / ${fmt(f.idle.buffers)}; with room ${fmt(f.room.ms, 3)} ms / ${fmt(f.room.buffers)}`,
      ),
    );
  }
  rows.push(
    targetRow(
      `claim at cap, backlog of ${fmt(last.size)}`,
      last.cap.ms,
      `${fmt(last.cap.ms, 3)} ms (${fmt(last.cap.ms / first.cap.ms, 2)} × at ${fmt(first.size)})`,
      { below: TARGET_MS, text: `< ${TARGET_MS} ms, flat` },
    ),
  );
  rows.push(
    targetRow(
      `claim taking nothing, backlog of ${fmt(last.size)}`,
      last.idle.ms,
      `${fmt(last.idle.ms, 3)} ms (${fmt(last.idle.ms / first.idle.ms, 2)} × at ${fmt(first.size)})`,
      { below: TARGET_MS, text: `< ${TARGET_MS} ms, flat` },
    ),
  );
  return rows;
}

/** EXPLAIN ANALYZE of the prepared claim, RUNS times, each rolled back: the median time, its buffers and rows. */
async function explain(
  c: pg.Client,
  room: number,
  busy: Record<string, number>,
  busyOrgs: Record<string, number>,
): Promise<Explained> {
  const runs: Explained[] = [];
  for (let i = 0; i < RUNS; i++) {
    await c.query('begin');
    try {
      const { rows } = await c.query<{
        'QUERY PLAN': Array<{
          Plan: { 'Actual Rows': number; 'Shared Hit Blocks': number; 'Shared Read Blocks': number };
          'Execution Time': number;
        }>;
      }>(
        // EXPLAIN takes no bind parameters: the values are written into the statement.
        `explain (analyze, buffers, format json) execute claim(now(), now() + interval '60 s', 'bench', ${Math.floor(room)}, ${c.escapeLiteral(JSON.stringify(busy))}, 64, ${c.escapeLiteral(JSON.stringify(busyOrgs))}, 32, '')`,
      );
      const plan = rows[0]!['QUERY PLAN'][0]!;
      runs.push({
        ms: plan['Execution Time'],
        buffers: plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'],
        rows: plan.Plan['Actual Rows'],
      });
    } finally {
      await c.query('rollback');
    }
  }
  runs.sort((a, b) => a.ms - b.ms);
  return runs[Math.floor(runs.length / 2)]!;
}
