import { sql } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import type { RequestContext } from '../../http/authorize.js';
import { newId } from '../../lib/ids.js';
import { auditLogs } from './tables.js';

/** Who changed what where: an OrgAccess, or the like for a user joining by invitation. */
export interface AuditSubject {
  organizationId: string;
  actor: { type: 'user' | 'api_key'; id: string };
  request: RequestContext;
}

/** The audit entry of a user's change, written in the change's own transaction. */
export async function auditChange(deps: Deps, tx: Tx, access: AuditSubject, statusCode: number): Promise<void> {
  // An API key's requests are all audited by the request hook (audit/writer.ts), changes included.
  if (access.actor.type === 'api_key') return;
  const now = deps.clock.now();
  const r = access.request;
  await tx.insert(auditLogs).values({
    organizationId: access.organizationId,
    id: newId('aud', now.getTime()),
    actorType: 'user',
    actorId: access.actor.id,
    action: `${r.method} ${r.route}`,
    method: r.method,
    path: r.path,
    statusCode,
    ipAddress: r.ipAddress,
    userAgent: r.userAgent,
    createdAt: now,
  });
  await tx.execute(sql`insert into audit_log_counts (organization_id, total) values (${access.organizationId}, 1)
    on conflict (organization_id) do update set total = audit_log_counts.total + 1`);
}
