// Start-up shared by the API (main.ts) and the worker (worker.ts): configuration, then dependencies
// (database, migrations, Redis). A bad variable or a locked embedded database ends the process with
// a one-line message instead of a stack trace.
import { ConfigError, loadConfig } from './config.js';
import { DataDirLockedError } from './db/client.js';
import { createDeps, createLogger } from './deps.js';

export async function boot() {
  try {
    const config = loadConfig();
    const logger = createLogger(config);
    const deps = await createDeps(config, { logger });
    return { config, logger, deps };
  } catch (err) {
    if (err instanceof ConfigError || err instanceof DataDirLockedError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}
