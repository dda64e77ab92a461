// `npm run worker`'s own GET /metrics, when WORKER_METRICS_PORT is set (docs/deploy.md#what-to-watch):
// a worker has no API, yet it is the process that delivers, so the delivery outcomes
// (tenantry_webhook_deliveries_total) and its process figures are counted there. Served on HOST with
// the API's METRICS_TOKEN rule and error envelope, beside GET /health; nothing else.
import Fastify, { type FastifyInstance } from 'fastify';
import { registerErrorHandler } from './http/error-handler.js';
import { registerMetrics } from './http/metrics.js';
import type { Infra } from './infra.js';

export async function startWorkerMetrics(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'passwords' | 'checkWaits' | 'metrics'>,
  port: number,
  host: string,
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  registerErrorHandler(app);
  registerMetrics(app, deps);
  app.get('/health', async () => ({ status: 'ok' }));
  try {
    await app.listen({ port, host });
  } catch (err) {
    await app.close();
    throw new Error(
      `Cannot listen on ${host}:${port} for the worker's metrics (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): set WORKER_METRICS_PORT to a free port`,
    );
  }
  return app;
}
