// Group commit for the audit entries of API-key requests (DECISIONS §4: one per request, committed
// before the response is sent). A request's entry joins the batch being formed; one transaction
// inserts the whole batch, adds to each key's request count and last use, and bumps the per-org
// totals; then every request of the batch is released. Under load, batches grow and the write
// does not cap throughput; idle, a batch is one entry and adds no waiting.
import { sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../../db/client.js';
import { newId } from '../../lib/ids.js';
import { auditLogs } from './tables.js';

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

const byId = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

export function createAuditWriter(db: Db, logger: Logger) {
  let queue: Pending[] = [];
  let flushing: Promise<void> | null = null;

  async function commit(batch: Pending[]) {
    const rows = batch.map(({ entry }) => ({
      organizationId: entry.organizationId,
      id: newId('aud', entry.createdAt.getTime()),
      actorType: 'api_key' as const,
      actorId: entry.keyId,
      action: entry.action,
      method: entry.method,
      path: entry.path,
      statusCode: entry.statusCode,
      ipAddress: entry.ipAddress,
      userAgent: entry.userAgent,
      createdAt: entry.createdAt,
    }));
    const perKey = new Map<string, { org: string; n: number; last: Date }>();
    const perOrg = new Map<string, number>();
    for (const { entry } of batch) {
      const k = perKey.get(entry.keyId);
      if (k) {
        k.n++;
        if (entry.createdAt > k.last) k.last = entry.createdAt;
      } else perKey.set(entry.keyId, { org: entry.organizationId, n: 1, last: entry.createdAt });
      perOrg.set(entry.organizationId, (perOrg.get(entry.organizationId) ?? 0) + 1);
    }
    await db.transaction(async (tx) => {
      await tx.insert(auditLogs).values(rows);
      // Rows are touched in one order (by id) in every batch on every instance, so two concurrent
      // batches wait for each other instead of deadlocking.
      const keyValues = sql.join(
        [...perKey].sort(byId).map(([id, v]) => sql`(${v.org}, ${id}, ${v.n}::bigint, ${v.last.toISOString()}::timestamptz)`),
        sql`, `,
      );
      await tx.execute(sql`update api_keys as k set request_count = k.request_count + v.n,
        last_used_at = greatest(k.last_used_at, v.at)
        from (values ${keyValues}) as v(org, id, n, at) where k.organization_id = v.org and k.id = v.id`);
      // The month's API usage (the apiRequests quota), per organization and period.
      const perPeriod = new Map<string, { org: string; period: string; n: number }>();
      for (const { entry } of batch) {
        const period = entry.createdAt.toISOString().slice(0, 7);
        const k = `${entry.organizationId}|${period}`;
        const v = perPeriod.get(k);
        if (v) v.n++;
        else perPeriod.set(k, { org: entry.organizationId, period, n: 1 });
      }
      const usageValues = sql.join([...perPeriod].sort(byId).map(([, v]) => sql`(${v.org}, ${v.period}, ${v.n}::bigint)`), sql`, `);
      await tx.execute(sql`insert into api_usage (organization_id, period, requests) values ${usageValues}
        on conflict (organization_id, period) do update set requests = api_usage.requests + excluded.requests`);
      const orgValues = sql.join([...perOrg].sort(byId).map(([org, n]) => sql`(${org}, ${n}::bigint)`), sql`, `);
      await tx.execute(sql`insert into audit_log_counts (organization_id, total) values ${orgValues}
        on conflict (organization_id) do update set total = audit_log_counts.total + excluded.total`);
    });
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
