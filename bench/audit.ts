// 5. The audit-log list on an organization with one million entries (PostgreSQL only).
// The entries are bulk-inserted with SQL (generate_series): 30 actors (keys and users), a dozen
// actions, 90 days of history; audit_log_counters is recomputed to match (as the migration's
// backfill does), then VACUUM ANALYZE audit_logs: autovacuum would do as much after a million
// inserts, and without it no scan is index-only until it has. Then GET
// /api/v1/organizations/{orgId}/audit-logs (first page), the same filtered by one actor (about 1/30
// of the entries), by that actor over 30 days starting and ending mid-day (whole days from the
// counters, the two partial days counted in audit_logs) and by one actor and one action (the
// counters' finest rows), each requested by a closed loop of a few connections for a few seconds;
// the target is on the p99 of each.
import { auditListStatement } from '../src/modules/audit/list.service.js';
import {
  assertAllOk,
  type Benchmark,
  closedLoop,
  cpuOf,
  createOrgOwner,
  fmt,
  fmtMs,
  foreignCpu,
  foreignCpuRow,
  info,
  type LoadResult,
  postgresBackendPids,
  sqlOn,
  startAppServer,
  targetRow,
} from './lib.js';

const ENTRIES = 1_000_000;
const ACTORS = 30;
const CONNECTIONS = 4;
const SECONDS = 4;
const WARMUP_S = 1;
const TARGET_P99_MS = 20;

