// What the tests of POST /organizations/{orgId}/events share (publish.test.ts,
// publish-idempotency.test.ts): the request, and the organization's rows that a refusal must leave
// as they were.
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';

export const publish = (t: TestApp, orgId: string, headers: Record<string, string>, payload: unknown) =>
  t.request({ method: 'POST', url: `/api/v1/organizations/${orgId}/events`, headers, payload: payload as Record<string, unknown> });

/** Rows of the organization that publishing writes: events, deliveries, idempotency keys, audit entries. */
export async function footprint(t: TestApp, orgId: string) {
  const [row] = rowsOf(
    await t.deps.db.execute(sql`select
      (select count(*)::int from events where organization_id = ${orgId}) as events,
      (select count(*)::int from webhook_deliveries where organization_id = ${orgId}) as deliveries,
      (select count(*)::int from event_idempotency_keys where organization_id = ${orgId}) as keys,
      (select count(*)::int from audit_logs where organization_id = ${orgId} and actor_type = 'user') as changes`),
  );
  return row as { events: number; deliveries: number; keys: number; changes: number };
}
