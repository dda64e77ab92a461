// `npm run worker`: the webhook delivery loop alone (run the API with WEBHOOK_WORKER=off).
// Any number of workers can run against one PostgreSQL database.
import { ConfigError, loadConfig } from './config.js';
import { createDeps, createLogger } from './deps.js';
import { createDeliveryWorker } from './modules/webhooks/worker.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config);
  const deps = await createDeps(config, { logger });
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
