// 4. GET /api/v1/organizations/{orgId}/projects with X-API-Key vs a bare Fastify route doing one
// prepared primary-key select, both on the same PostgreSQL database (PostgreSQL only).
// The key route is the whole stack of a key request: key lookup (cached), revocation check, scope,
// per-key rate limit, monthly quota, the projects page with its count, and the audit entry, which is
// committed (group commit, audit/writer.ts) before the response is sent. The bare route
// (bench/server.ts, BENCH_BARE_DATABASE_URL) is Fastify + pg with a named (prepared) statement:
// what one database round trip per request costs on this machine. The projects page itself comes
// from the organization's list cache (projects/list-cache.ts) once read. Both are driven by the same
// autocannon in alternating rounds; CPU per request of the server and of the PostgreSQL backends is
// measured during each one's own slices.
import {
  assertAllOk,
  type Benchmark,
  combine,
  cpuOf,
  createApiKey,
  createOrgOwner,
  createProject,
  fmt,
  fmtMs,
  foreignCpu,
  foreignCpuRow,
  info,
  load,
  type LoadResult,
  postgresBackendPids,
  sqlOn,
  startAppServer,
  startServer,
  targetRow,
} from './lib.js';

const ROUNDS = 3;
const SLICE_S = 2;
const WARMUP_S = 1;
// Throughput (the target) is measured with enough clients to keep both servers busy: the bare route
// is CPU-bound from 10 connections on this machine, while the key route, each of whose requests waits
// for its audit entry's commit, still idles there. The 10-connection ratio is reported too.
const CONNECTIONS = 50;
const FEW_CONNECTIONS = 10;
const FEW_ROUNDS = 2;

