// The shared set-up of the audit log tests (audit-log-*.test.ts): an app on its own database, an owner
// and a member of two organizations on the enterprise plan, keys, and the reads of entries, usage and
// counters.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';

export let t: TestApp;
export let owner: Awaited<ReturnType<typeof signedInUser>>;
export let member: Awaited<ReturnType<typeof signedInUser>>;
export let orgId: string;
export let otherOrgId: string;

export async function createOrg(name: string) {
  const res = await t.request({ method: 'POST', url: '/api/v1/organizations', headers: owner.auth, payload: { name, slug: `${name}-${Date.now().toString(36)}` } });
  expect(res.statusCode, res.body).toBe(201);
  const id = json(res).id as string;
  await t.deps.db.execute(sql`update organizations set plan = 'enterprise' where id = ${id}`);
  return id;
}

export async function createKey(scopes: string[], org = orgId) {
  const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${org}/api-keys`, headers: owner.auth, payload: { name: 'audited', scopes } });
  expect(res.statusCode, res.body).toBe(201);
  return { id: json(res).apiKey.id as string, plain: json(res).plainKey as string };
}

export interface Entry {
  id: string;
  organizationId: string;
  actorType: string;
  actorId: string;
  action: string;
  method: string;
  path: string;
  statusCode: number;
  ipAddress: string | null;
  userAgent: string | null;
  createdAt: string;
}

export async function entriesOf(keyId: string): Promise<Entry[]> {
  const rows = await queryRows<Record<string, unknown>>(
    t,
    sql`select id, organization_id, actor_type, actor_id, action, method, path, status_code, ip_address, user_agent, created_at
        from audit_logs where actor_id = ${keyId} order by created_at, id`,
  );
  return rows.map((r) => ({
    id: r.id as string,
    organizationId: r.organization_id as string,
    actorType: r.actor_type as string,
    actorId: r.actor_id as string,
    action: r.action as string,
    method: r.method as string,
    path: r.path as string,
    statusCode: Number(r.status_code),
    ipAddress: r.ip_address as string | null,
    userAgent: r.user_agent as string | null,
    createdAt: new Date(r.created_at as string).toISOString(),
  }));
}

export const usageOf = async (keyId: string) => json(await t.request({ method: 'GET', url: `/api/v1/api-keys/${keyId}/usage`, headers: owner.auth })).usage.requests as number;
export const listLogs = (query: string, headers: Record<string, string> = owner.auth, org = orgId) =>
  t.request({ method: 'GET', url: `/api/v1/organizations/${org}/audit-logs${query ? `?${query}` : ''}`, headers });

/** The counters of `org` recomputed from its entries, against the table: the rows that differ. */
export async function counterDrift(org: string) {
  return queryRows(
    t,
    sql`with expected as (
          select a.organization_id, g.actor_type, g.actor_id, g.action, (a.created_at at time zone 'UTC')::date as day, count(*) as total
          from audit_logs a
          cross join lateral (values ('', '', ''), (a.actor_type, '', ''), (a.actor_type, a.actor_id, ''), ('', '', a.action),
            (a.actor_type, '', a.action), (a.actor_type, a.actor_id, a.action)) as g(actor_type, actor_id, action)
          where a.organization_id = ${org}
          group by 1, 2, 3, 4, 5
        )
        select coalesce(e.actor_type, c.actor_type) as actor_type, coalesce(e.actor_id, c.actor_id) as actor_id,
          coalesce(e.action, c.action) as action, coalesce(e.day, c.day)::text as day, e.total::int as expected, c.total::int as actual
        from expected e
        full join (select organization_id, actor_type, actor_id, action, day, sum(total) as total from audit_log_counters
          where organization_id = ${org} group by 1, 2, 3, 4, 5) c using (organization_id, actor_type, actor_id, action, day)
        where e.total is distinct from c.total`,
  );
}

/** The app of the file and its hooks: call once at the top of each test file. */
export function useAuditApp() {
  beforeAll(async () => {
    t = await createTestApp();
    owner = await signedInUser(t, 'audit-owner');
    member = await signedInUser(t, 'audit-member');
    orgId = await createOrg('audit');
    otherOrgId = await createOrg('audit-other');
    const now = t.clock.now().toISOString();
    await t.deps.db.execute(sql`insert into memberships (organization_id, id, user_id, role, joined_at, updated_at)
      values (${orgId}, ${newId('mbr', t.clock.now().getTime())}, ${member.userId}, 'member', ${now}::timestamptz, ${now}::timestamptz)`);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });
}
