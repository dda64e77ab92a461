// Prepared statements for hot paths (measured: twice the throughput of building the query
// each time), made once per database client and reused.
import type { Query, SQL } from 'drizzle-orm';
import { PgDialect, type PgPreparedQuery, type PreparedQueryConfig } from 'drizzle-orm/pg-core';
import type { Db, Tx } from './client.js';

const cache = new WeakMap<Db, Map<string, unknown>>();

export function prepared<T>(db: Db, name: string, build: (db: Db) => T): T {
  let forDb = cache.get(db);
  if (!forDb) cache.set(db, (forDb = new Map()));
  let stmt = forDb.get(name) as T | undefined;
  if (stmt === undefined) {
    stmt = build(db);
    forDb.set(name, stmt);
  }
  return stmt;
}

const dialect = new PgDialect();
const texts = new WeakMap<SQL, Query>();

type Raw = PgPreparedQuery<PreparedQueryConfig & { execute: { rows: Record<string, unknown>[] } }>;

/**
 * Raw SQL with `sql.placeholder`s as a prepared query, on the pool or in a transaction (`tx`). Named,
 * each PostgreSQL connection parses it once and may keep a generic plan (the same name must always
 * carry the same SQL); unnamed (`name` undefined), it is planned for each execution's values.
 */
export function prepareRaw(db: Db | Tx, name: string | undefined, query: SQL): Raw {
  let q = texts.get(query);
  if (!q) texts.set(query, (q = dialect.sqlToQuery(query)));
  return db._.session.prepareQuery(q, undefined, name, false) as unknown as Raw;
}