export const keysBench: Benchmark = {
  name: 'keys',
  title: 'GET …/projects with X-API-Key (audit entry included) vs bare Fastify + prepared PK select',
  async run(ctx) {
    const pgServer = await ctx.postgres();
    if ('error' in pgServer) {
      return [
        { metric: 'API-key request', value: `skipped: PostgreSQL not reachable (${pgServer.error})`, status: 'SKIP' },
      ];
    }
    const { server, env, postgres } = await startAppServer(ctx, 'keys', { kind: 'pg', adminUrl: pgServer.adminUrl });
    const dbUrl = env.DATABASE_URL!;
    const bare = await startServer({
      name: 'keys-bare',
      mode: 'bare',
      workDir: ctx.workDir,
      env: { BENCH_BARE_DATABASE_URL: dbUrl },
    });
    ctx.say(`bare Fastify + pg ready (pid ${bare.pid}, ${bare.url})`);

    const { token, orgId } = await createOrgOwner(server, 'keys@bench.test', 'bench-keys');
    await sqlOn(dbUrl, `update organizations set plan = 'enterprise' where id = $1`, [orgId]);
    const key = await createApiKey(server, token, orgId, ['read:projects']);
    for (const name of ['Alpha', 'Beta', 'Gamma']) await createProject(server, token, orgId, name);
    ctx.say(
      'account, organization (enterprise), key with read:projects (rateLimit 1,000,000/min) and 3 projects created through the API',
    );

    const targets = [
      {
        label: 'bare Fastify + prepared PK select',
        url: `${bare.url}/row/${orgId}`,
        headers: {} as Record<string, string>,
        pid: bare.pid,
      },
      {
        label: 'GET …/projects (X-API-Key)',
        url: `${server.url}/api/v1/organizations/${orgId}/projects`,
        headers: { 'x-api-key': key.plainKey },
        pid: server.pid,
      },
    ];
    ctx.say(`${CONNECTIONS} connections; ${WARMUP_S} s warm-up each, then ${ROUNDS} rounds of ${SLICE_S} s each`);
    for (const t of targets)
      assertAllOk(
        `${t.label} (warm-up)`,
        await load({ url: t.url, connections: CONNECTIONS, duration: WARMUP_S, headers: t.headers }),
      );
    const [audit0] = await sqlOn<{ n: string }>(
      dbUrl,
      `select count(*) as n from audit_logs where organization_id = $1 and actor_type = 'api_key'`,
      [orgId],
    );

    const backends = await postgresBackendPids(postgres!.adminUrl, postgres!.name);
    // Transactions committed in the database while the key route runs: with group commit, far fewer than requests.
    const xacts = async () =>
      Number(
        (
          await sqlOn<{ n: string }>(
            postgres!.adminUrl,
            'select xact_commit as n from pg_stat_database where datname = $1',
            [postgres!.name],
          )
        )[0]?.n ?? NaN,
      );
    const meter = foreignCpu([server.pid, bare.pid, ...backends]);
    /** Alternating rounds of both targets at `connections`; CPU per request of each during its own slices. */
    async function measure(connections: number, rounds: number) {
      let keyXacts = 0;
      const results: LoadResult[][] = targets.map(() => []);
      const cpuS = targets.map(() => 0);
      const dbCpuS = targets.map(() => 0);
      for (let round = 0; round < rounds; round++) {
        for (const [i, t] of targets.entries()) {
          const s0 = cpuOf([t.pid]);
          const d0 = cpuOf(backends);
          const x0 = i === 1 ? await xacts() : 0;
          results[i]!.push(await load({ url: t.url, connections, duration: SLICE_S, headers: t.headers }));
          // Backends report their counters to the stats system within a second.
          if (i === 1) keyXacts += (await new Promise((r) => setTimeout(r, 1100)).then(xacts)) - x0;
          cpuS[i]! += cpuOf([t.pid]) - s0;
          dbCpuS[i]! += cpuOf(backends) - d0;
        }
        ctx.say(
          `  ${connections} connections, round ${round + 1}: bare ${fmt(results[0]!.at(-1)!.okPerSec)}, key ${fmt(results[1]!.at(-1)!.okPerSec)} req/s`,
        );
      }
      const [b, k] = results.map((r, i) => {
        const c = combine(r);
        assertAllOk(targets[i]!.label, c);
        return c;
      }) as [LoadResult, LoadResult];
      const perReq = (i: number, s: number[]) => (s[i]! / results[i]!.reduce((a, x) => a + x.completed, 0)) * 1e6;
      const cpu = (i: number) => `${fmt(perReq(i, cpuS))} µs CPU/req + ${fmt(perReq(i, dbCpuS))} in PostgreSQL`;
      for (const [i, c] of [b, k].entries()) {
        ctx.say(
          `  ${targets[i]!.label}: ${fmt(c.okPerSec)} req/s, p50 ${fmtMs(c.latency.p50)}, p99 ${fmtMs(c.latency.p99)}, ${cpu(i)}`,
        );
      }
      return { b, k, keyXacts, cpu };
    }
    const main = await measure(CONNECTIONS, ROUNDS);
    const { b, k } = main;
    // The same with few clients: each key request waits for its audit entry's commit, so there the
    // key route is bound by that wait (latency), not by what it costs the server.
    const few = await measure(FEW_CONNECTIONS, FEW_ROUNDS);
    const foreign = meter.stop();
    // Every answered key request has its entry (autocannon may drop a few in flight at the end of a
    // slice, which the server still completes and audits).
    const [audit1] = await sqlOn<{ n: string }>(
      dbUrl,
      `select count(*) as n from audit_logs where organization_id = $1 and actor_type = 'api_key'`,
      [orgId],
    );
    const written = Number(audit1!.n) - Number(audit0!.n);
    const answered = k.completed + few.k.completed;
    const keyXacts = main.keyXacts + few.keyXacts;
    ctx.say(
      `  audit entries written during the rounds: ${fmt(written)} for ${fmt(answered)} answered key requests; ${fmt(keyXacts)} transactions committed (${fmt(keyXacts / answered, 2)} per request, each query outside a transaction counts one)`,
    );
    if (written < answered) throw new Error(`only ${written} audit entries for ${answered} answered key requests`);

    await bare.stop();
    await server.stop();
    const ratio = k.okPerSec / b.okPerSec;
    return [
      info(
        `bare Fastify + prepared PK select (${CONNECTIONS} conn)`,
        `${fmt(b.okPerSec)} req/s, p99 ${fmtMs(b.latency.p99)}, ${main.cpu(0)}`,
      ),
      info(`GET …/projects (X-API-Key, audited, ${CONNECTIONS} conn)`, `${fmt(k.okPerSec)} req/s, ${main.cpu(1)}`),
      info(
        'audit entries / answered key requests',
        `${fmt(written)} / ${fmt(answered)}, ${fmt(keyXacts / answered, 2)} PostgreSQL transactions per request`,
      ),
      targetRow('key route ÷ bare', ratio, fmt(ratio, 3), { atLeast: 0.5, text: '≥ 0.5' }),
      info('key route p50 / p99', `${fmtMs(k.latency.p50)} / ${fmtMs(k.latency.p99)}`),
      info(
        `key route ÷ bare, ${FEW_CONNECTIONS} connections`,
        `${fmt(few.k.okPerSec / few.b.okPerSec, 3)} (${fmt(few.k.okPerSec)} vs ${fmt(few.b.okPerSec)} req/s; key p50 ${fmtMs(few.k.latency.p50)}, p99 ${fmtMs(few.k.latency.p99)}: each request waits for a commit)`,
      ),
      foreignCpuRow(foreign),
    ];
  },
};
