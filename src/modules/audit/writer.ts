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
      const keyValues = sql.join(
        [...perKey].map(([id, v]) => sql`(${v.org}, ${id}, ${v.n}::bigint, ${v.last.toISOString()}::timestamptz)`),
        sql`, `,
      );
      await tx.execute(sql`update api_keys as k set request_count = k.request_count + v.n,
        last_used_at = greatest(k.last_used_at, v.at)
        from (values ${keyValues}) as v(org, id, n, at) where k.organization_id = v.org and k.id = v.id`);
      const orgValues = sql.join([...perOrg].map(([org, n]) => sql`(${org}, ${n}::bigint)`), sql`, `);
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
        logger.error({ err }, 'audit batch failed');
        for (const p of batch) p.reject(err);
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
