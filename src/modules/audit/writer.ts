// Group commit for the audit entries of API-key requests (DECISIONS §4: one per request, committed
// before the response is sent). A request's entry joins the batch being formed; ONE statement (one
// round trip, its own transaction) inserts the whole batch, adds to each key's request count and
// last use, to the month's API usage and to the list's counters (counters.ts); then every request
// of the batch is released. Under load, batches grow and the write does not cap throughput; idle, a
// batch is one entry and adds no waiting.
import { sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import { newId } from '../../lib/ids.js';
import { lockOrganizations, prepareRaw, upsertCounters } from './counters.js';

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

// The batch is one JSON parameter. Each step waits for the one before it (counters.ts), so rows are
// locked in the order organizations, api_keys, api_usage, audit_log_counters, each sorted.
const COMMIT_BATCH = sql`with v as materialized (
    select v.*, 'api_key'::text as actor_type
    from json_to_recordset(${sql.placeholder('entries')}::json) as v(organization_id text, id text, actor_id text, action text, method text,
      path text, status_code integer, ip_address text, user_agent text, created_at timestamptz)
  ),
  o as (${lockOrganizations}),
  e as (
    insert into audit_logs (organization_id, id, actor_type, actor_id, action, method, path, status_code, ip_address, user_agent, created_at)
    select organization_id, id, actor_type, actor_id, action, method, path, status_code, ip_address, user_agent, created_at from v
    where (select count(*) from o) >= 0
    returning 1
  ),
  kl as (
    select k.organization_id, k.id from api_keys k
    where (k.organization_id, k.id) in (select organization_id, actor_id from v) and (select count(*) from e) >= 0
    order by k.organization_id, k.id
    for no key update
  ),
  k as (
    update api_keys k set request_count = k.request_count + s.n, last_used_at = greatest(k.last_used_at, s.at)
    from (select organization_id, actor_id, count(*) as n, max(created_at) as at from v group by 1, 2) s
    where k.organization_id = s.organization_id and k.id = s.actor_id and (select count(*) from kl) >= 0
    returning 1
  ),
  u as (
    insert into api_usage as a (organization_id, period, requests)
    select organization_id, to_char(created_at at time zone 'UTC', 'YYYY-MM'), count(*) from v
    where (select count(*) from k) >= 0
    group by 1, 2
    order by 1, 2
    on conflict (organization_id, period) do update set requests = a.requests + excluded.requests
    returning 1
  ),
  c as (${upsertCounters('u')} returning 1)
  select (select count(*) from e)::int as entries, (select count(*) from c)::int as counters`;

export function createAuditWriter(db: Db, logger: Logger) {
  let queue: Pending[] = [];
  let flushing: Promise<void> | null = null;
  const statement = prepareRaw(db, 'audit_commit_batch', COMMIT_BATCH);

  async function commit(batch: Pending[]) {
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
    await statement.execute({ entries: JSON.stringify(entries) });
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(batch.length);
      try {
        await commit(batch);
        for (const p of batch) p.resolve();
      } catch (err) {
        if (batch.length === 1) {
          logger.error({ err }, 'audit entry could not be committed');
          batch[0]!.reject(err);
          continue;
        }
        // One entry the database refuses must not fail the requests batched with it: the batch was
        // rolled back as a whole, so each entry is committed on its own and only the bad ones fail.
        logger.warn({ err }, 'audit batch failed; committing its entries one by one');
        for (const p of batch) {
          try {
            await commit([p]);
            p.resolve();
          } catch (one) {
            logger.error({ err: one }, 'audit entry could not be committed');
            p.reject(one);
          }
        }
      }
    }
  }

  function kick() {
    if (flushing || queue.length === 0) return;
    flushing = drain().finally(() => {
      flushing = null;
      // Entries that arrived after the last loop check start the next round.
      kick();
    });
  }

  return {
    /** Resolves once the entry is committed; rejects if it could not be. */
    write(entry: KeyAuditEntry): Promise<void> {
      const done = new Promise<void>((resolve, reject) => queue.push({ entry, resolve, reject }));
      kick();
      return done;
    },
    async close(): Promise<void> {
      while (flushing) await flushing;
    },
  };
}

export type AuditWriter = ReturnType<typeof createAuditWriter>;
