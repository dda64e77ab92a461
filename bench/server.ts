// Child-process entry of the benchmarks: starts one server on 127.0.0.1 with an ephemeral port and
// reports it. bench/lib.ts forks it with the environment to use (the config is read from it exactly
// as src/main.ts reads it) and talks to it over the IPC channel:
//   child → parent  { type: 'ready', port }  { type: 'mail', mail }  { type: 'rss', rss }
//   parent → child  { type: 'stop' }  { type: 'rss' }  { type: 'worker-start' } (→ { type: 'worker-started' })
// BENCH_SERVER_MODE=app (default) is the real Tenantry app (config → deps with migrations → app →
// listen), with a mailer that hands each mail to the parent so accounts are verified through the API.
// BENCH_SERVER_MODE=bare is a bare Fastify 5 with one route returning a small JSON object: the
// baseline of what this machine can serve, started the same way.
// With BENCH_BARE_DATABASE_URL, the bare server also serves GET /row/:id: one prepared (named)
// primary-key select of an organization through a pg pool sized like the app's (the keys baseline).
// In app mode the webhook delivery worker (src/modules/webhooks/worker/, as src/main.ts runs it
// inline) starts with BENCH_WEBHOOK_WORKER=1, or later on { type: 'worker-start' }.
// Run by hand: `BENCH_SERVER_MODE=bare npx tsx bench/server.ts` prints the port and serves until ^C.
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createInfra, createLogger, type Infra } from '../src/infra.js';
import { createDeliveryWorker, type DeliveryWorker } from '../src/modules/webhooks/worker/index.js';
import type { Mail, MailTransport } from '../src/providers/mail/mailer.js';

type ToParent =
  | { type: 'ready'; port: number }
  | { type: 'mail'; mail: Pick<Mail, 'to' | 'subject' | 'text'> }
  | { type: 'rss'; rss: number }
  | { type: 'worker-started' };
type FromParent = { type: 'stop' } | { type: 'rss' } | { type: 'worker-start' };

const send = (msg: ToParent) => {
  if (process.send && process.connected) process.send(msg);
};

const mode = process.env.BENCH_SERVER_MODE ?? 'app';
let app: FastifyInstance;
let deps: Infra | null = null;
let worker: DeliveryWorker | null = null;
let barePool: pg.Pool | null = null;

if (mode === 'bare') {
  app = Fastify();
  app.get('/hello', async () => ({ hello: 'world' }));
  if (process.env.BENCH_BARE_DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: process.env.BENCH_BARE_DATABASE_URL, max: 10 });
    barePool = pool;
    app.get<{ Params: { id: string } }>('/row/:id', async (req, reply) => {
      const { rows } = await pool.query({
        name: 'bench_org_by_pk',
        text: 'select id, name, slug, plan, created_at from organizations where id = $1',
        values: [req.params.id],
      });
      if (rows.length === 0) return reply.status(404).send({ error: 'not found' });
      return rows[0];
    });
  }
} else if (mode === 'app') {
  const config = loadConfig();
  const mailer: MailTransport = {
    async send(mail) {
      send({ type: 'mail', mail: { to: mail.to, subject: mail.subject, text: mail.text } });
    },
    async close() {},
  };
  deps = await createInfra(config, { logger: createLogger(config), mailer });
  app = await buildApp(deps);
  if (process.env.BENCH_WEBHOOK_WORKER === '1') {
    worker = createDeliveryWorker(deps);
    await worker.start();
  }
} else {
  console.error(`bench/server.ts: unknown BENCH_SERVER_MODE "${mode}" (app or bare)`);
  process.exit(2);
}

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
console.log(`bench server (${mode}) pid ${process.pid} listening on http://127.0.0.1:${port}`);
send({ type: 'ready', port });

let stopping = false;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  try {
    await app.close();
    await worker?.stop();
    await deps?.close();
    await barePool?.end();
  } catch (err) {
    console.error('bench server: error while stopping', err);
    code = 1;
  }
  process.exit(code);
}

process.on('message', (msg: FromParent) => {
  if (msg.type === 'stop') void stop(0);
  else if (msg.type === 'rss') send({ type: 'rss', rss: process.memoryUsage.rss() });
  else if (msg.type === 'worker-start' && deps && !worker) {
    worker = createDeliveryWorker(deps);
    void worker.start().then(() => send({ type: 'worker-started' }));
  }
});
// The parent went away (crashed or killed): do not outlive it.
process.on('disconnect', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => void stop(0));
