// Group commit for the audit entries of API-key requests (docs/api.md#audit-log: one per request, committed
// before the response is sent). A request's entry joins the batch being formed; ONE statement (one
// round trip, its own transaction) inserts the whole batch and adds to the list's counters
// (counters.ts), from which a key's request count and the month's API usage are also read; then
// every request of the batch is released. Up to SLOTS batches are in flight at once, each adding to
// its own counter shard (as does each instance), so no batch waits for another's locks. Under load,
// batches grow and the write does not cap throughput; idle, a batch is one entry and adds no waiting.
import { randomInt } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import { newId } from '../../lib/ids.js';
import { prepareRaw } from '../../db/prepared.js';
import { COUNTER_SHARDS, insertEntries, upsertCounters } from './counters.js';

export interface KeyAuditEntry {
  organizationId: string;
  keyId: string;
  action: string;
  method: string;
  path: string;
  statusCode: number;
  ipAddress: string | null;
  userAgent: string | null;
  createdAt: Date;
}

interface Pending {
  entry: KeyAuditEntry;
  resolve: () => void;
  reject: (err: unknown) => void;
}

const MAX_BATCH = 500;
// Batches in flight at once. Measured on 2 cores (npm run bench -- keys), one is best: the machine is
// CPU-bound there, and a smaller batch costs more per entry than overlapping commits saves. With the
// database on its own cores, more slots shorten a request's wait to a single commit.
const SLOTS = 1;

// The batch is one JSON parameter. Each step waits for the one before it (counters.ts), so rows are
// locked in the order organizations, audit_log_counters, each sorted.
const COMMIT_BATCH = sql`with v as materialized (
    select v.*, 'api_key'::text as actor_type
    from json_to_recordset(${sql.placeholder('entries')}::json) as v(organization_id text, id text, actor_id text, action text, method text,
      path text, status_code integer, ip_address text, user_agent text, created_at timestamptz)
  ),
  ${insertEntries},
  c as (${upsertCounters('e')} returning 1)
  select (select count(*) from e)::int as entries, (select count(*) from c)::int as counters`;

export function createAuditWriter(db: Db, logger: Logger) {
  let queue: Pending[] = [];
  const inFlight = new Set<Promise<void>>();
  // This instance's slots use shards base, base + 1, …: other instances most likely use others.
  const base = randomInt(COUNTER_SHARDS);
  const freeSlots = Array.from({ length: SLOTS }, (_, i) => (base + i) % COUNTER_SHARDS);
  const statement = prepareRaw(db, 'audit_commit_batch', COMMIT_BATCH);

  async function commit(batch: Pending[], shard: number) {
    const entries = batch.map(({ entry }) => ({
      organization_id: entry.organizationId,
      id: newId('aud', entry.createdAt.getTime()),
      actor_id: entry.keyId,
      action: entry.action,
      method: entry.method,
      path: entry.path,
      status_code: entry.statusCode,
      ip_address: entry.ipAddress,
      user_agent: entry.userAgent,
      created_at: entry.createdAt.toISOString(),
    }));
    await statement.execute({ entries: JSON.stringify(entries), shard });
  }

  /**
   * Commits a batch and returns what settles its requests, which the caller applies once the slot is
   * free again: the next batch then goes to the database before this one's responses are written,
   * so the database commits it while this process sends them.
   */
  async function run(batch: Pending[], shard: number): Promise<() => void> {
    try {
      await commit(batch, shard);
      return () => {
        for (const p of batch) p.resolve();
      };
    } catch (err) {
      if (batch.length === 1) {
        logger.error({ err }, 'audit entry could not be committed');
        return () => batch[0]!.reject(err);
      }
      // One entry the database refuses must not fail the requests batched with it: the batch was
      // rolled back as a whole, so each entry is committed on its own and only the bad ones fail.
      logger.warn({ err }, 'audit batch failed; committing its entries one by one');
      for (const p of batch) {
        try {
          await commit([p], shard);
          p.resolve();
        } catch (one) {
          logger.error({ err: one }, 'audit entry could not be committed');
          p.reject(one);
        }
      }
      return () => {};
    }
  }

  function kick() {
    while (queue.length > 0 && freeSlots.length > 0) {
      const shard = freeSlots.pop()!;
      const batch = queue.length <= MAX_BATCH ? queue : queue.slice(0, MAX_BATCH);
      queue = queue.length <= MAX_BATCH ? [] : queue.slice(MAX_BATCH);
      const done: Promise<void> = run(batch, shard).then((settle) => {
        inFlight.delete(done);
        freeSlots.push(shard);
        // Entries that arrived meanwhile make the next batch.
        kick();
        settle();
      });
      inFlight.add(done);
    }
  }

  return {
    /** Resolves once the entry is committed; rejects if it could not be. */
    write(entry: KeyAuditEntry): Promise<void> {
      const done = new Promise<void>((resolve, reject) => queue.push({ entry, resolve, reject }));
      kick();
      return done;
    },
    async close(): Promise<void> {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}

export type AuditWriter = ReturnType<typeof createAuditWriter>;
