// One Db type over two drivers: PGlite (embedded, persisted in DATA_DIR) when DATABASE_URL is unset,
// a node-postgres pool otherwise. Services only ever see `Db` and `Tx`.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import type { Logger } from 'pino';
import * as schema from './schema.js';

type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

export interface DbHandle {
  db: Db;
  kind: 'pglite' | 'pg';
  /** The pool when on PostgreSQL (LISTEN/NOTIFY, health checks). */
  pool: pg.Pool | null;
  pglite: PGlite | null;
  /** The connection string on PostgreSQL (a dedicated LISTEN connection needs it). */
  url: string | null;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class DataDirLockedError extends Error {}

/**
 * PGlite has no lock on its data directory, and a second process on it loses writes silently
 * (two writers corrupt it), so the first opener takes an exclusive lock file and others are refused.
 */
function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'tenantry.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return () => {
        try {
          if (fs.readFileSync(file, 'utf8') === String(process.pid)) fs.unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(file, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DataDirLockedError(
          `The embedded database in ${dir} is already in use by process ${pid}. ` +
            'Stop that process, or set DATA_DIR to another directory (or DATABASE_URL to use PostgreSQL).',
        );
      }
      // A lock left by a process that is gone: take it over.
      fs.rmSync(file, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not lock ${file}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface OpenPgliteOptions {
  dataDir?: string;
  /** A dump (PGlite dumpDataDir) to start from: tests clone a migrated template this way. */
  loadDataDir?: Blob;
}

export async function openPglite(opts: OpenPgliteOptions): Promise<DbHandle> {
  const unlock = opts.dataDir ? lockDataDir(opts.dataDir) : () => {};
  try {
    const dir = opts.dataDir ? path.join(opts.dataDir, 'pglite') : undefined;
    const client = await PGlite.create({
      ...(dir ? { dataDir: dir } : {}),
      ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}),
    });
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    return {
      db,
      kind: 'pglite',
      pool: null,
      pglite: client,
      url: null,
      ping: async () => {
        await client.query('select 1');
      },
      close: async () => {
        try {
          await client.close();
        } finally {
          unlock();
        }
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}

export function openPostgres(url: string, logger: Logger, max = 10): DbHandle {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
  // An idle client losing its server (restart, failover) emits here; unhandled it would kill the
  // process. The pool drops the client and reconnects on the next query.
  pool.on('error', (err) =>
    logger.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'database connection lost'),
  );
  // A client checked out of the pool (inside a transaction, between two statements) emits on itself,
  // where the pool's listener is not attached: without this listener that also kills the process. The
  // statement that follows fails (503) and the pool discards the broken client on release.
  pool.on('connect', (client) => {
    client.on('error', (err) =>
      logger.warn(
        { err: { message: err.message, code: (err as { code?: string }).code } },
        'database connection lost (client in use)',
      ),
    );
  });
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return {
    db,
    kind: 'pg',
    pool,
    pglite: null,
    url,
    ping: async () => {
      await pool.query('select 1');
    },
    close: () => pool.end(),
  };
}

/** `err.cause.code` for driver errors arriving wrapped by drizzle. */
export function pgErrorCode(err: unknown): string | undefined {
  let e = err as { code?: unknown; cause?: unknown } | undefined;
  for (let i = 0; e && i < 4; i++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

export const isUniqueViolation = (err: unknown) => pgErrorCode(err) === '23505';
export const isForeignKeyViolation = (err: unknown) => pgErrorCode(err) === '23503';
