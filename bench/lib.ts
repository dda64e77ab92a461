// Shared helpers of the benchmark suite: a temp work dir, server children (bench/server.ts), the
// autocannon wrapper, percentiles, RSS sampling, throwaway PostgreSQL databases and the few API calls
// that set up accounts. Everything started here registers its own cleanup (runCleanups).
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Options as LoadOptions, type Result as AutocannonResult } from 'autocannon';
import pg from 'pg';
import { Pool, request } from 'undici';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(BENCH_DIR, '..');

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const MiB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Cleanups, run in reverse order of registration (servers stop before their database is dropped).

const cleanups: Array<{ label: string; fn: () => Promise<void> | void }> = [];

export function onCleanup(label: string, fn: () => Promise<void> | void): () => Promise<void> {
  const entry = { label, fn };
  cleanups.push(entry);
  return async () => {
    const i = cleanups.indexOf(entry);
    if (i === -1) return;
    cleanups.splice(i, 1);
    await fn();
  };
}

/** How many cleanups are registered now; runCleanups(mark) undoes only what came after. */
export const cleanupMark = () => cleanups.length;

// Serialized: an interrupt's cleanup waits for one already running instead of exiting under it.
let cleaning: Promise<void> = Promise.resolve();

export function runCleanups(mark = 0): Promise<void> {
  cleaning = cleaning.then(async () => {
    while (cleanups.length > mark) {
      const { label, fn } = cleanups.pop()!;
      try {
        await fn();
      } catch (err) {
        console.error(`cleanup "${label}" failed:`, (err as Error).message);
      }
    }
  });
  return cleaning;
}

