// Start-up shared by the API (main.ts), the worker (worker.ts) and the admin commands (admin.ts):
// configuration, then the backing services waited for (startup.ts), then dependencies (database,
// migrations, Redis). A bad variable, a service that never answers or a locked embedded database
// ends the process with a one-line message instead of a stack trace.
import { ConfigError, loadConfig } from './config.js';
import { DataDirLockedError } from './db/client.js';
import { createInfra, createLogger } from './infra.js';
import { StartupError, waitForServices } from './startup.js';

export interface BootOptions {
  /** A separate process that must share the API's database: the embedded one is refused. */
  needsDatabaseUrl?: string;
  /** The log level when LOG_LEVEL is unset (the admin commands keep their output clean). */
  defaultLogLevel?: string;
}

export async function boot(options: BootOptions = {}) {
  try {
    const config = loadConfig(undefined, { logLevel: options.defaultLogLevel });
    if (options.needsDatabaseUrl && !config.databaseUrl) throw new StartupError(options.needsDatabaseUrl);
    const logger = createLogger(config);
    await waitForServices(config, logger);
    const deps = await createInfra(config, { logger });
    return { config, logger, deps };
  } catch (err) {
    if (err instanceof ConfigError || err instanceof DataDirLockedError || err instanceof StartupError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}
