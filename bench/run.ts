// The benchmark suite: `npm run bench` runs every benchmark, `npm run bench -- <name> [<name>…]`
// runs some. Each one measures a real flow over HTTP against a baseline measured in the same run and
// reports the ratio, because absolute numbers on a shared 2-core machine (load generator included)
// mean little. A missed target is a WARN and never fails the run; an error (a server that does not
// start, a flow answering non-2xx) does: exit code 1.
//
// Environment:
//   BENCH_DATABASE_URL  PostgreSQL server to run on instead of PGlite (a fresh database
//                       tenantry_bench_<random> is created per benchmark and dropped at the end).
//                       The login storm always runs on PostgreSQL: this URL, or
//                       postgres://postgres@127.0.0.1:5432/test when it answers; skipped otherwise.
//   BENCH_LOG_LEVEL     the servers' LOG_LEVEL (default warn).
//   BENCH_KEEP=1        keep the temp dir (data dirs, server logs).
//   BENCH_CPU_PROF=1    write a V8 CPU profile of every server into the temp dir (implies BENCH_KEEP=1).
// AUTH_HASH_CONCURRENCY, AUTH_HASH_QUEUE_LIMIT and AUTH_MAX_SESSIONS, when set, reach the server.
import os from 'node:os';
import {
  type BenchContext,
  type Benchmark,
  cleanupMark,
  type DatabaseChoice,
  makeWorkDir,
  reachablePostgres,
  type Row,
  runCleanups,
  table,
} from './lib.js';
import { auditBench } from './audit.js';
import { keysBench } from './keys.js';
import { loginBench } from './login.js';
import { stormBench } from './storm.js';
import { usersMeBench } from './users-me.js';
import { tokensBench } from './tokens.js';
import { webhooksBench } from './webhooks.js';

const BENCHMARKS: Benchmark[] = [
  loginBench,
  usersMeBench,
  stormBench,
  keysBench,
  auditBench,
  webhooksBench,
  tokensBench,
];
const DEFAULT_STORM_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

function usage(): string {
  return [
    'usage: npm run bench [-- <name>…]',
    '',
    ...BENCHMARKS.map((b) => `  ${b.name.padEnd(8)} ${b.title}`),
    '',
    'BENCH_DATABASE_URL=postgres://… runs on PostgreSQL instead of PGlite (see bench/run.ts).',
  ].join('\n');
}

const redact = (url: string) => {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
};

async function main(): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  if (args.includes('-h') || args.includes('--help')) {
    console.log(usage());
    return 0;
  }
  const unknown = args.filter((a) => !BENCHMARKS.some((b) => b.name === a));
  if (unknown.length > 0) {
    console.error(`unknown benchmark ${unknown.map((u) => `"${u}"`).join(', ')}\n\n${usage()}`);
    return 2;
  }
  const selected = args.length === 0 ? BENCHMARKS : BENCHMARKS.filter((b) => args.includes(b.name));

  const benchUrl = process.env.BENCH_DATABASE_URL || null;
  let database: DatabaseChoice = { kind: 'pglite' };
  if (benchUrl) {
    const reached = await reachablePostgres(benchUrl);
    if ('error' in reached) {
      console.error(`BENCH_DATABASE_URL ${redact(benchUrl)} is not reachable: ${reached.error}`);
      return 1;
    }
    database = { kind: 'pg', adminUrl: reached.adminUrl };
  }
  let postgres: ReturnType<typeof reachablePostgres> | null = null;

  const cpus = os.cpus();
  console.log('Tenantry benchmarks');
  console.log(
    `  node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `  database: ${database.kind === 'pg' ? `PostgreSQL via ${redact(database.adminUrl)}` : 'PGlite (set BENCH_DATABASE_URL for PostgreSQL)'}`,
  );
  console.log('  servers run in child processes; the load generator (autocannon) runs in this one, on the same cores');

  if (process.env.BENCH_CPU_PROF === '1') process.env.BENCH_KEEP = '1';
  const workDir = makeWorkDir();
  const ctx: BenchContext = {
    workDir,
    database,
    postgres: () =>
      (postgres ??= reachablePostgres(
        database.kind === 'pg' ? database.adminUrl : (benchUrl ?? DEFAULT_STORM_POSTGRES),
      )),
    say: (message) => console.log(`  ${message}`),
  };

  const results: Array<{ bench: Benchmark; rows: Row[]; seconds: number }> = [];
  for (const bench of selected) {
    console.log(`\n== ${bench.name}: ${bench.title}`);
    const mark = cleanupMark();
    const t0 = performance.now();
    let rows: Row[];
    try {
      rows = await bench.run(ctx);
    } catch (err) {
      const message = (err as Error).message;
      console.error(`  ERROR: ${message}`);
      if (process.env.BENCH_DEBUG) console.error((err as Error).stack);
      rows = [{ metric: 'error', value: message.split('\n')[0]!, status: 'ERROR' }];
    } finally {
      await runCleanups(mark);
    }
    const seconds = (performance.now() - t0) / 1000;
    results.push({ bench, rows, seconds });
    console.log(`  (${seconds.toFixed(0)} s)`);
  }

  console.log('\nSummary');
  const lines = results.flatMap(({ bench, rows }) =>
    rows.map((r, i) => [i === 0 ? bench.name : '', r.metric, r.value, r.target ?? '', r.status]),
  );
  console.log(table(['benchmark', 'metric', 'value', 'target', 'status'], lines));
  const all = results.flatMap((r) => r.rows);
  const count = (s: Row['status']) => all.filter((r) => r.status === s).length;
  console.log(`\n${count('PASS')} pass, ${count('WARN')} warn, ${count('SKIP')} skipped, ${count('ERROR')} error(s)`);
  return count('ERROR') > 0 ? 1 : 0;
}

// Ctrl-C reaches this process twice (from the terminal and relayed by tsx): a second signal within
// 2 s is that echo; a later one forces the exit without waiting for the cleanups.
let interruptedAt = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interruptedAt) {
      if (Date.now() - interruptedAt > 2000) process.exit(130);
      return;
    }
    interruptedAt = Date.now();
    console.error(`\n${signal}: stopping servers and dropping databases…`);
    void runCleanups().finally(() => process.exit(130));
  });
}

main()
  .then(async (code) => {
    await runCleanups();
    process.exit(code);
  })
  .catch(async (err) => {
    console.error(err);
    await runCleanups();
    process.exit(1);
  });
