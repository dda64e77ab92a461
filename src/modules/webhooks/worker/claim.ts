// The claim: one statement that leases due deliveries to a claim token and returns them with their
// event (type, data, time: the body, stored once in the event row) and their endpoint (url, secret,
// the previous secret while a rotation's grace lasts, state).
//
// It walks the queue by organization and endpoint (the partial index on (organization_id,
// endpoint_id, next_retry_at) of pending rows), starting with the first organization after the one
// the previous claim ended on and wrapping around, so successive claims go round robin across the
// organizations with due work. Each step is one index descent to the next endpoint (or, when the
// organization has no room left, to the next organization), then a count of that endpoint's due
// rows bounded by the room it has: the endpoint's cap minus what it has in flight, the
// organization's cap minus what it has in flight and what this claim already gave it, and the
// claim's own room. The walk ends when the claim's room is filled or every endpoint has been seen.
// Then each endpoint with a share gives the front of its queue, FOR UPDATE SKIP LOCKED. The rows
// picked reach the UPDATE as arrays: a join with the picked rows themselves let the generic plan
// guess a tenth of an endpoint's backlog and hash the whole table, where unnest() is guessed small
// and each row is found by its primary key.
//
// So an endpoint or an organization at its cap costs one probe whatever the length of its queue,
// and the cost of a claim follows what it takes and the number of endpoints with pending
// deliveries, never their backlog. (The previous claim read the queue in due order and filtered
// capped endpoints afterwards: behind one endpoint with a long queue at its cap, every claim read
// that whole queue and took nothing.)
import type { Query } from './queue.js';

export interface ClaimedDelivery {
  organizationId: string;
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** The event's body fields (the event row's type, created_at and data): what every attempt sends. */
  event: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Attempts made before this claim. */
  attempts: number;
  /** The claim token the lease is held under. */
  lockedBy: string;
  /** Null when the endpoint row is gone. */
  url: string | null;
  secretEnc: string | null;
  /**
   * The secret a rotation with a grace period replaced, and when it stops signing: both null when
   * there is none or its grace had ended at the claim's `now` (docs/api.md#webhook-signatures).
   */
  previousSecretEnc: string | null;
  previousSecretExpiresAt: Date | null;
  isActive: boolean;
  deleted: boolean;
}

// Rows not leased (or whose lease ran out) and due: what an endpoint can give now.
const AVAILABLE = `d.status = 'pending' and d.next_retry_at <= $1::timestamptz and (d.locked_until is null or d.locked_until < $1::timestamptz)`;

// One index descent to the first pending row after a position, in (organization, endpoint) order.
// `bound` keeps the second lap (phase 1) to the organizations up to the start.
const next = (where: string, phase: string, bound = '') =>
  `(select organization_id as org, endpoint_id as ep, ${phase} as phase from webhook_deliveries
      where ${where} and status = 'pending'${bound} order by organization_id, endpoint_id, next_retry_at limit 1)`;

