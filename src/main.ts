// config → deps → migrate → app → listen; graceful close on SIGTERM/SIGINT.
import type { AddressInfo } from 'node:net';
import { buildApp } from './app.js';
import { boot } from './boot.js';
import { createDeliveryWorker } from './modules/webhooks/worker/index.js';
import { createRetentionJob } from './jobs/retention.js';
import { ensureWebBuild } from './web-build.js';

/**
 * The address to open in a browser: `localhost` for a loopback or any-address listener, since
 * passkeys need the relying party id `localhost` (127.0.0.1 is refused by browsers).
 */
function browserUrl(host: string, port: number): string {
  const local = ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost'].includes(host);
  return `http://${local ? 'localhost' : host.includes(':') ? `[${host}]` : host}:${port}`;
}

async function main() {
  const { config, logger, deps } = await boot();
  // The API's own warning (the worker and the admin commands serve no checkout page).
  if (deps.payments.kind === 'test' && config.env === 'production') {
    logger.warn(
      'BILLING_PROVIDER=test: the built-in test checkout is served, and anyone with a checkout link can upgrade an organization without payment',
    );
  }
  // The pages this process serves at / (web/dist): built first on a fresh clone or after a change.
  await ensureWebBuild(logger);
  const app = await buildApp(deps);
  try {
    await app.listen({
      port: config.port,
      host: config.host,
      // At a terminal, the one address to open is the start line's (localhost); JSON keeps Fastify's.
      ...(config.logFormat === 'pretty'
        ? { listenTextResolver: (address: string) => `listening on ${address.replace(/^https?:\/\//, '')}` }
        : {}),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw err;
    const why =
      code === 'EADDRINUSE'
        ? 'the port is already in use'
        : code === 'EACCES'
          ? 'permission denied'
          : 'no such address here';
    console.error(`Cannot listen on ${config.host}:${config.port}: ${why}. Set PORT (and HOST) to a free address.`);
    // Release the embedded database's lock and connections before leaving.
    await app.close().catch(() => {});
    await deps.close().catch(() => {});
    process.exit(1);
  }
  const worker = config.webhook.worker === 'inline' ? createDeliveryWorker(deps) : null;
  await worker?.start();
  const retention = createRetentionJob(deps);
  retention.start();
  logger.info(
    {
      database: deps.dbHandle.kind === 'pg' ? 'postgresql' : `embedded (${config.dataDir})`,
      redis: Boolean(deps.redis),
      webhookWorker: config.webhook.worker,
    },
    `Tenantry API on ${browserUrl(config.host, (app.server.address() as AddressInfo).port)} (docs at /docs); web app at ${config.appOrigin}`,
  );

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // Long enough for a webhook attempt in flight to finish (its own timeout) before giving up.
    const force = setTimeout(
      () => {
        logger.error('shutdown took too long; exiting');
        process.exit(1);
      },
      Math.max(25_000, config.webhook.timeoutMs + 5_000),
    );
    force.unref();
    try {
      await app.close();
      await worker?.stop();
      await retention.stop();
      await deps.close();
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
