// 1. Login throughput vs raw Argon2id, on ONE account.
// Baseline: @node-rs/argon2 verify at the server's parameters (ARGON2_OPTIONS) and the server's
// concurrency (auth.hashConcurrency), in this process, while the server idles.
// Flow: POST /api/v1/auth/login with the right password over HTTP against the real app in a child
// process, all on one account, at 10 and then 50 connections (closed loop: each sends its next login
// when the previous one is answered). One account is the hard case for the lockout: its budget of 5
// checks in flight means that most of these logins wait for a place (modules/auth/sign-in.ts); every
// one of them must still succeed. Any non-2xx answer is counted, printed, and fails the run (exit 1).
// Argon2id is meant to be nearly the whole cost of a login, so logins/s should be close to
// verifies/s: the ratio is what everything else (HTTP, lookup, waiting, session transaction, JWTs) costs.
import { hash, verify } from '@node-rs/argon2';
import { loadConfig } from '../src/config.js';
import { ARGON2_OPTIONS } from '../src/platform/identity/passwords.js';
import {
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
  type Row,
  startAppServer,
  targetRow,
  withCpu,
} from './lib.js';

// Four rounds of 2 s each, baseline and flow alternated, so a change in the machine's load during
// the run weighs on both sides of the ratio (Argon2id is memory-bound: a neighbour on the host moves
// it by ±15 % from one second to the next; more, shorter rounds average that out).
const ROUNDS = 4;
const SLICE_S = 2;
const CONNECTION_LEVELS = [10, 50];
const EMAIL = 'login@bench.test';

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

const codesOf = (r: LoadResult) =>
  Object.entries(r.statusCodes)
    .map(([c, n]) => `${c}×${n}`)
    .join(' ');

