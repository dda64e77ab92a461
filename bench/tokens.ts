// 7. Access tokens under an asymmetric JWT_ALGORITHM, and custom roles on the hot path.
//
// Three app servers, started the same way and differing only in JWT_ALGORITHM (HS256, ES256, EdDSA),
// serve GET /api/v1/users/me to the tokens of 8 sessions (each acting in an organization, so the
// tokens carry the org_* claims), alternating in rounds so the machine's drift weighs on all three.
// Target: ES256 and EdDSA at ≥ 0.9 of HS256. An instance verifies a token's signature once (it
// keeps verified tokens, whatever the algorithm); what that first verification costs is printed
// beside, measured in this process with jose and fast-jwt on the same tokens and keys, and so is the
// ratio of server CPU per request, which a busy machine moves less than req/s.
//
// Then, on the HS256 server, GET /organizations/{orgId}/projects as an admin and as a member with a
// custom role granting projects:read: the custom role is read in the authorization's one query, so
// the target is the same throughput (≥ 0.9 of the admin's).
import { createPublicKey } from 'node:crypto';
import { createVerifier } from 'fast-jwt';
import { jwtVerify } from 'jose';
import {
  api,
  assertAllOk,
  type Benchmark,
  combine,
  cpuOf,
  createOrgOwner,
  createProject,
  createVerifiedUser,
  fmt,
  fmtMs,
  foreignCpu,
  foreignCpuRow,
  info,
  load,
  type LoadResult,
  PASSWORD,
  type ServerChild,
  startAppServer,
  targetRow,
} from './lib.js';

const ALGS = ['HS256', 'ES256', 'EdDSA'] as const;
type Alg = (typeof ALGS)[number];
const SESSIONS = 8;
const ROUNDS = 5;
const SLICE_S = 2;
const WARMUP_S = 1;
const CONNECTIONS = 10;

/** `SESSIONS` accounts, each owning an organization and signed in with it active: their access tokens. */
async function tokensOf(server: ServerChild, alg: Alg): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const { orgId } = await createOrgOwner(
      server,
      `tokens-${alg.toLowerCase()}-${i}@bench.test`,
      `tokens-${alg.toLowerCase()}-${i}`,
    );
    const res = await api<{ accessToken: string }>(server.url, 'POST', '/api/v1/auth/login', {
      email: `tokens-${alg.toLowerCase()}-${i}@bench.test`,
      password: PASSWORD,
      organizationId: orgId,
    });
    if (res.status !== 200) throw new Error(`login with an organization: ${res.status} ${JSON.stringify(res.body)}`);
    tokens.push(res.body.accessToken);
  }
  return tokens;
}

/** Microseconds per signature check of a token never seen before (jose for ES256/EdDSA, fast-jwt for HS256). */
async function coldVerifyUs(alg: Alg, server: ServerChild, token: string, secret: string): Promise<number> {
  const n = 2000;
  if (alg === 'HS256') {
    const verify = createVerifier({ key: secret, algorithms: ['HS256'] });
    const t0 = performance.now();
    for (let i = 0; i < n; i++) verify(token);
    return ((performance.now() - t0) / n) * 1000;
  }
  const jwks = (await api<{ keys: Array<Record<string, string>> }>(server.url, 'GET', '/.well-known/jwks.json')).body;
  const key = createPublicKey({ key: jwks.keys[0]!, format: 'jwk' });
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await jwtVerify(token, key, { algorithms: [alg], issuer: 'tenantry' });
  return ((performance.now() - t0) / n) * 1000;
}

interface Target {
  label: string;
  url: string;
  pid: number;
  requests: Array<{ method: 'GET'; path: string; headers: Record<string, string> }>;
}

/** Warm-up, then ROUNDS rounds over the targets; per target: the combined result and server CPU µs per request. */
async function measure(say: (m: string) => void, targets: Target[]) {
  for (const t of targets)
    assertAllOk(
      `${t.label} (warm-up)`,
      await load({ url: t.url, connections: CONNECTIONS, duration: WARMUP_S, requests: t.requests }),
    );
  const meter = foreignCpu(targets.map((t) => t.pid));
  const rounds: LoadResult[][] = targets.map(() => []);
  const cpuS = targets.map(() => 0);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, t] of targets.entries()) {
      const c0 = cpuOf([t.pid]);
      rounds[i]!.push(await load({ url: t.url, connections: CONNECTIONS, duration: SLICE_S, requests: t.requests }));
      cpuS[i]! += cpuOf([t.pid]) - c0;
    }
    say(
      `  round ${round + 1}: ${rounds.map((r, i) => `${targets[i]!.label} ${fmt(r.at(-1)!.okPerSec)}`).join(', ')} req/s`,
    );
  }
  const foreign = meter.stop();
  const results = rounds.map((r, i) => {
    const c = combine(r);
    assertAllOk(targets[i]!.label, c);
    return { result: c, cpuUs: (cpuS[i]! / r.reduce((a, x) => a + x.completed, 0)) * 1e6 };
  });
  return { results, foreign };
}