// $1 now, $2 lease end, $3 claim token, $4 how many at most (the free slots), $5 deliveries in
// flight per endpoint id and $7 per organization id (JSON objects), $6 and $8 their caps, $9 the
// organization the previous claim ended on ('' for none).
// walk: one row per endpoint visited, in order (step): its organization's room (cap minus in
// flight), what this claim gives the organization up to and including this endpoint, this
// endpoint's share, the running total. The first row is a starting point on organization $9 with no
// room, so the first step goes to the next organization. Every row returned carries the last
// organization given a share (ended_on), where the next claim starts.
export const CLAIM = `
with recursive walk (step, org, ep, phase, org_room, org_used, take, total) as (
  select 0, $9::text, ''::text, 0, 0, 0, 0, 0
  union all
  select w.step + 1, n.org, n.ep, n.phase, n.org_room, n.used_before + s.take, s.take, w.total + s.take
  from walk w
  cross join lateral (
    select nx.org, nx.ep, nx.phase,
      $8::int - coalesce(($7::jsonb ->> nx.org)::int, 0) as org_room,
      case when nx.org = w.org then w.org_used else 0 end as used_before
    from (
      ${next('w.org_used < w.org_room and w.phase = 0 and (organization_id, endpoint_id) > (w.org, w.ep)', 'w.phase')}
      union all
      ${next('w.org_used < w.org_room and w.phase = 1 and (organization_id, endpoint_id) > (w.org, w.ep)', 'w.phase', ' and organization_id <= $9::text')}
      union all
      ${next('w.org_used >= w.org_room and w.phase = 0 and organization_id > w.org', 'w.phase')}
      union all
      ${next('w.org_used >= w.org_room and w.phase = 1 and organization_id > w.org', 'w.phase', ' and organization_id <= $9::text')}
      union all
      ${next('w.phase = 0', '1', ' and organization_id <= $9::text')}
      limit 1
    ) nx
  ) n
  cross join lateral (
    select count(*)::int as take from (
      select from webhook_deliveries d
      where d.organization_id = n.org and d.endpoint_id = n.ep and ${AVAILABLE}
      limit greatest(0, least($6::int - coalesce(($5::jsonb ->> n.ep)::int, 0), n.org_room - n.used_before, $4::int - w.total))
    ) c
  ) s
  where w.total < $4::int
), picked as (
  select array_agg(d.organization_id) as orgs, array_agg(d.id) as ids from walk w
  cross join lateral (
    select d.organization_id, d.id from webhook_deliveries d
    where d.organization_id = w.org and d.endpoint_id = w.ep and ${AVAILABLE}
    order by d.next_retry_at
    limit w.take
    for update skip locked
  ) d
  where w.take > 0
), claimed as (
  update webhook_deliveries d set locked_until = $2::timestamptz, locked_by = $3::text
  from picked, unnest(picked.orgs, picked.ids) as p(organization_id, id)
  where d.organization_id = p.organization_id and d.id = p.id
  returning d.organization_id, d.id, d.endpoint_id, d.event_id, d.event_type, d.attempts
)
select c.organization_id, c.id, c.endpoint_id, c.event_id, c.event_type, c.attempts,
  ev.type as body_type, ev.data as body_data, ev.created_at as body_at,
  (select org from walk where take > 0 order by step desc limit 1) as ended_on,
  e.url, e.secret_enc,
  case when e.previous_secret_expires_at > $1::timestamptz then e.previous_secret_enc end as previous_secret_enc,
  case when e.previous_secret_expires_at > $1::timestamptz then e.previous_secret_expires_at end as previous_secret_expires_at,
  coalesce(e.is_active, false) as is_active, (e.organization_id is null or e.deleted_at is not null) as deleted
from claimed c
join events ev on ev.organization_id = c.organization_id and ev.id = c.event_id
left join webhook_endpoints e on e.organization_id = c.organization_id and e.id = c.endpoint_id`;

export interface ClaimArgs {
  now: Date;
  until: Date;
  token: string;
  /** How many deliveries at most. */
  limit: number;
  /** In flight per endpoint id and per organization id. */
  busy: ReadonlyMap<string, number>;
  busyOrgs: ReadonlyMap<string, number>;
  perEndpoint: number;
  perOrganization: number;
  /** The organization the walk starts after ('' for the first). */
  after: string;
}

const asJson = (m: ReadonlyMap<string, number>) => JSON.stringify(Object.fromEntries(m));

export interface ClaimResult {
  deliveries: ClaimedDelivery[];
  /** The last organization the walk gave a share to (null if none): the next claim starts after it. */
  endedOn: string | null;
}

export async function claimDue(query: Query, args: ClaimArgs): Promise<ClaimResult> {
  const rows = await query('tenantry_webhooks_claim', CLAIM, [
    args.now.toISOString(),
    args.until.toISOString(),
    args.token,
    args.limit,
    asJson(args.busy),
    args.perEndpoint,
    asJson(args.busyOrgs),
    args.perOrganization,
    args.after,
  ]);
  const deliveries: ClaimedDelivery[] = rows.map((r) => ({
    organizationId: r.organization_id as string,
    id: r.id as string,
    endpointId: r.endpoint_id as string,
    eventId: r.event_id as string,
    eventType: r.event_type as string,
    event: {
      type: r.body_type as string,
      timestamp: new Date(r.body_at as string | Date).toISOString(),
      data: (typeof r.body_data === 'string' ? JSON.parse(r.body_data) : r.body_data) as Record<string, unknown>,
    },
    attempts: Number(r.attempts),
    lockedBy: args.token,
    url: (r.url as string | null) ?? null,
    secretEnc: (r.secret_enc as string | null) ?? null,
    previousSecretEnc: (r.previous_secret_enc as string | null) ?? null,
    previousSecretExpiresAt:
      r.previous_secret_expires_at == null ? null : new Date(r.previous_secret_expires_at as string | Date),
    isActive: r.is_active === true,
    deleted: r.deleted === true,
  }));
  return { deliveries, endedOn: (rows[0]?.ended_on as string | undefined) ?? null };
}