export const loginBench: Benchmark = {
  name: 'login',
  title: 'Login throughput on one account (10 and 50 connections) vs raw Argon2id verify',
  async run(ctx) {
    const { server, env, databaseLabel, postgres } = await startAppServer(ctx, 'login', ctx.database);
    const concurrency = loadConfig(env).auth.hashConcurrency;
    await createVerifiedUser(server, EMAIL);
    ctx.say('1 verified account created through the API; every login below is to it, with the right password');

    const encoded = await hash(PASSWORD, ARGON2_OPTIONS);
    const request = loginRequest([EMAIL]);
    ctx.say(
      `baseline: raw argon2id verify in this process (m=${ARGON2_OPTIONS.memoryCost / 1024} MiB, t=${ARGON2_OPTIONS.timeCost}, ` +
        `p=${ARGON2_OPTIONS.parallelism}), concurrency ${concurrency} = the server's AUTH_HASH_CONCURRENCY`,
    );
    ctx.say(
      `flow: POST /api/v1/auth/login, ${CONNECTION_LEVELS.join(' then ')} connections; ${ROUNDS} rounds of ${SLICE_S} s each per level, after a 1 s warm-up`,
    );
    await argon2Verifies(encoded, concurrency, 1);
    const warmUp = await closedLoop({ url: server.url, connections: CONNECTION_LEVELS[0]!, seconds: 1, request });

    const backends = postgres ? await postgresBackendPids(postgres.adminUrl, postgres.name) : [];
    const meter = foreignCpu([server.pid, ...backends]);
    const rows: Row[] = [];
    let failed = warmUp.non2xx + warmUp.errors;
    if (failed > 0) ctx.say(`  FAIL warm-up: ${warmUp.non2xx} non-2xx (${codesOf(warmUp)}), ${warmUp.errors} errors`);
    for (const connections of CONNECTION_LEVELS) {
      let verifies = 0;
      let dbCpuS = 0;
      let verifySeconds = 0;
      let verifyCpuS = 0;
      let loginCpuS = 0;
      let mainThreadS = 0;
      const verifyLatencies: number[] = [];
      const flows: LoadResult[] = [];
      ctx.say(`${connections} connections:`);
      for (let round = 0; round < ROUNDS; round++) {
        const b = await withCpu([process.pid], () => argon2Verifies(encoded, concurrency, SLICE_S));
        verifies += b.result.count;
        verifySeconds += b.result.seconds;
        verifyCpuS += b.cpuS;
        verifyLatencies.push(...b.result.latencies);
        const db0 = cpuOf(backends);
        const main0 = mainThreadCpuSeconds(server.pid);
        const f = await withCpu([server.pid], () =>
          closedLoop({ url: server.url, connections, seconds: SLICE_S, request }),
        );
        dbCpuS += cpuOf(backends) - db0;
        mainThreadS += mainThreadCpuSeconds(server.pid) - main0;
        flows.push(f.result);
        loginCpuS += f.cpuS;
        ctx.say(
          `  round ${round + 1}: ${fmt(b.result.count / b.result.seconds, 1)} verifies/s, ${fmt(f.result.okPerSec, 1)} logins/s, ` +
            `${f.result.non2xx} non-2xx${f.result.non2xx > 0 ? ` (${codesOf(f.result)})` : ''}, ${f.result.errors} errors`,
        );
      }
      const flow = combine(flows);
      const verifyRate = verifies / verifySeconds;
      // CPU per operation does not depend on how busy the machine is (much): it says where a gap comes from.
      const cpuPerVerifyMs = (verifyCpuS / verifies) * 1000;
      const cpuPerLoginMs = (loginCpuS / flow.completed) * 1000;
      const dbPerLoginMs = (dbCpuS / flow.completed) * 1000;
      ctx.say(
        `  argon2id: ${fmt(verifyRate, 1)} verifies/s (one verify: p50 ${fmtMs(percentile(verifyLatencies, 50))}, ${fmtMs(cpuPerVerifyMs)} of CPU)`,
      );
      ctx.say(
        `  login:    ${fmt(flow.okPerSec, 1)} logins/s (p50 ${fmtMs(flow.latency.p50)}, p99 ${fmtMs(flow.latency.p99)} with ${connections} queued at most)`,
      );
      ctx.say(
        `            server CPU per login ${fmtMs(cpuPerLoginMs)}: ${fmtMs(cpuPerLoginMs - cpuPerVerifyMs)} beyond the verify, ` +
          `${fmtMs((mainThreadS / flow.completed) * 1000)} on the main thread (HTTP, queries, tokens)` +
          (postgres ? `; PostgreSQL ${fmtMs(dbPerLoginMs)}` : ''),
      );
      const bad = flow.non2xx + flow.errors + flow.timeouts;
      failed += bad;
      ctx.say(
        bad === 0
          ? `  answers: ${flow.completed} logins, all 2xx`
          : `  FAIL: ${flow.non2xx} of ${flow.completed} logins answered non-2xx (${codesOf(flow)}), ${flow.errors} errors, ${flow.timeouts} timeouts`,
      );
      const ratio = flow.okPerSec / verifyRate;
      rows.push(
        info(`raw argon2id verify, concurrency ${concurrency}`, `${fmt(verifyRate, 1)} /s`),
        info(
          `POST /auth/login (${databaseLabel}, 1 account, ${connections} conn)`,
          `${fmt(flow.okPerSec, 1)} /s, p99 ${fmtMs(flow.latency.p99)}`,
        ),
        {
          metric: `non-2xx answers (${connections} conn)`,
          value:
            bad === 0
              ? `0 of ${flow.completed}`
              : `${flow.non2xx + flow.errors + flow.timeouts} of ${flow.completed} (${codesOf(flow)})`,
          target: '0',
          status: bad === 0 ? 'PASS' : 'ERROR',
        },
        targetRow(`logins/s ÷ verifies/s (${connections} conn)`, ratio, fmt(ratio, 2), {
          atLeast: 0.9,
          text: '≥ 0.90',
        }),
        info(
          `CPU per login / per raw verify (${connections} conn)`,
          `${fmtMs(cpuPerLoginMs)} / ${fmtMs(cpuPerVerifyMs)}${postgres ? ` (+ ${fmtMs(dbPerLoginMs)} in PostgreSQL)` : ''}`,
        ),
      );
    }
    const foreign = meter.stop();
    await server.stop();
    if (failed > 0) ctx.say(`FAIL: ${failed} login(s) of one account with the right password did not answer 2xx`);
    return [...rows, foreignCpuRow(foreign)];
  },
};
