// 5. The audit-log list on an organization with one million entries (PostgreSQL only).
// The entries are bulk-inserted with SQL (generate_series): 30 actors (keys and users), a dozen
// actions, 90 days of history; audit_log_counts.total is set to match and the table analyzed.
// Then GET /api/v1/organizations/{orgId}/audit-logs (first page) and the same filtered by one actor
// (about 1/30 of the entries) are each requested by a closed loop of a few connections for a few
// seconds (a few thousand requests); the target is on the p99 of both.
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
  title: `Audit-log list (first page, by actor) on an organization with ${ENTRIES.toLocaleString('en-US')} entries`,
  async run(ctx) {
    const pgServer = await ctx.postgres();
    if ('error' in pgServer) {
      return [{ metric: 'audit-log list', value: `skipped: PostgreSQL not reachable (${pgServer.error})`, status: 'SKIP' }];
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
    await sqlOn(
      dbUrl,
      `insert into audit_log_counts (organization_id, total) values ($1, (select count(*) from audit_logs where organization_id = $1))
       on conflict (organization_id) do update set total = excluded.total`,
      [orgId],
    );
    await sqlOn(dbUrl, 'analyze audit_logs');
    const [{ total } = { total: '0' }] = await sqlOn<{ total: string }>(dbUrl, 'select total from audit_log_counts where organization_id = $1', [orgId]);
    ctx.say(`${fmt(Number(total))} entries bulk-inserted and analyzed in ${fmt((performance.now() - t0) / 1000, 1)} s`);

    const headers = { authorization: `Bearer ${token}` };
    const base = `/api/v1/organizations/${orgId}/audit-logs`;
    const targets = [
      { label: 'first page', path: base },
      { label: 'filtered by actorId', path: `${base}?actorId=key_bench_07` },
    ];
    ctx.say(`each: ${WARMUP_S} s warm-up, then ${CONNECTIONS} connections in a closed loop for ${SECONDS} s`);
    // The plans PostgreSQL picks for the list's queries (what the app sends, as drizzle builds it).
    for (const [label, q, params] of [
      ['first page', 'select * from audit_logs where organization_id = $1 order by created_at desc, id desc limit 20 offset 0', [orgId]],
      ['by actor', 'select * from audit_logs where organization_id = $1 and actor_id = $2 order by created_at desc, id desc limit 20 offset 0', [orgId, 'key_bench_07']],
      // What the index of the first page is built for: created_at DESC NULLS LAST (drizzle's .desc()),
      // which ORDER BY created_at DESC (NULLS FIRST by default) does not match.
      ['first page, nulls last', 'select * from audit_logs where organization_id = $1 order by created_at desc nulls last, id desc nulls last limit 20 offset 0', [orgId]],
      ['by actor, count', 'select count(*) from audit_logs where organization_id = $1 and actor_id = $2', [orgId, 'key_bench_07']],
    ] as const) {
      const plan = await sqlOn<{ 'QUERY PLAN': string }>(dbUrl, `explain (analyze, buffers off) ${q}`, [...params]);
      const lines = plan.map((r) => r['QUERY PLAN'].trim().replace(/^->\s*/, '').replace(/\s*\(cost=[^)]*\)/, ''));
      ctx.say(`  plan (${label}): ${lines.filter((l) => /Scan|Sort |Execution Time/.test(l)).join(' | ')}`);
    }
    const results: Array<{ r: LoadResult; cpuUs: number; dbUs: number; total: number }> = [];
    const totals: number[] = [];
    for (const t of targets) {
      const check = await fetch(`${server.url}${t.path}`, { headers });
      const body = (await check.json()) as { data: unknown[]; total: number };
      if (check.status !== 200 || body.data.length !== 20) throw new Error(`${t.label}: ${check.status}, ${body.data?.length} entries`);
      totals.push(body.total);
      await closedLoop({ url: server.url, connections: CONNECTIONS, seconds: WARMUP_S, request: () => ({ method: 'GET', path: t.path, headers }) });
    }
    // The pool's connections are open now: their backends are measured too.
    const backends = await postgresBackendPids(postgres!.adminUrl, postgres!.name);
    const meter = foreignCpu([server.pid, ...backends]);
    for (const [i, t] of targets.entries()) {
      const s0 = cpuOf([server.pid]);
      const d0 = cpuOf(backends);
      const r = await closedLoop({ url: server.url, connections: CONNECTIONS, seconds: SECONDS, request: () => ({ method: 'GET', path: t.path, headers }) });
      assertAllOk(t.label, r);
      const cpuUs = ((cpuOf([server.pid]) - s0) / r.completed) * 1e6;
      const dbUs = ((cpuOf(backends) - d0) / r.completed) * 1e6;
      results.push({ r, cpuUs, dbUs, total: totals[i]! });
      ctx.say(`  ${t.label} (total ${fmt(totals[i]!)}): ${fmt(r.completed)} requests, ${fmt(r.okPerSec)} req/s, p50 ${fmtMs(r.latency.p50)}, p99 ${fmtMs(r.latency.p99)}, CPU ${fmt(cpuUs)} µs/req + ${fmt(dbUs)} µs in PostgreSQL`);
    }
    const foreign = meter.stop();
    await server.stop();
    return [
      ...results.flatMap(({ r, cpuUs, dbUs, total: n }, i) => [
        targetRow(`${targets[i]!.label} p99 (${fmt(r.completed)} req, total ${fmt(n)})`, r.latency.p99, fmtMs(r.latency.p99), { below: TARGET_P99_MS, text: `< ${TARGET_P99_MS} ms` }),
        info(`${targets[i]!.label} p50 / rate / CPU`, `${fmtMs(r.latency.p50)}, ${fmt(r.okPerSec)} req/s, ${fmt(cpuUs)} µs + ${fmt(dbUs)} µs in PostgreSQL per req`),
      ]),
      foreignCpuRow(foreign),
    ];
  },
};
