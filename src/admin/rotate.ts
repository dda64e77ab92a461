// rotate-encryption-key: every stored secret (users' TOTP secrets, set up or pending; webhook
// endpoints' signing secrets, the current one and the one kept through a rotation's grace period;
// the private keys that sign access tokens)
// re-encrypted with the first key of ENCRYPTION_KEY, in batches, while the service runs. A value the
// first key opens already is left alone, so the command can be run again (it is idempotent) and a
// run that was interrupted resumes. Each update is guarded by the value it replaces: a secret the
// service changed meanwhile is read again, never overwritten.
import { sql } from 'drizzle-orm';
import type { Infra } from '../infra.js';
import { decrypt, DecryptError, encrypt } from '../lib/secrets.js';
import type { Io } from './users.js';

interface Target {
  label: string;
  table: string;
  keys: string[];
  columns: string[];
}

const TARGETS: Target[] = [
  {
    label: 'two-factor secrets',
    table: 'two_factor',
    keys: ['user_id'],
    columns: ['secret_enc', 'pending_secret_enc'],
  },
  {
    label: 'webhook signing secrets',
    table: 'webhook_endpoints',
    keys: ['organization_id', 'id'],
    columns: ['secret_enc', 'previous_secret_enc'],
  },
  { label: 'access-token signing keys', table: 'signing_keys', keys: ['id'], columns: ['private_key_enc'] },
];

export interface RotationCount {
  rewritten: number;
  current: number;
  /** Ids of rows holding a value no key of ENCRYPTION_KEY opens (left as they are). */
  unreadable: string[];
}

type Row = Record<string, string | null>;
const rowsOf = (result: unknown) => (result as { rows: Row[] }).rows;
const ids = (cols: string[]) =>
  sql.join(
    cols.map((c) => sql.identifier(c)),
    sql`, `,
  );
const tuple = (values: unknown[]) =>
  sql`(${sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  )})`;

/** The columns of `target` the database has (a column added by a later migration may be missing). */
async function existingColumns(deps: Pick<Infra, 'db'>, target: Target): Promise<string[]> {
  const found = rowsOf(
    await deps.db.execute(
      sql`select column_name from information_schema.columns where table_schema = current_schema() and table_name = ${target.table}`,
    ),
  ).map((r) => r.column_name);
  return target.columns.filter((c) => found.includes(c));
}

/** Rewrites one stored value under the first key; the outcome for the count. */
async function rotateValue(
  deps: Pick<Infra, 'config' | 'db'>,
  target: Target,
  key: unknown[],
  column: string,
  value: string,
): Promise<'rewritten' | 'current' | 'unreadable'> {
  const { encryptionKey, encryptionKeys } = deps.config;
  const table = sql.identifier(target.table);
  const col = sql.identifier(column);
  const byKey = sql`${tuple(target.keys.map((k) => sql.identifier(k)))} = ${tuple(key)}`;
  let seen: string | null = value;
  for (let attempt = 0; attempt < 5 && seen !== null; attempt++) {
    try {
      decrypt(encryptionKey, seen);
      // Under the first key already: from the start, or written so by the service meanwhile.
      return 'current';
    } catch (err) {
      if (!(err instanceof DecryptError)) throw err;
    }
    let clear: string;
    try {
      clear = decrypt(encryptionKeys, seen);
    } catch (err) {
      if (err instanceof DecryptError) return 'unreadable';
      throw err;
    }
    const updated = rowsOf(
      await deps.db.execute(
        sql`update ${table} set ${col} = ${encrypt(encryptionKey, clear)} where ${byKey} and ${col} = ${seen} returning 1 as ok`,
      ),
    );
    if (updated.length === 1) return 'rewritten';
    // Changed meanwhile (the service wrote it, or cleared it): read it again.
    const [again] = rowsOf(await deps.db.execute(sql`select ${col} as v from ${table} where ${byKey}`));
    seen = again?.v ?? null;
  }
  return seen === null ? 'current' : 'unreadable';
}

export async function rotateTarget(
  deps: Pick<Infra, 'config' | 'db'>,
  target: Target,
  batchSize: number,
): Promise<RotationCount> {
  const count: RotationCount = { rewritten: 0, current: 0, unreadable: [] };
  const columns = await existingColumns(deps, target);
  const keyCols = ids(target.keys);
  let after: unknown[] | null = null;
  for (;;) {
    const rows: Row[] = rowsOf(
      await deps.db.execute(sql`select ${keyCols}, ${ids(columns)} from ${sql.identifier(target.table)}
        ${after ? sql`where (${keyCols}) > ${tuple(after)}` : sql``} order by ${keyCols} limit ${batchSize}`),
    );
    for (const row of rows) {
      const key = target.keys.map((k) => row[k]);
      for (const column of columns) {
        const value = row[column];
        if (value === null || value === undefined) continue;
        const outcome = await rotateValue(deps, target, key, column, value);
        if (outcome === 'unreadable') count.unreadable.push(`${key.join('/')} (${column})`);
        else count[outcome]++;
      }
    }
    if (rows.length < batchSize) return count;
    const last = rows[rows.length - 1]!;
    after = target.keys.map((k) => last[k]);
  }
}

/** The exit code: 1 when some value no key opens (the old key must stay listed, or those secrets be set anew). */
export async function rotateEncryptionKey(
  deps: Pick<Infra, 'config' | 'db'>,
  io: Io,
  batchSize = 100,
): Promise<number> {
  const keys = deps.config.encryptionKeys.length;
  io.out(`re-encrypting with the first of ${keys} key${keys === 1 ? '' : 's'} of ENCRYPTION_KEY`);
  if (keys === 1)
    io.out(
      'ENCRYPTION_KEY lists one key: to move to a new key, list it first (ENCRYPTION_KEY=new,old) on every instance, then run this again',
    );
  let unreadable = 0;
  for (const target of TARGETS) {
    const c = await rotateTarget(deps, target, batchSize);
    io.out(
      `${target.label}: ${c.rewritten} re-encrypted, ${c.current} already under the first key, ${c.unreadable.length} unreadable`,
    );
    for (const which of c.unreadable) io.out(`  unreadable with every listed key: ${target.table} ${which}`);
    unreadable += c.unreadable.length;
  }
  io.out(
    'backup codes are hashed with the key that made them: keep the old key listed until users have made new ones, or they stop working',
  );
  if (unreadable > 0) io.out(`${unreadable} value(s) no listed key opens: they were left as they are`);
  return unreadable > 0 ? 1 : 0;
}