/** A fresh directory under the OS temp dir for data dirs and server logs; removed at the end unless BENCH_KEEP=1. */
export function makeWorkDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-bench-'));
  onCleanup('work dir', () => {
    if (process.env.BENCH_KEEP === '1') console.log(`(kept ${dir})`);
    else fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

// ---------------------------------------------------------------------------------------------
// What a benchmark is and returns.

export type Status = 'PASS' | 'WARN' | 'INFO' | 'SKIP' | 'ERROR';

export interface Row {
  metric: string;
  value: string;
  target?: string;
  status: Status;
}

export type DatabaseChoice = { kind: 'pglite' } | { kind: 'pg'; adminUrl: string };

export interface BenchContext {
  workDir: string;
  /** Where benchmarks without a database requirement run: PGlite, or PostgreSQL with BENCH_DATABASE_URL. */
  database: DatabaseChoice;
  /** A PostgreSQL server to create databases on, for benchmarks that need one. */
  postgres(): Promise<{ adminUrl: string } | { error: string }>;
  say(message: string): void;
}

export interface Benchmark {
  name: string;
  title: string;
  run(ctx: BenchContext): Promise<Row[]>;
}

/** A row with a target: PASS when met, WARN otherwise (a missed target never fails the run). */
export function targetRow(
  metric: string,
  value: number,
  shown: string,
  target: { atLeast?: number; below?: number; text: string },
): Row {
  const met =
    target.atLeast !== undefined ? value >= target.atLeast : target.below !== undefined ? value < target.below : true;
  return { metric, value: shown, target: target.text, status: Number.isFinite(value) && met ? 'PASS' : 'WARN' };
}

export const info = (metric: string, value: string): Row => ({ metric, value, status: 'INFO' });

// ---------------------------------------------------------------------------------------------
// Server children.

export interface CapturedMail {
  to: string;
  subject: string;
  text: string;
}

export interface ServerChild {
  name: string;
  pid: number;
  port: number;
  url: string;
  logFile: string;
  /** Resident set size of the server process now, in bytes. */
  rss(): Promise<number>;
  /** The next (or an already received, not yet taken) mail to `to`. */
  takeMail(to: string, timeoutMs?: number): Promise<CapturedMail>;
  logTail(lines?: number): string;
  /** App mode: starts the webhook delivery worker in the server (bench/server.ts); resolves once it runs. */
  startWorker(): Promise<void>;
  stop(): Promise<void>;
}

// Only what the child needs from our environment: a DATABASE_URL or REDIS_URL in the shell must not
// leak into a benchmark that did not ask for it.
const PASSED_THROUGH = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'UV_THREADPOOL_SIZE'];

/** VmRSS of a process from /proc, in bytes; null where /proc is not available. */
export function procRss(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export async function startServer(opts: {
  name: string;
  mode: 'app' | 'bare';
  workDir: string;
  env?: Record<string, string>;
}): Promise<ServerChild> {
  const logFile = path.join(opts.workDir, `${opts.name}.log`);
  const logFd = fs.openSync(logFile, 'a');
  const env: Record<string, string> = {};
  for (const k of PASSED_THROUGH) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  Object.assign(env, opts.env, { BENCH_SERVER_MODE: opts.mode });

  // The child's stdout/stderr go to a file, so the parent (the load generator) spends no CPU on them.
  const child: ChildProcess = fork(path.join(BENCH_DIR, 'server.ts'), [], {
    cwd: ROOT,
    env,
    // BENCH_CPU_PROF=1: a V8 CPU profile of each server, written to the work dir when it stops.
    execArgv: [
      '--import',
      'tsx',
      ...(process.env.BENCH_CPU_PROF === '1'
        ? ['--cpu-prof', `--cpu-prof-dir=${path.join(opts.workDir, 'profiles')}`]
        : []),
    ],
    stdio: ['ignore', logFd, logFd, 'ipc'],
  });
  fs.closeSync(logFd);

  const mails: CapturedMail[] = [];
  const mailWaiters: Array<() => void> = [];
  const rssWaiters: Array<(rss: number) => void> = [];
  const workerWaiters: Array<() => void> = [];
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));

  const logTail = (lines = 20) => {
    try {
      return fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  };

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${opts.name}: server did not start within 60 s\n${logTail()}`)),
      60_000,
    );
    child.on('message', (msg: { type: string; port?: number; mail?: CapturedMail; rss?: number }) => {
      if (msg.type === 'ready') {
        clearTimeout(timer);
        resolve(msg.port!);
      } else if (msg.type === 'mail') {
        mails.push(msg.mail!);
        for (const w of mailWaiters.splice(0)) w();
      } else if (msg.type === 'rss') {
        rssWaiters.shift()?.(msg.rss!);
      } else if (msg.type === 'worker-started') {
        workerWaiters.shift()?.();
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${opts.name}: server exited during start (code ${code}, signal ${signal})\n${logTail()}`));
    });
  }).catch(async (err) => {
    if (!exited) child.kill('SIGKILL');
    throw err;
  });

  const stop = onCleanup(`server ${opts.name}`, async () => {
    if (exited) return;
    if (child.connected) child.send({ type: 'stop' });
    else child.kill('SIGTERM');
    const killed = await Promise.race([exitPromise.then(() => false), sleep(10_000).then(() => true)]);
    if (killed) {
      child.kill('SIGKILL');
      await exitPromise;
    }
  });

  return {
    name: opts.name,
    pid: child.pid!,
    port,
    url: `http://127.0.0.1:${port}`,
    logFile,
    logTail,
    stop,
    startWorker() {
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`${opts.name}: webhook worker did not start within 10 s`)), 10_000);
        workerWaiters.push(() => (clearTimeout(t), resolve()));
        child.send({ type: 'worker-start' });
      });
    },
    async rss() {
      const fromProc = procRss(child.pid!);
      if (fromProc !== null) return fromProc;
      // No /proc (not Linux): the child reports process.memoryUsage.rss() itself.
      return new Promise<number>((resolve) => {
        rssWaiters.push(resolve);
        child.send({ type: 'rss' });
      });
    },
    async takeMail(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const i = mails.findIndex((m) => m.to === to);
        if (i !== -1) return mails.splice(i, 1)[0]!;
        const left = deadline - Date.now();
        if (left <= 0 || exited) throw new Error(`${opts.name}: no mail to ${to} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          mailWaiters.push(() => (clearTimeout(t), resolve()));
        });
      }
    },
  };
}

/** Samples a server's RSS every `intervalMs` until stopped; the peak is what the storm reports. */
export function sampleRss(server: ServerChild, intervalMs = 100) {
  const samples: number[] = [];
  let busy = false;
  const tick = () => {
    if (busy) return;
    busy = true;
    server
      .rss()
      .then((rss) => samples.push(rss))
      .catch(() => {})
      .finally(() => (busy = false));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const peak = samples.length > 0 ? Math.max(...samples) : NaN;
      const mean = samples.length > 0 ? samples.reduce((a, b) => a + b, 0) / samples.length : NaN;
      return { peak, mean, count: samples.length };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Load generation and statistics.

export interface LoadResult {
  durationS: number;
  /** Responses received (any status). */
  completed: number;
  /** 2xx responses per second: the throughput that counts. */
  okPerSec: number;
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

/** One autocannon run (in this process), summarized. */
export function load(options: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    autocannon(options, (err, r: AutocannonResult) => {
      if (err) return reject(err);
      const statusCodes: Record<string, number> = {};
      for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = s.count;
      resolve({
        durationS: r.duration,
        completed: r.requests.total,
        okPerSec: r['2xx'] / r.duration,
        latency: {
          mean: r.latency.mean,
          p50: r.latency.p50,
          p90: r.latency.p90,
          p99: r.latency.p99,
          max: r.latency.max,
        },
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
        statusCodes,
      });
    });
  });
}

function summarize(latencies: number[]) {
  const mean = latencies.length > 0 ? latencies.reduce((a, b) => a + b, 0) / latencies.length : NaN;
  return {
    mean,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies.length > 0 ? Math.max(...latencies) : NaN,
  };
}

export interface ClosedLoopRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * `connections` clients that each send a request as soon as their previous one is answered, until
 * `seconds` have passed; then every request in flight is awaited, so nothing is left running on the
 * server afterwards (autocannon drops in-flight requests, which a slow endpoint keeps working on) and
 * the rate is completions over the time until the last one. For slow flows (logins); autocannon for fast ones.
 */
export async function closedLoop(opts: {
  url: string;
  connections: number;
  seconds: number;
  request: (n: number) => ClosedLoopRequest;
}): Promise<LoadResult> {
  const pool = new Pool(opts.url, { connections: opts.connections });
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let sent = 0;
  let ok = 0;
  let errors = 0;
  const start = performance.now();
  const end = start + opts.seconds * 1000;
  await Promise.all(
    Array.from({ length: opts.connections }, async () => {
      while (performance.now() < end) {
        const r = opts.request(sent++);
        const t = performance.now();
        try {
          const res = await pool.request({ method: r.method, path: r.path, headers: r.headers, body: r.body });
          await res.body.dump();
          latencies.push(performance.now() - t);
          statusCodes[res.statusCode] = (statusCodes[res.statusCode] ?? 0) + 1;
          if (res.statusCode >= 200 && res.statusCode < 300) ok++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const durationS = (performance.now() - start) / 1000;
  await pool.close();
  return {
    durationS,
    completed: latencies.length,
    okPerSec: ok / durationS,
    latency: summarize(latencies),
    non2xx: latencies.length - ok,
    errors,
    timeouts: 0,
    statusCodes,
  };
}

/** Throws when a run saw anything but 2xx: numbers from a failing flow mean nothing. */
export function assertAllOk(what: string, r: LoadResult): void {
  if (r.non2xx === 0 && r.errors === 0 && r.timeouts === 0) return;
  const codes = Object.entries(r.statusCodes)
    .map(([c, n]) => `${c}×${n}`)
    .join(' ');
  throw new Error(`${what}: ${r.non2xx} non-2xx responses (${codes}), ${r.errors} errors, ${r.timeouts} timeouts`);
}

/** Nearest-rank percentile (p in 0-100) of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** CPU seconds used so far by all of `pids` together. */
export const cpuOf = (pids: number[]) => pids.reduce((a, pid) => a + processCpuSeconds(pid), 0);

/** Runs `fn` and returns its result with the CPU seconds the processes `pids` used meanwhile. */
export async function withCpu<T>(pids: number[], fn: () => Promise<T>): Promise<{ result: T; cpuS: number }> {
  const before = cpuOf(pids);
  const result = await fn();
  return { result, cpuS: cpuOf(pids) - before };
}

/** Adds up rounds of the same measurement (alternated with a baseline's, so drifting load hits both). */
export function combine(results: LoadResult[]): LoadResult {
  const durationS = results.reduce((a, r) => a + r.durationS, 0);
  const okCount = results.reduce((a, r) => a + r.okPerSec * r.durationS, 0);
  const statusCodes: Record<string, number> = {};
  for (const r of results)
    for (const [c, n] of Object.entries(r.statusCodes)) statusCodes[c] = (statusCodes[c] ?? 0) + n;
  const completed = results.reduce((a, r) => a + r.completed, 0);
  const weighted = (f: (r: LoadResult) => number) => results.reduce((a, r) => a + f(r) * r.completed, 0) / completed;
  return {
    durationS,
    completed,
    okPerSec: okCount / durationS,
    // Percentiles do not add up: the mean and p50 are weighted by requests, p90/p99/max are the worst round's.
    latency: {
      mean: weighted((r) => r.latency.mean),
      p50: weighted((r) => r.latency.p50),
      p90: Math.max(...results.map((r) => r.latency.p90)),
      p99: Math.max(...results.map((r) => r.latency.p99)),
      max: Math.max(...results.map((r) => r.latency.max)),
    },
    non2xx: results.reduce((a, r) => a + r.non2xx, 0),
    errors: results.reduce((a, r) => a + r.errors, 0),
    timeouts: results.reduce((a, r) => a + r.timeouts, 0),
    statusCodes,
  };
}

// ---------------------------------------------------------------------------------------------
// How busy the machine is with others' work. The machine is shared: CPU time spent by processes
// other than this one and its servers during a measurement is reported next to the result, so a
// ratio taken under heavy foreign load can be recognised as such.

let clockTicks: number | null = null;

/** CPU seconds (user + system, all threads) a process has used so far; NaN without /proc. */
export function processCpuSeconds(pid: number): number {
  if (pid === process.pid) {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  }
  const ticks = procTicks(pid);
  return Number.isNaN(ticks) ? NaN : ticks / ticksPerSecond();
}

/** CPU seconds used so far by the main thread of process `pid` (its JavaScript, not its thread pool); NaN without /proc. */
export function mainThreadCpuSeconds(pid: number): number {
  const ticks = procTicks(pid, pid);
  return Number.isNaN(ticks) ? NaN : ticks / ticksPerSecond();
}

function ticksPerSecond(): number {
  clockTicks ??= (() => {
    try {
      return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      return 100;
    }
  })();
  return clockTicks;
}

function procTicks(pid: number, tid?: number): number {
  try {
    const stat = fs.readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return NaN;
  }
}

function machineTicks(): { busy: number; total: number } | null {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = cpu.reduce((a, b) => a + b, 0);
    return { busy: total - cpu[3]! - cpu[4]!, total }; // idle and iowait are not busy; steal is
  } catch {
    return null;
  }
}

/** Starts measuring; stop() gives the cores' worth of CPU used by everyone else (NaN without /proc). */
export function foreignCpu(pids: number[]) {
  const ours = () => [process.pid, ...pids].reduce((a, pid) => a + (procTicks(pid) || 0), 0);
  const m0 = machineTicks();
  const o0 = ours();
  return {
    stop(): number {
      const m1 = machineTicks();
      if (!m0 || !m1 || m1.total === m0.total) return NaN;
      const foreign = m1.busy - m0.busy - (ours() - o0);
      return (Math.max(0, foreign) / (m1.total - m0.total)) * os.cpus().length;
    },
  };
}

export function foreignCpuRow(cores: number): Row {
  const noisy = cores > 0.25;
  return {
    metric: 'CPU used by other processes meanwhile',
    value: Number.isFinite(cores)
      ? `${fmt(cores, 2)} of ${os.cpus().length} cores${noisy ? ' (noisy: compare ratios only)' : ''}`
      : 'n/a (no /proc)',
    status: 'INFO',
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a throwaway database per benchmark.

/** The URL itself if it answers, else the same server's `postgres` database; null if neither does. */
export async function reachablePostgres(url: string): Promise<{ adminUrl: string } | { error: string }> {
  let lastError = '';
  const fallback = new URL(url);
  fallback.pathname = '/postgres';
  for (const candidate of [url, fallback.toString()]) {
    const client = new pg.Client({ connectionString: candidate, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('select 1');
      return { adminUrl: candidate };
    } catch (err) {
      lastError = (err as Error).message;
    } finally {
      await client.end().catch(() => {});
    }
  }
  return { error: lastError };
}

/** Creates `tenantry_bench_<random>` next to the admin URL's database; dropped at cleanup. */
export async function createDatabase(
  adminUrl: string,
): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `tenantry_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const drop = onCleanup(`database ${name}`, async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(`drop database if exists ${name} with (force)`);
    } finally {
      await c.end();
    }
  });
  return { name, url: u.toString(), drop };
}