export const tokensBench: Benchmark = {
  name: 'tokens',
  title: 'GET /users/me with ES256 and EdDSA tokens vs HS256; a custom role on the hot path',
  async run(ctx) {
    const servers: Record<Alg, { server: ServerChild; env: Record<string, string> }> = {} as never;
    for (const alg of ALGS)
      servers[alg] = await startAppServer(ctx, `tokens-${alg.toLowerCase()}`, ctx.database, { JWT_ALGORITHM: alg });
    const tokens = {} as Record<Alg, string[]>;
    for (const alg of ALGS) tokens[alg] = await tokensOf(servers[alg].server, alg);
    ctx.say(
      `${SESSIONS} sessions per server, each acting in its organization; ${CONNECTIONS} connections, ${WARMUP_S} s warm-up, ${ROUNDS} rounds of ${SLICE_S} s`,
    );

    const me = await measure(
      ctx.say,
      ALGS.map((alg) => ({
        label: alg,
        url: servers[alg].server.url,
        pid: servers[alg].server.pid,
        requests: tokens[alg].map((t) => ({
          method: 'GET' as const,
          path: '/api/v1/users/me',
          headers: { authorization: `Bearer ${t}` },
        })),
      })),
    );
    const cold = {} as Record<Alg, number>;
    for (const alg of ALGS)
      cold[alg] = await coldVerifyUs(alg, servers[alg].server, tokens[alg][0]!, servers[alg].env.JWT_SECRET!);

    // A custom role on the hot path, on the HS256 server: an admin and a custom-role holder list the
    // same organization's projects.
    const hs = servers.HS256.server;
    const owner = await createOrgOwner(hs, 'roles-owner@bench.test', 'roles-bench');
    await createProject(hs, owner.token, owner.orgId, 'Bench');
    const role = await api(
      hs.url,
      'POST',
      `/api/v1/organizations/${owner.orgId}/roles`,
      { key: 'reader', name: 'Reader', permissions: ['org:read', 'projects:read'] },
      owner.token,
    );
    if (role.status !== 201) throw new Error(`create role: ${role.status} ${JSON.stringify(role.body)}`);
    const joined: Record<'admin' | 'reader', string> = { admin: '', reader: '' };
    for (const r of ['admin', 'reader'] as const) {
      const email = `roles-${r}@bench.test`;
      await createVerifiedUser(hs, email);
      const sent = await api(
        hs.url,
        'POST',
        `/api/v1/organizations/${owner.orgId}/invitations`,
        { email, role: r },
        owner.token,
      );
      if (sent.status !== 201) throw new Error(`invite ${r}: ${sent.status} ${JSON.stringify(sent.body)}`);
      const mail = await hs.takeMail(email);
      const token = decodeURIComponent(/[?&]token=([^\s&]+)/.exec(mail.text)![1]!);
      const signIn = await api<{ accessToken: string }>(hs.url, 'POST', '/api/v1/auth/login', {
        email,
        password: PASSWORD,
      });
      const accepted = await api(hs.url, 'POST', '/api/v1/invitations/accept', { token }, signIn.body.accessToken);
      if (accepted.status !== 200) throw new Error(`accept ${r}: ${accepted.status} ${JSON.stringify(accepted.body)}`);
      joined[r] = signIn.body.accessToken;
    }
    const projects = await measure(
      ctx.say,
      (['admin', 'reader'] as const).map((r) => ({
        label: r === 'admin' ? 'admin' : 'custom role',
        url: hs.url,
        pid: hs.pid,
        requests: [
          {
            method: 'GET' as const,
            path: `/api/v1/organizations/${owner.orgId}/projects`,
            headers: { authorization: `Bearer ${joined[r]}` },
          },
        ],
      })),
    );

    for (const alg of ALGS) await servers[alg].server.stop();
    const [hsMe, esMe, edMe] = me.results as [(typeof me.results)[0], (typeof me.results)[0], (typeof me.results)[0]];
    const [adminP, customP] = projects.results as [(typeof projects.results)[0], (typeof projects.results)[0]];
    const row = (alg: Alg, r: typeof hsMe) =>
      info(
        `GET /users/me, ${alg} (${ctx.database.kind === 'pg' ? 'PostgreSQL' : 'PGlite'})`,
        `${fmt(r.result.okPerSec)} req/s, p99 ${fmtMs(r.result.latency.p99)}, ${fmt(r.cpuUs)} µs CPU/req`,
      );
    return [
      row('HS256', hsMe),
      row('ES256', esMe),
      row('EdDSA', edMe),
      targetRow(
        'ES256 ÷ HS256',
        esMe.result.okPerSec / hsMe.result.okPerSec,
        fmt(esMe.result.okPerSec / hsMe.result.okPerSec, 3),
        { atLeast: 0.9, text: '≥ 0.9' },
      ),
      targetRow(
        'EdDSA ÷ HS256',
        edMe.result.okPerSec / hsMe.result.okPerSec,
        fmt(edMe.result.okPerSec / hsMe.result.okPerSec, 3),
        { atLeast: 0.9, text: '≥ 0.9' },
      ),
      info(
        'CPU per request, HS256 ÷ ES256 / HS256 ÷ EdDSA (the throughput the CPU allows)',
        `${fmt(hsMe.cpuUs / esMe.cpuUs, 3)} / ${fmt(hsMe.cpuUs / edMe.cpuUs, 3)}`,
      ),
      info(
        'first verification of a token (once per instance)',
        `HS256 ${fmt(cold.HS256, 1)} µs, ES256 ${fmt(cold.ES256, 1)} µs, EdDSA ${fmt(cold.EdDSA, 1)} µs`,
      ),
      info(
        'GET …/projects as admin / as a custom role',
        `${fmt(adminP.result.okPerSec)} / ${fmt(customP.result.okPerSec)} req/s, ${fmt(adminP.cpuUs)} / ${fmt(customP.cpuUs)} µs CPU/req`,
      ),
      targetRow(
        'custom role ÷ admin',
        customP.result.okPerSec / adminP.result.okPerSec,
        fmt(customP.result.okPerSec / adminP.result.okPerSec, 3),
        { atLeast: 0.9, text: '≥ 0.9' },
      ),
      foreignCpuRow(Math.max(me.foreign, projects.foreign)),
    ];
  },
};
