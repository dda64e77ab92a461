// `npm run db:migrate`: apply the committed migrations to DATABASE_URL (or the embedded database).
import pino from 'pino';
import { loadConfig } from '../config.js';
import { openPglite, openPostgres } from './client.js';
import { runMigrations } from './migrate.js';

const config = loadConfig();
const logger = pino({ level: config.logLevel });
const handle = config.databaseUrl
  ? openPostgres(config.databaseUrl, logger, 2)
  : await openPglite({ dataDir: config.dataDir });
try {
  await runMigrations(handle);
  console.log(
    `Migrations applied (${handle.kind === 'pg' ? 'PostgreSQL' : `embedded database in ${config.dataDir}`}).`,
  );
} finally {
  await handle.close();
}
