// Prepared statements for hot paths (STACK.md pitfall 8: twice the throughput of building the query
// each time), made once per database client and reused.
import type { Db } from './client.js';

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
