import { randomInt } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Clock } from '../../lib/clock.js';
import type { Tx } from '../../db/client.js';
import type { RequestContext } from '../tenancy.js';
import { newId } from '../../lib/ids.js';
import { prepareRaw } from '../../db/prepared.js';
import { COUNTER_SHARDS, insertEntries, upsertCounters } from './counters.js';

/** Who changed what where: an OrgAccess, or the like for a user joining by invitation. */
export interface AuditSubject {
  organizationId: string;
  actor: { type: 'user' | 'api_key'; id: string };
  request: RequestContext;
}

// One statement: the entry and its counters (counters.ts, for the lock order: the organization,
// then the counter rows, after whatever the business transaction already holds).
const p = (name: string) => sql.placeholder(name);
const INSERT_CHANGE = sql`with v as materialized (
    select ${p('organizationId')}::text as organization_id, ${p('id')}::text as id, 'user'::text as actor_type, ${p('actorId')}::text as actor_id,
      ${p('action')}::text as action, ${p('method')}::text as method, ${p('path')}::text as path, ${p('statusCode')}::integer as status_code,
      ${p('ipAddress')}::text as ip_address, ${p('userAgent')}::text as user_agent, ${p('createdAt')}::timestamptz as created_at
  ),
  ${insertEntries}
  ${upsertCounters('e')}`;

/**
 * The audit entry of a user's change, written in the change's own transaction, with the status the
 * route answers on success (the change is only committed if it succeeds).
 */
export async function auditChange(deps: { clock: Clock }, tx: Tx, access: AuditSubject): Promise<void> {
  // An API key's requests are all audited by the request hook (audit/writer.ts), changes included.
  if (access.actor.type === 'api_key') return;
  const now = deps.clock.now();
  const r = access.request;
  await prepareRaw(tx, 'audit_change', INSERT_CHANGE).execute({
    organizationId: access.organizationId,
    id: newId('aud', now.getTime()),
    actorId: access.actor.id,
    action: `${r.method} ${r.route}`,
    method: r.method,
    path: r.path,
    statusCode: r.status,
    ipAddress: r.ipAddress,
    userAgent: r.userAgent,
    createdAt: now.toISOString(),
    // Any shard: the transaction holds its counter rows until it commits; another writer most
    // likely adds to another shard meanwhile.
    shard: randomInt(COUNTER_SHARDS),
  });
}
