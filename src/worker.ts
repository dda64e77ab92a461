// `npm run worker`: the webhook delivery loop alone (run the API with WEBHOOK_WORKER=off).
// Any number of workers can run against one PostgreSQL database.
import { boot } from './boot.js';
import { createDeliveryWorker } from './modules/webhooks/worker.js';

async function main() {
  const { logger, deps } = await boot();
  const worker = createDeliveryWorker(deps);
  await worker.start();
  logger.info({ workerId: worker.workerId }, 'webhook worker started');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'webhook worker stopping: finishing deliveries in flight');
    await worker.stop();
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