/** The server processes (backends) of a database's current connections, to measure their CPU. */
export async function postgresBackendPids(adminUrl: string, database: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database],
    );
    return rows.map((r) => r.pid);
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------------------------------------
// The API calls that set a benchmark up.

export async function api<T = unknown>(
  baseUrl: string,
  method: 'GET' | 'POST',
  urlPath: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await request(`${baseUrl}${urlPath}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: (text ? JSON.parse(text) : null) as T };
}

function expectStatus(what: string, res: { status: number; body: unknown }, status: number) {
  if (res.status !== status)
    throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}

export const PASSWORD = 'Bench-passw0rd-long-enough';

/** Registers an account and verifies it with the token from its mail, all through the API. */
export async function createVerifiedUser(server: ServerChild, email: string, password = PASSWORD): Promise<void> {
  expectStatus(
    'register',
    await api(server.url, 'POST', '/api/v1/auth/register', { email, password, fullName: 'Bench User' }),
    201,
  );
  const mail = await server.takeMail(email);
  const m = /[?&]token=([^\s&]+)/.exec(mail.text);
  if (!m) throw new Error(`no token in the verification mail to ${email}`);
  expectStatus(
    'verify-email',
    await api(server.url, 'POST', '/api/v1/auth/verify-email', { token: decodeURIComponent(m[1]!) }),
    200,
  );
}

export async function login(server: ServerChild, email: string, password = PASSWORD): Promise<string> {
  const res = await api<{ accessToken: string }>(server.url, 'POST', '/api/v1/auth/login', { email, password });
  expectStatus('login', res, 200);
  return res.body.accessToken;
}

/** The environment of an app server: fresh secrets, limits out of the way, quiet logs. */
export function appEnv(dataDir: string, databaseUrl: string | null): Record<string, string> {
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    DATA_DIR: dataDir,
    // Request logging at `info` costs the server real throughput; the benchmarks measure the app, so
    // they log warnings only unless BENCH_LOG_LEVEL says otherwise.
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    JWT_SECRET: randomBytes(32).toString('base64url'),
    JWT_REFRESH_SECRET: randomBytes(32).toString('base64url'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    // What production requires besides the secrets. No mail leaves (server.ts replaces the mailer),
    // and the benchmarks pay nothing: the built-in test checkout, chosen explicitly.
    SMTP_URL: 'smtp://127.0.0.1:1',
    APP_ORIGIN: 'http://localhost:3000',
    PUBLIC_API_URL: 'http://127.0.0.1:3000',
    BILLING_PROVIDER: 'test',
    // Every request of a benchmark comes from 127.0.0.1 and few users: the limits would answer 429.
    RATE_LIMIT_AUTH_PER_MIN: '1000000000',
    RATE_LIMIT_USER_PER_MIN: '1000000000',
    RATE_LIMIT_ANON_PER_MIN: '1000000000',
  };
  // The server's own tuning knobs, when set in the shell, apply to the benchmark (and its baseline).
  for (const k of ['AUTH_HASH_CONCURRENCY', 'AUTH_HASH_QUEUE_LIMIT', 'AUTH_MAX_SESSIONS']) {
    if (process.env[k]) env[k] = process.env[k]!;
  }
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  return env;
}

// ---------------------------------------------------------------------------------------------
// Formatting.

export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : 'n/a';
// autocannon's histograms have 1 ms resolution: 0 means under a millisecond.
export const fmtMs = (n: number) => (n === 0 ? '< 1 ms' : `${fmt(n, n < 10 ? 1 : 0)} ms`);
export const fmtMiB = (bytes: number) => `${fmt(bytes / MiB, 0)} MiB`;

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// The real app in a child process, on a fresh database.

export async function startAppServer(
  ctx: BenchContext,
  name: string,
  database: DatabaseChoice,
  extraEnv: Record<string, string> = {},
): Promise<{
  server: ServerChild;
  env: Record<string, string>;
  databaseLabel: string;
  postgres: { adminUrl: string; name: string } | null;
}> {
  const dataDir = fs.mkdtempSync(path.join(ctx.workDir, `${name}-`));
  let databaseUrl: string | null = null;
  let databaseLabel = 'PGlite';
  let postgres: { adminUrl: string; name: string } | null = null;
  if (database.kind === 'pg') {
    const db = await createDatabase(database.adminUrl);
    databaseUrl = db.url;
    databaseLabel = 'PostgreSQL';
    postgres = { adminUrl: database.adminUrl, name: db.name };
    ctx.say(`created database ${db.name}`);
  }
  const env = { ...appEnv(dataDir, databaseUrl), ...extraEnv };
  const t0 = performance.now();
  const server = await startServer({ name, mode: 'app', workDir: ctx.workDir, env });
  ctx.say(
    `app on ${databaseLabel} ready in ${fmt((performance.now() - t0) / 1000, 1)} s (pid ${server.pid}, ${server.url})`,
  );
  return { server, env, databaseLabel, postgres };
}

// ---------------------------------------------------------------------------------------------
// Organizations, keys and direct SQL for the benchmarks of issues 5 and 6.

/** Runs statements on a database with a short-lived client (setup and checks, never the measured path). */
export async function sqlOn<T extends Record<string, unknown> = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<T>(text, values);
    return rows;
  } finally {
    await c.end();
  }
}

/** An account, signed in, owning a fresh organization; all through the API. */
export async function createOrgOwner(
  server: ServerChild,
  email: string,
  slug: string,
): Promise<{ token: string; orgId: string; userId: string }> {
  await createVerifiedUser(server, email);
  const token = await login(server, email);
  const org = await api<{ id: string; createdBy: string }>(
    server.url,
    'POST',
    '/api/v1/organizations',
    { name: `Bench ${slug}`, slug },
    token,
  );
  expectStatus('create organization', org, 201);
  return { token, orgId: org.body.id, userId: org.body.createdBy };
}

/** Creates an API key through the API and returns the plain key. */
export async function createApiKey(
  server: ServerChild,
  token: string,
  orgId: string,
  scopes: string[],
  rateLimit = 1_000_000,
): Promise<{ id: string; plainKey: string }> {
  const res = await api<{ apiKey: { id: string }; plainKey: string }>(
    server.url,
    'POST',
    `/api/v1/organizations/${orgId}/api-keys`,
    { name: 'bench', scopes, rateLimit },
    token,
  );
  expectStatus('create API key', res, 201);
  return { id: res.body.apiKey.id, plainKey: res.body.plainKey };
}

export async function createProject(server: ServerChild, token: string, orgId: string, name: string): Promise<void> {
  expectStatus(
    'create project',
    await api(server.url, 'POST', `/api/v1/organizations/${orgId}/projects`, { name }, token),
    201,
  );
}
