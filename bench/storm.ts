// 3. Login storm, on PostgreSQL only (PGlite serializes every query, which would measure PGlite).
// While 50 connections log in as fast as they can (closed loop, then the ones in flight are awaited),
// a separate low-rate client (10 connections,
// 100 req/s in all) reads GET /users/me as another user: its p99 says whether Argon2id work starves
// everyone else. The server's RSS is sampled every 100 ms from /proc (the child reports it itself
// where there is no /proc). Baseline, same run: the same reader on the idle server, and its RSS.
import {
  assertAllOk,
  type Benchmark,
  closedLoop,
  createVerifiedUser,
  fmt,
  fmtMiB,
  fmtMs,
  foreignCpu,
  foreignCpuRow,
  info,
  load,
  login,
  MiB,
  postgresBackendPids,
  sampleRss,
  sleep,
  startAppServer,
  targetRow,
} from './lib.js';
import { loginRequest } from './login.js';

const STORM_CONNECTIONS = 50;
const STORM_S = 10;
const READER_CONNECTIONS = 10;
const READER_RATE = 100;
const IDLE_S = 3;
const STORM_USERS = 4;

export const stormBench: Benchmark = {
  name: 'storm',
  title: 'Login storm: /users/me p99 and peak RSS while 50 connections log in',
  async run(ctx) {
    const pgServer = await ctx.postgres();
    if ('error' in pgServer) {
      return [
        { metric: 'login storm', value: `skipped: PostgreSQL not reachable (${pgServer.error})`, status: 'SKIP' },
      ];
    }
    const { server, postgres } = await startAppServer(ctx, 'storm', { kind: 'pg', adminUrl: pgServer.adminUrl });
    const emails = Array.from({ length: STORM_USERS }, (_, i) => `storm-${i}@bench.test`);
    for (const email of emails) await createVerifiedUser(server, email);
    await createVerifiedUser(server, 'reader@bench.test');
    const token = await login(server, 'reader@bench.test');
    ctx.say(`${STORM_USERS} storm accounts and 1 reader account created through the API`);

    const reader = (duration: number) =>
      load({
        url: `${server.url}/api/v1/users/me`,
        connections: READER_CONNECTIONS,
        overallRate: READER_RATE,
        duration,
        headers: { authorization: `Bearer ${token}` },
      });

    ctx.say(`baseline: reader alone, ${READER_CONNECTIONS} connections at ${READER_RATE} req/s, ${IDLE_S} s`);
    await reader(1);
    let rss = sampleRss(server);
    const idle = await reader(IDLE_S);
    const idleRss = rss.stop();
    assertAllOk('reader (idle)', idle);
    ctx.say(`  p50 ${fmtMs(idle.latency.p50)}, p99 ${fmtMs(idle.latency.p99)}, RSS ${fmtMiB(idleRss.peak)}`);

    ctx.say(
      `storm: ${STORM_CONNECTIONS} connections logging in for ${STORM_S} s; the reader runs from second 1 to ${STORM_S - 1}`,
    );
    rss = sampleRss(server);
    const meter = foreignCpu([server.pid, ...(await postgresBackendPids(postgres!.adminUrl, postgres!.name))]);
    const storm = closedLoop({
      url: server.url,
      connections: STORM_CONNECTIONS,
      seconds: STORM_S,
      request: loginRequest(emails),
    });
    await sleep(1000);
    const during = await reader(STORM_S - 2);
    const stormResult = await storm;
    const stormRss = rss.stop();
    const foreign = meter.stop();
    assertAllOk('reader (during the storm)', during);
    assertAllOk('storm logins', stormResult);
    ctx.say(`  logins: ${fmt(stormResult.okPerSec, 1)}/s, p99 ${fmtMs(stormResult.latency.p99)}`);
    ctx.say(
      `  reader: ${fmt(during.okPerSec)} req/s, p50 ${fmtMs(during.latency.p50)}, p99 ${fmtMs(during.latency.p99)}, max ${fmtMs(during.latency.max)}`,
    );
    ctx.say(`  RSS: peak ${fmtMiB(stormRss.peak)}, mean ${fmtMiB(stormRss.mean)} (${stormRss.count} samples)`);

    await server.stop();
    return [
      info(`storm logins (${STORM_CONNECTIONS} conn, PostgreSQL)`, `${fmt(stormResult.okPerSec, 1)} /s`),
      info('GET /users/me p99, idle server', fmtMs(idle.latency.p99)),
      targetRow(
        'GET /users/me p99 during storm',
        during.latency.p99,
        `${fmtMs(during.latency.p99)} (${fmt(during.latency.p99 / idle.latency.p99, 1)}× idle)`,
        {
          below: 50,
          text: '< 50 ms',
        },
      ),
      info('server RSS, idle', fmtMiB(idleRss.peak)),
      targetRow('server peak RSS during storm', stormRss.peak, fmtMiB(stormRss.peak), {
        below: 512 * MiB,
        text: '< 512 MiB',
      }),
      foreignCpuRow(foreign),
    ];
  },
};
