// The one way a write path opens a transaction: `work` gets the transaction and `afterCommit`, where
// it declares, next to the write, what must happen once the write is durable (a cache's version moved
// on, so every instance loads the value again). The tasks run in order after the commit, never after
// a rollback, and before the caller sees the result, so the caller's own next read is fresh.
import type { Db, Tx } from './client.js';

export type AfterCommit = (task: () => Promise<void>) => void;

export async function transaction<T>(db: Db, work: (tx: Tx, afterCommit: AfterCommit) => Promise<T>): Promise<T> {
  const tasks: Array<() => Promise<void>> = [];
  const result = await db.transaction((tx) => work(tx, (task) => void tasks.push(task)));
  for (const task of tasks) await task();
  return result;
}

/** A single-statement write (no transaction needed) and what follows its commit. */
export async function write<T>(statement: Promise<T>, ...after: Array<() => Promise<void>>): Promise<T> {
  const result = await statement;
  for (const task of after) await task();
  return result;
}
