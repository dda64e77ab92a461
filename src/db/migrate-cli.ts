// `npm run migrate` (TypeScript at run time) and `npm run migrate:prod` (`node dist/db/migrate-cli.js`
// from a build; `npm run db:migrate` is an alias): apply the committed migrations to DATABASE_URL (or
// the embedded database under DATA_DIR), naming each one applied, or saying that none was to apply.
// The API applies them at every start too; this is for a release step that runs them first.
import pino from 'pino';
import { ConfigError, loadConfig } from '../config.js';
import { DataDirLockedError, openPglite, openPostgres } from './client.js';
import { runMigrations } from './migrate.js';

async function main(): Promise<number> {
  const config = loadConfig();
  const logger = pino({ level: config.logLevel });
  const handle = config.databaseUrl
    ? openPostgres(config.databaseUrl, logger, 2)
    : await openPglite({ dataDir: config.dataDir });
  const where = handle.kind === 'pg' ? 'PostgreSQL' : `the embedded database in ${config.dataDir}`;
  try {
    const applied = await runMigrations(handle);
    if (applied.length === 0) {
      console.log(`No migration to apply: ${where} is up to date.`);
    } else {
      for (const name of applied) console.log(`applied ${name}`);
      console.log(`${applied.length} migration${applied.length === 1 ? '' : 's'} applied to ${where}.`);
    }
    return 0;
  } finally {
    await handle.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConfigError || err instanceof DataDirLockedError) console.error(err.message);
    else console.error(err);
    process.exit(1);
  },
);
