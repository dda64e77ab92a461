// A CPU profile of one hot route, for finding where its time goes (not part of `npm run bench`):
//   npx tsx bench/profile.ts me|keys|login|create [seconds]
// Starts the app (PostgreSQL at BENCH_DATABASE_URL, else PGlite) with --cpu-prof (BENCH_CPU_PROF=0: without), sets up what the
// route needs through the API, loads only that route, and prints the heaviest call paths.
import fs from 'node:fs';
import path from 'node:path';
import {
  closedLoop,
  createApiKey,
  createOrgOwner,
  createProject,
  createVerifiedUser,
  type DatabaseChoice,
  load,
  login,
  mainThreadCpuSeconds,
  makeWorkDir,
  PASSWORD,
  processCpuSeconds,
  runCleanups,
  sqlOn,
  startAppServer,
} from './lib.js';

const which = process.argv[2] ?? 'me';
const seconds = Number(process.argv[3] ?? 6);
process.env.BENCH_CPU_PROF ??= '1';
const workDir = makeWorkDir();
const database: DatabaseChoice = process.env.BENCH_DATABASE_URL
  ? { kind: 'pg', adminUrl: process.env.BENCH_DATABASE_URL }
  : { kind: 'pglite' };
const ctx = { workDir, database, postgres: async () => ({ error: 'n/a' }), say: (m: string) => console.log(m) };

try {
  const { server, env } = await startAppServer(ctx, which, database);
  let url: string;
  let headers: Record<string, string>;
  if (which === 'keys') {
    const { token, orgId } = await createOrgOwner(server, 'owner@bench.test', 'profile');
    if (env.DATABASE_URL)
      await sqlOn(env.DATABASE_URL, `update organizations set plan = 'enterprise' where id = $1`, [orgId]);
    for (const n of ['a', 'b', 'c']) await createProject(server, token, orgId, n);
    const key = await createApiKey(server, token, orgId, ['read:projects']);
    url = `${server.url}/api/v1/organizations/${orgId}/projects`;
    headers = { 'x-api-key': key.plainKey };
  } else if (which === 'create') {
    const { token, orgId } = await createOrgOwner(server, 'owner@bench.test', 'profile');
    url = `${server.url}/api/v1/organizations/${orgId}/projects`;
    headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    await load({ url, connections: 10, duration: 1, headers, method: 'POST', body: JSON.stringify({ name: 'p' }) });
    const r = await load({
      url,
      connections: 10,
      duration: seconds,
      headers,
      method: 'POST',
      body: JSON.stringify({ name: 'p' }),
    });
    console.log(`create: ${Math.round(r.okPerSec)} req/s, ${r.completed} requests`);
    await server.stop();
    printProfile(newestProfile(), r.completed);
    process.exit(0);
  } else if (which === 'login') {
    await createVerifiedUser(server, 'login@bench.test');
    const main0 = mainThreadCpuSeconds(server.pid);
    const all0 = processCpuSeconds(server.pid);
    const r = await closedLoop({
      url: server.url,
      connections: 8,
      seconds,
      request: () => ({
        method: 'POST',
        path: '/api/v1/auth/login',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'login@bench.test', password: PASSWORD }),
      }),
    });
    console.log(`login: ${r.okPerSec.toFixed(1)} logins/s, ${r.completed} logins`);
    const perLoginMs = (s: number) => ((s * 1000) / r.completed).toFixed(2);
    console.log(
      `CPU per login: ${perLoginMs(processCpuSeconds(server.pid) - all0)} ms, of which the main thread ${perLoginMs(mainThreadCpuSeconds(server.pid) - main0)} ms`,
    );
    await server.stop();
    printProfile(newestProfile(), r.completed);
    process.exit(0);
  } else {
    await createVerifiedUser(server, 'me@bench.test');
    url = `${server.url}/api/v1/users/me`;
    headers = { authorization: `Bearer ${await login(server, 'me@bench.test')}` };
  }
  await load({ url, connections: 10, duration: 1, headers });
  const r = await load({ url, connections: 10, duration: seconds, headers });
  console.log(`${which}: ${Math.round(r.okPerSec)} req/s, ${r.completed} requests`);
  await server.stop();
  printProfile(newestProfile(), r.completed);
} finally {
  await runCleanups();
}

function newestProfile(): string {
  const dir = path.join(workDir, 'profiles');
  const file = fs
    .readdirSync(dir)
    .map((f) => path.join(dir, f))
    .sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0]!;
  console.log(`profile: ${file}`);
  return file;
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Inclusive time per function over the samples taken outside module loading, in µs per request. */
function printProfile(file: string, requests: number) {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (c: Node['callFrame']) =>
    `${c.functionName || '(anon)'} ${c.url.replace(/.*node_modules\//, '').replace(/.*\/(src|bench)\//, '$1/')}:${c.lineNumber + 1}`;
  const incl = new Map<string, number>();
  const self = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const t = p.timeDeltas[i] ?? 0;
    const chain: Node['callFrame'][] = [];
    for (let cur: number | undefined = p.samples[i]; cur !== undefined; cur = parent.get(cur))
      chain.push(byId.get(cur)!.callFrame);
    if (chain[0]!.functionName === '(idle)' || chain.some((c) => /esm\/|cjs\/loader|tsx|avvio/.test(c.url))) continue;
    self.set(name(chain[0]!), (self.get(name(chain[0]!)) ?? 0) + t);
    for (const k of new Set(chain.map(name))) incl.set(k, (incl.get(k) ?? 0) + t);
  }
  const show = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${(v / requests).toFixed(1).padStart(7)} µs  ${k}`)
      .join('\n');
  console.log('--- inclusive, µs per request\n' + show(incl, 70));
  console.log('--- self, µs per request\n' + show(self, 30));
}
