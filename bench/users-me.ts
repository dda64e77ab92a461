// 2. GET /api/v1/users/me with a Bearer token vs a bare Fastify 5 route.
// Both servers run in child processes started the same way (bench/server.ts) and autocannon runs
// here, in the parent: each server then has one process and its own event loop, exactly like the
// other, and shares the 2 cores with the same load generator. Running the baseline in this process
// instead would put it on the load generator's event loop and flatter neither side fairly.
// GET /health of the app (no auth, no database, but the app's hooks) is measured too: it splits the
// gap between the bare route and /users/me into "framework + app hooks" and "session check + user select".
import {
  assertAllOk,
  type Benchmark,
  combine,
  cpuOf,
  createVerifiedUser,
  fmt,
  fmtMs,
  foreignCpu,
  foreignCpuRow,
  info,
  load,
  type LoadResult,
  login,
  postgresBackendPids,
  startAppServer,
  startServer,
  targetRow,
} from './lib.js';

// Each target gets a 1 s warm-up, then rounds of bare → /health → /users/me, 2 s each: the three
// are alternated so drifting load on the shared machine weighs on all of them. (autocannon stops
// on its 1 s sampling tick: keep durations whole seconds.)
const ROUNDS = 3;
const SLICE_S = 2;
const WARMUP_S = 1;
const CONNECTIONS = 10;

export const usersMeBench: Benchmark = {
  name: 'me',
  title: 'GET /users/me (Bearer, session checked) vs bare Fastify route',
  async run(ctx) {
    const { server, databaseLabel, postgres } = await startAppServer(ctx, 'me', ctx.database);
    const bare = await startServer({ name: 'me-bare', mode: 'bare', workDir: ctx.workDir });
    ctx.say(`bare Fastify ready (pid ${bare.pid}, ${bare.url})`);

    await createVerifiedUser(server, 'me@bench.test');
    const token = await login(server, 'me@bench.test');
    ctx.say('account created and signed in through the API');

    const targets: Array<{ label: string; url: string; headers: Record<string, string>; pid: number; db?: boolean }> = [
      { label: 'bare Fastify GET /hello', url: `${bare.url}/hello`, headers: {}, pid: bare.pid },
      { label: 'app GET /health', url: `${server.url}/health`, headers: {}, pid: server.pid },
      {
        label: 'app GET /api/v1/users/me',
        url: `${server.url}/api/v1/users/me`,
        headers: { authorization: `Bearer ${token}` },
        pid: server.pid,
        db: true,
      },
    ];
    ctx.say(`${CONNECTIONS} connections; ${WARMUP_S} s warm-up each, then ${ROUNDS} rounds of ${SLICE_S} s each`);
    for (const t of targets)
      assertAllOk(
        `${t.label} (warm-up)`,
        await load({ url: t.url, connections: CONNECTIONS, duration: WARMUP_S, headers: t.headers }),
      );
    // On PostgreSQL, the backends serving the app's pool (opened by the warm-up) are measured too.
    const backends = postgres ? await postgresBackendPids(postgres.adminUrl, postgres.name) : [];
    const meter = foreignCpu([server.pid, bare.pid, ...backends]);
    const rounds: LoadResult[][] = targets.map(() => []);
    const cpuS = targets.map(() => 0);
    let dbCpuS = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, t] of targets.entries()) {
        const server0 = cpuOf([t.pid]);
        const db0 = cpuOf(backends);
        rounds[i]!.push(await load({ url: t.url, connections: CONNECTIONS, duration: SLICE_S, headers: t.headers }));
        cpuS[i]! += cpuOf([t.pid]) - server0;
        if (t.db) dbCpuS += cpuOf(backends) - db0;
      }
      ctx.say(
        `  round ${round + 1}: ${rounds.map((r, i) => `${targets[i]!.label.split(' ').at(-1)} ${fmt(r.at(-1)!.okPerSec)}`).join(', ')} req/s`,
      );
    }
    const foreign = meter.stop();
    // Server CPU per request: unlike req/s it hardly depends on the machine's load, so it says what
    // each layer costs (bare → app hooks → session check and user select).
    const cpuUs = rounds.map((r, i) => (cpuS[i]! / r.reduce((a, x) => a + x.completed, 0)) * 1e6);
    const dbCpuUs = postgres ? (dbCpuS / rounds[2]!.reduce((a, x) => a + x.completed, 0)) * 1e6 : NaN;
    if (postgres) ctx.say(`  PostgreSQL backends (${backends.length}): ${fmt(dbCpuUs)} µs CPU per /users/me`);
    const [baseline, health, me] = rounds.map((r, i) => {
      const c = combine(r);
      assertAllOk(targets[i]!.label, c);
      ctx.say(
        `  ${targets[i]!.label}: ${fmt(c.okPerSec)} req/s, p50 ${fmtMs(c.latency.p50)}, p99 ${fmtMs(c.latency.p99)}, server CPU ${fmt(cpuUs[i]!)} µs/req`,
      );
      return c;
    }) as [LoadResult, LoadResult, LoadResult];

    await bare.stop();
    await server.stop();
    const ratio = me.okPerSec / baseline.okPerSec;
    return [
      info(
        'bare Fastify GET /hello',
        `${fmt(baseline.okPerSec)} req/s, p99 ${fmtMs(baseline.latency.p99)}, ${fmt(cpuUs[0]!)} µs CPU/req`,
      ),
      info(
        'app GET /health (no auth, no db)',
        `${fmt(health.okPerSec)} req/s, p99 ${fmtMs(health.latency.p99)}, ${fmt(cpuUs[1]!)} µs CPU/req`,
      ),
      info(
        `GET /users/me (${databaseLabel})`,
        `${fmt(me.okPerSec)} req/s, ${fmt(cpuUs[2]!)} µs CPU/req${postgres ? ` + ${fmt(dbCpuUs)} in PostgreSQL` : ''}`,
      ),
      info('GET /users/me p50 / p99', `${fmtMs(me.latency.p50)} / ${fmtMs(me.latency.p99)}`),
      targetRow('/users/me ÷ bare', ratio, fmt(ratio, 3), { atLeast: 0.25, text: '≥ 0.25 (later)' }),
      foreignCpuRow(foreign),
    ];
  },
};