export const auditBench: Benchmark = {
  name: 'audit',
  title: `Audit-log list (first page, by actor, by actor over 30 days, by actor and action) on an organization with ${ENTRIES.toLocaleString('en-US')} entries`,
  async run(ctx) {
    const pgServer = await ctx.postgres();
    if ('error' in pgServer) {
      return [
        { metric: 'audit-log list', value: `skipped: PostgreSQL not reachable (${pgServer.error})`, status: 'SKIP' },
      ];
    }
    const { server, env, postgres } = await startAppServer(ctx, 'audit', { kind: 'pg', adminUrl: pgServer.adminUrl });
    const dbUrl = env.DATABASE_URL!;
    const { token, orgId } = await createOrgOwner(server, 'audit@bench.test', 'bench-audit');
    await sqlOn(dbUrl, `update organizations set plan = 'enterprise' where id = $1`, [orgId]);

    const t0 = performance.now();
    // Ids sort like the app's (time first); actors: key_bench_00..19 (API keys) and usr_bench_20..29.
    await sqlOn(
      dbUrl,
      `insert into audit_logs (organization_id, id, actor_type, actor_id, action, method, path, status_code, ip_address, user_agent, created_at)
       select $1,
              'aud_' || lpad(g::text, 10, '0') || substr(md5(g::text), 1, 12),
              case when g % ${ACTORS} < 20 then 'api_key' else 'user' end,
              case when g % ${ACTORS} < 20 then 'key_bench_' else 'usr_bench_' end || lpad((g % ${ACTORS})::text, 2, '0'),
              (array['GET /api/v1/organizations/:orgId/projects', 'POST /api/v1/organizations/:orgId/projects',
                     'GET /api/v1/organizations/:orgId/projects/:projectId', 'PATCH /api/v1/organizations/:orgId/projects/:projectId',
                     'DELETE /api/v1/organizations/:orgId/projects/:projectId', 'GET /api/v1/organizations/:orgId/members',
                     'POST /api/v1/organizations/:orgId/invitations', 'GET /api/v1/organizations/:orgId/webhooks',
                     'POST /api/v1/organizations/:orgId/webhooks', 'GET /api/v1/organizations/:orgId/audit-logs',
                     'GET /api/v1/organizations/:orgId/billing/subscription', 'PATCH /api/v1/organizations/:orgId'])[1 + (g / 7) % 12],
              (array['GET', 'POST', 'GET', 'PATCH', 'DELETE', 'GET', 'POST', 'GET', 'POST', 'GET', 'GET', 'PATCH'])[1 + (g / 7) % 12],
              '/api/v1/organizations/' || $1 || '/projects',
              case when g % 97 = 0 then 403 when g % 89 = 0 then 429 else 200 end,
              '10.0.' || (g % 256) || '.' || (g % 250 + 1),
              case when g % 3 = 0 then 'curl/8.5.0' else 'tenantry-sdk/1.4.2 node/20.11.0' end,
              now() - interval '90 days' + (g * interval '90 days' / ${ENTRIES})
       from generate_series(1, ${ENTRIES}) as g`,
      [orgId],
    );
    // The counters of the organization, from its entries (the same SQL as the migration's backfill).
    await sqlOn(dbUrl, 'delete from audit_log_counters where organization_id = $1', [orgId]);
    await sqlOn(
      dbUrl,
      `insert into audit_log_counters (organization_id, actor_type, actor_id, action, day, total)
       select a.organization_id, g.actor_type, g.actor_id, g.action, (a.created_at at time zone 'UTC')::date, count(*)
       from audit_logs a
       cross join lateral (values ('', '', ''), (a.actor_type, '', ''), (a.actor_type, a.actor_id, ''), ('', '', a.action),
         (a.actor_type, '', a.action), (a.actor_type, a.actor_id, a.action)) as g(actor_type, actor_id, action)
       where a.organization_id = $1
       group by 1, 2, 3, 4, 5`,
      [orgId],
    );
    const loaded = performance.now();
    await sqlOn(dbUrl, 'vacuum analyze audit_logs');
    await sqlOn(dbUrl, 'analyze audit_log_counters');
    const [{ total } = { total: '0' }] = await sqlOn<{ total: string }>(
      dbUrl,
      `select sum(total) as total from audit_log_counters where organization_id = $1 and actor_type = '' and actor_id = '' and action = ''`,
      [orgId],
    );
    ctx.say(
      `${fmt(Number(total))} entries bulk-inserted, counters set in ${fmt((loaded - t0) / 1000, 1)} s; ` +
        `VACUUM ANALYZE audit_logs (what autovacuum does after so many inserts) in ${fmt((performance.now() - loaded) / 1000, 1)} s`,
    );

    const headers = { authorization: `Bearer ${token}` };
    const base = `/api/v1/organizations/${orgId}/audit-logs`;
    // 30 days, from mid-day to mid-day: 29 whole days from the counters, two partial ones counted.
    const DAY = 86_400_000;
    const from = new Date(Math.floor((Date.now() - 60 * DAY) / DAY) * DAY + 9.5 * 3_600_000).toISOString();
    const to = new Date(Date.parse(from) + 30 * DAY).toISOString();
    const action = 'GET /api/v1/organizations/:orgId/projects';
    const targets = [
      { label: 'first page', path: base, query: {} },
      { label: 'filtered by actorId', path: `${base}?actorId=key_bench_07`, query: { actorId: 'key_bench_07' } },
      {
        label: 'by actorId, 30 days from/to',
        path: `${base}?actorId=key_bench_07&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`,
        query: { actorId: 'key_bench_07', from, to },
      },
      {
        label: 'by actorId and action',
        path: `${base}?actorId=key_bench_07&action=${encodeURIComponent(action)}`,
        query: { actorId: 'key_bench_07', action },
      },
    ];
    ctx.say(`each: ${WARMUP_S} s warm-up, then ${CONNECTIONS} connections in a closed loop for ${SECONDS} s`);
    // The plan of the one statement the list sends (unnamed, so planned for its values): the
    // counters' rows, the partial days counted, the page's index walk and its rows by primary key.
    for (const t of targets) {
      const st = auditListStatement(orgId, { page: 1, pageSize: 20, ...t.query });
      ctx.say(`  plan (${t.label}): ${await explain(dbUrl, st.text, st.values)}`);
    }
    const results: Array<{ r: LoadResult; cpuUs: number; dbUs: number; total: number }> = [];
    const totals: number[] = [];
    for (const t of targets) {
      const check = await fetch(`${server.url}${t.path}`, { headers });
      const body = (await check.json()) as { data: unknown[]; total: number };
      if (check.status !== 200 || body.data.length !== 20)
        throw new Error(`${t.label}: ${check.status}, ${body.data?.length} entries`);
      totals.push(body.total);
      await closedLoop({
        url: server.url,
        connections: CONNECTIONS,
        seconds: WARMUP_S,
        request: () => ({ method: 'GET', path: t.path, headers }),
      });
    }
    // The pool's connections are open now: their backends are measured too.
    const backends = await postgresBackendPids(postgres!.adminUrl, postgres!.name);
    const meter = foreignCpu([server.pid, ...backends]);
    for (const [i, t] of targets.entries()) {
      const s0 = cpuOf([server.pid]);
      const d0 = cpuOf(backends);
      const r = await closedLoop({
        url: server.url,
        connections: CONNECTIONS,
        seconds: SECONDS,
        request: () => ({ method: 'GET', path: t.path, headers }),
      });
      assertAllOk(t.label, r);
      const cpuUs = ((cpuOf([server.pid]) - s0) / r.completed) * 1e6;
      const dbUs = ((cpuOf(backends) - d0) / r.completed) * 1e6;
      results.push({ r, cpuUs, dbUs, total: totals[i]! });
      ctx.say(
        `  ${t.label} (total ${fmt(totals[i]!)}): ${fmt(r.completed)} requests, ${fmt(r.okPerSec)} req/s, p50 ${fmtMs(r.latency.p50)}, p99 ${fmtMs(r.latency.p99)}, CPU ${fmt(cpuUs)} µs/req + ${fmt(dbUs)} µs in PostgreSQL`,
      );
    }
    const foreign = meter.stop();
    await server.stop();
    return [
      ...results.flatMap(({ r, cpuUs, dbUs, total: n }, i) => [
        targetRow(
          `${targets[i]!.label} p99 (${fmt(r.completed)} req, total ${fmt(n)})`,
          r.latency.p99,
          fmtMs(r.latency.p99),
          { below: TARGET_P99_MS, text: `< ${TARGET_P99_MS} ms` },
        ),
        info(
          `${targets[i]!.label} p50 / rate / CPU`,
          `${fmtMs(r.latency.p50)}, ${fmt(r.okPerSec)} req/s, ${fmt(cpuUs)} µs + ${fmt(dbUs)} µs in PostgreSQL per req`,
        ),
      ]),
      foreignCpuRow(foreign),
    ];
  },
};

/** The scans and the execution time of a statement's plan. */
async function explain(url: string, text: string, values: unknown[]): Promise<string> {
  const rows = await sqlOn<{ 'QUERY PLAN': string }>(url, `explain (analyze, buffers off) ${text}`, values);
  return rows
    .map((r) =>
      r['QUERY PLAN']
        .trim()
        .replace(/^->\s*/, '')
        .replace(/\s*\(cost=[^)]*\)/, ''),
    )
    .filter((l) => /Scan|Sort |Execution Time/.test(l))
    .map((l) => l.replace(/\(actual time=[\d.]+\.\.([\d.]+) rows=(\d+) loops=(\d+)\)/, '($1 ms, $2 rows, $3 loops)'))
    .join(' | ');
}
