// 1. Login throughput vs raw Argon2id.
// Baseline: @node-rs/argon2 verify at the server's parameters (ARGON2_OPTIONS) and the server's
// concurrency (auth.hashConcurrency), in this process, ~5 s in all, while the server idles.
// Flow: POST /api/v1/auth/login over HTTP against the real app in a child process, 8 connections
// (closed loop: each sends its next login when the previous one is answered), ~5 s in all.
// Argon2id is meant to be nearly the whole cost of a login, so logins/s should be close to
// verifies/s: the ratio is what everything else (HTTP, lookup, session transaction, JWTs) costs.
import { hash, verify } from '@node-rs/argon2';
import { loadConfig } from '../src/config.js';
import { ARGON2_OPTIONS } from '../src/platform/identity/passwords.js';
import {
  assertAllOk,
  type Benchmark,
  closedLoop,
  type ClosedLoopRequest,
  combine,
  cpuOf,
  createVerifiedUser,
  fmt,
  fmtMs,
  foreignCpu,
  foreignCpuRow,
  info,
  mainThreadCpuSeconds,
  type LoadResult,
  PASSWORD,
  percentile,
  postgresBackendPids,
  startAppServer,
  targetRow,
  withCpu,
} from './lib.js';

// Four rounds of 2 s each, baseline and flow alternated, so a change in the machine's load during
// the run weighs on both sides of the ratio (Argon2id is memory-bound: a neighbour on the host moves
// it by ±15 % from one second to the next; more, shorter rounds average that out).
const ROUNDS = 4;
const SLICE_S = 2;
const CONNECTIONS = 8;
const USERS = 4;

/** Verifies of one hash by `concurrency` loops for `seconds`; in-flight ones are awaited. */
export async function argon2Verifies(encoded: string, concurrency: number, seconds: number) {
  const latencies: number[] = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        if (!(await verify(encoded, PASSWORD))) throw new Error('argon2 verify returned false');
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { count: latencies.length, seconds: (performance.now() - start) / 1000, latencies };
}

/** Closed-loop requests that log in as `emails` in turn. */
export const loginRequest =
  (emails: string[]) =>
  (n: number): ClosedLoopRequest => ({
    method: 'POST',
    path: '/api/v1/auth/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: emails[n % emails.length], password: PASSWORD }),
  });

export const loginBench: Benchmark = {
  name: 'login',
  title: 'Login throughput vs raw Argon2id verify',
  async run(ctx) {
    const { server, env, databaseLabel, postgres } = await startAppServer(ctx, 'login', ctx.database);
    const concurrency = loadConfig(env).auth.hashConcurrency;
    const emails = Array.from({ length: USERS }, (_, i) => `login-${i}@bench.test`);
    for (const email of emails) await createVerifiedUser(server, email);
    ctx.say(`${USERS} verified accounts created through the API`);

    const encoded = await hash(PASSWORD, ARGON2_OPTIONS);
    const request = loginRequest(emails);
    ctx.say(
      `baseline: raw argon2id verify in this process (m=${ARGON2_OPTIONS.memoryCost / 1024} MiB, t=${ARGON2_OPTIONS.timeCost}, ` +
        `p=${ARGON2_OPTIONS.parallelism}), concurrency ${concurrency} = the server's AUTH_HASH_CONCURRENCY`,
    );
    ctx.say(`flow: POST /api/v1/auth/login, ${CONNECTIONS} connections; ${ROUNDS} rounds of ${SLICE_S} s each, after a 1 s warm-up of both`);
    await argon2Verifies(encoded, concurrency, 1);
    assertAllOk('login (warm-up)', await closedLoop({ url: server.url, connections: CONNECTIONS, seconds: 1, request }));

    const backends = postgres ? await postgresBackendPids(postgres.adminUrl, postgres.name) : [];
    const meter = foreignCpu([server.pid, ...backends]);
    let verifies = 0;
    let dbCpuS = 0;
    let verifySeconds = 0;
    let verifyCpuS = 0;
    let loginCpuS = 0;
    let mainThreadS = 0;
    const verifyLatencies: number[] = [];
    const flows: LoadResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const b = await withCpu([process.pid], () => argon2Verifies(encoded, concurrency, SLICE_S));
      verifies += b.result.count;
      verifySeconds += b.result.seconds;
      verifyCpuS += b.cpuS;
      verifyLatencies.push(...b.result.latencies);
      const db0 = cpuOf(backends);
      const main0 = mainThreadCpuSeconds(server.pid);
      const f = await withCpu([server.pid], () => closedLoop({ url: server.url, connections: CONNECTIONS, seconds: SLICE_S, request }));
      dbCpuS += cpuOf(backends) - db0;
      mainThreadS += mainThreadCpuSeconds(server.pid) - main0;
      flows.push(f.result);
      loginCpuS += f.cpuS;
      ctx.say(`  round ${round + 1}: ${fmt(b.result.count / b.result.seconds, 1)} verifies/s, ${fmt(f.result.okPerSec, 1)} logins/s`);
    }
    const foreign = meter.stop();
    const flow = combine(flows);
    assertAllOk('login', flow);
    const verifyRate = verifies / verifySeconds;
    // CPU per operation does not depend on how busy the machine is (much): it says where a gap comes from.
    const cpuPerVerifyMs = (verifyCpuS / verifies) * 1000;
    const cpuPerLoginMs = (loginCpuS / flow.completed) * 1000;
    ctx.say(`  argon2id: ${fmt(verifyRate, 1)} verifies/s (one verify: p50 ${fmtMs(percentile(verifyLatencies, 50))}, ${fmtMs(cpuPerVerifyMs)} of CPU)`);
    ctx.say(`  login:    ${fmt(flow.okPerSec, 1)} logins/s (p50 ${fmtMs(flow.latency.p50)}, p99 ${fmtMs(flow.latency.p99)} with ${CONNECTIONS} queued at most)`);
    const dbPerLoginMs = (dbCpuS / flow.completed) * 1000;
    ctx.say(
      `            server CPU per login ${fmtMs(cpuPerLoginMs)}: ${fmtMs(cpuPerLoginMs - cpuPerVerifyMs)} beyond the verify, ` +
        `${fmtMs((mainThreadS / flow.completed) * 1000)} on the main thread (HTTP, queries, tokens)` +
        (postgres ? `; PostgreSQL ${fmtMs(dbPerLoginMs)}` : ''),
    );

    await server.stop();
    const ratio = flow.okPerSec / verifyRate;
    return [
      info(`raw argon2id verify, concurrency ${concurrency}`, `${fmt(verifyRate, 1)} /s`),
      info(`POST /auth/login (${databaseLabel}, ${CONNECTIONS} conn)`, `${fmt(flow.okPerSec, 1)} /s, p99 ${fmtMs(flow.latency.p99)}`),
      targetRow('logins/s ÷ verifies/s', ratio, fmt(ratio, 2), { atLeast: 0.9, text: '≥ 0.90' }),
      info('CPU per login / per raw verify', `${fmtMs(cpuPerLoginMs)} / ${fmtMs(cpuPerVerifyMs)}${postgres ? ` (+ ${fmtMs(dbPerLoginMs)} in PostgreSQL)` : ''}`),
      foreignCpuRow(foreign),
    ];
  },
};
