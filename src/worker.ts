// `npm run worker`: the webhook delivery loop alone (run the API with WEBHOOK_WORKER=off).
// Any number of workers can run against one PostgreSQL database.
import { boot } from './boot.js';
import { createDeliveryWorker } from './modules/webhooks/worker/index.js';
import { createRetentionJob } from './jobs/retention.js';
import { startWorkerMetrics } from './worker-metrics.js';

async function main() {
  // The embedded database belongs to one process: a worker beside the API would never see its deliveries.
  const { config, logger, deps } = await boot({
    needsDatabaseUrl:
      'npm run worker needs DATABASE_URL (PostgreSQL): the embedded database belongs to the API process, whose deliveries a separate worker would never see; keep WEBHOOK_WORKER=inline without PostgreSQL.',
  });
  const worker = createDeliveryWorker(deps);
  await worker.start();
  const retention = createRetentionJob(deps);
  retention.start();
  const metrics =
    config.workerMetricsPort === null ? null : await startWorkerMetrics(deps, config.workerMetricsPort, config.host);
  const at = metrics
    ? ` (metrics on http://${config.host}:${(metrics.server.address() as { port: number }).port}/metrics)`
    : '';
  logger.info({ workerId: worker.workerId }, `webhook worker started${at}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'webhook worker stopping: finishing deliveries in flight');
    await worker.stop();
    await retention.stop();
    // Last, so a scrape while the deliveries in flight finish still answers.
    await metrics?.close();
    await deps.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
