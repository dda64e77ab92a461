import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import type { DbHandle } from './client.js';

export const migrationsFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../drizzle');

// Any fixed number; it serializes migrations when several instances start at once on PostgreSQL.
const MIGRATION_LOCK = 7_345_001;

// Drizzle's record of applied migrations: one row per migration, `created_at` its journal's `when`.
const LAST_APPLIED = `select coalesce(max(created_at), 0)::text as last from drizzle.__drizzle_migrations`;
const HAS_TABLE = `select to_regclass('drizzle.__drizzle_migrations') is not null as present`;

/** The migrations of the folder (drizzle/meta/_journal.json), oldest first. */
export function migrationNames(folder = migrationsFolder): Array<{ tag: string; when: number }> {
  const journal = JSON.parse(fs.readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string; when: number }>;
  };
  return journal.entries.map(({ tag, when }) => ({ tag, when }));
}

type Query = (text: string) => Promise<Array<Record<string, unknown>>>;

async function lastApplied(query: Query): Promise<number> {
  const [table] = await query(HAS_TABLE);
  if (!table?.present) return 0;
  const [row] = await query(LAST_APPLIED);
  return Number(row?.last ?? 0);
}

/**
 * Applies the committed migrations not yet applied, and returns their names (`0019_signing_keys`…),
 * oldest first; an empty list when the database was up to date. Drizzle applies every migration newer
 * than the last one recorded, which is what the names are read against. `onPending` hears the names
before they are applied (start-up progress).
 */
export async function runMigrations(handle: DbHandle, onPending?: (names: string[]) => void): Promise<string[]> {
  const pendingAfter = (before: number) => {
    const names = migrationNames()
      .filter((m) => m.when > before)
      .map((m) => m.tag);
    if (names.length > 0) onPending?.(names);
    return names;
  };
  if (handle.kind === 'pglite') {
    const query: Query = async (text) => (await handle.pglite!.query<Record<string, unknown>>(text)).rows;
    const pending = pendingAfter(await lastApplied(query));
    await migratePglite(handle.db as unknown as PgliteDatabase, { migrationsFolder });
    return pending;
  }
  const client = await handle.pool!.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const pending = pendingAfter(await lastApplied(async (text) => (await client.query(text)).rows));
      // On the locked connection itself, so a pool of one cannot deadlock.
      await migratePg(drizzle(client), { migrationsFolder });
      return pending;
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
