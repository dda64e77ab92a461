import type { Deps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import type { RequestContext } from '../../http/authorize.js';
import { newId } from '../../lib/ids.js';
import { auditLogs } from './tables.js';

/** Who changed what where: an OrgAccess, or the like for a user joining by invitation. */
export interface AuditSubject {
  organizationId: string;
  actor: { id: string };
  request: RequestContext;
}

/** The audit entry of a user's change, written in the change's own transaction. */
export async function auditChange(deps: Deps, tx: Tx, access: AuditSubject, statusCode: number): Promise<void> {
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
}
