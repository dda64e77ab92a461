// What the delivery worker decides without touching the database or the network: how many
// deliveries it has in flight (in all, per endpoint and per organization), whether it should claim
// now, how many rows the next claim may take and where its round robin over organizations starts,
// and which endpoints and organizations the last claim left at their cap. The loop in index.ts asks
// and reports; the timers and the statements stay there, so everything here can be driven step by
// step in a unit test with a fake clock.

export interface WorkerOptions {
  /** Deliveries in flight at once (default 256). */
  concurrency?: number;
  /** Deliveries in flight to one endpoint at once (default a quarter of `concurrency`, at least 1). */
  perEndpoint?: number;
  /** Deliveries in flight for one organization at once (default 32; the worker passes WEBHOOK_ORG_CONCURRENCY). */
  perOrganization?: number;
  /** Poll for retries coming due (default 1 s); NOTIFY wakes the worker for new events. */
  pollMs?: number;
  /** Results recorded per statement at most (default 500). */
  batchSize?: number;
  /** How long a result may wait for others before it is written, when nothing is being written (default 2 ms). */
  flushDelayMs?: number;
  /** Under load, how long freed slots may wait for others before they are claimed again (default 2 ms). */
  claimDelayMs?: number;
}

/** The options with their defaults and bounds applied, and the limits that follow from them. */
export interface WorkerSettings {
  concurrency: number;
  perEndpoint: number;
  perOrganization: number;
  pollMs: number;
  batchSize: number;
  flushDelayMs: number;
  claimDelayMs: number;
  /** Under load, a claim waits for this many freed slots (or for `claimDelayMs`). */
  minClaim: number;
  /** Claims pause while this many results wait to be written. */
  maxUnrecorded: number;
  /** How long a claim holds its deliveries. */
  leaseMs: number;
}

export function workerSettings(opts: WorkerOptions, attemptTimeoutMs: number): WorkerSettings {
  const concurrency = Math.max(1, opts.concurrency ?? 256);
  const perEndpoint = Math.max(1, Math.min(concurrency, opts.perEndpoint ?? Math.floor(concurrency / 4)));
  const perOrganization = Math.max(1, Math.min(concurrency, opts.perOrganization ?? 32));
  const batchSize = Math.max(1, opts.batchSize ?? 500);
  return {
    concurrency,
    perEndpoint,
    perOrganization,
    pollMs: opts.pollMs ?? 1000,
    batchSize,
    flushDelayMs: opts.flushDelayMs ?? 2,
    claimDelayMs: opts.claimDelayMs ?? 2,
    // A claim per freed slot would cost more than the deliveries it starts; an eighth of the slots
    // is enough to amortise it, and never more than one endpoint's or one organization's share, or
    // a worker whose only traffic is one capped endpoint would never gather enough.
    minClaim: Math.max(1, Math.min(perEndpoint, perOrganization, Math.floor(concurrency / 8))),
    // When the database is slower than the receivers, results pile up in memory; holding the claims
    // lets the writes catch up instead of growing the backlog without bound.
    maxUnrecorded: batchSize * 4,
    // Longer than any attempt can take (the request's own timeout plus a wide margin for the result
    // to be written), so a delivery is only taken over once its worker is really gone. See
    // docs/decisions.md, "Lease".
    leaseMs: attemptTimeoutMs + 30_000,
  };
}

/** What a claim needs, handed out by `startClaim` and given back to `claimed`. */
export interface Claim {
  /** How many rows it may take: the free slots. */
  room: number;
  /** In-flight deliveries per endpoint and per organization when it started (the statement gives each only its room). */
  before: Map<string, number>;
  beforeOrgs: Map<string, number>;
  /** The organization the previous claim ended on: this one starts with the next ('' for the first). */
  after: string;
}

/** What a slot is counted against. */
export interface Slot {
  endpointId: string;
  organizationId: string;
}

type Limits = Pick<
  WorkerSettings,
  'concurrency' | 'perEndpoint' | 'perOrganization' | 'minClaim' | 'maxUnrecorded' | 'claimDelayMs'
>;

const add = (m: Map<string, number>, key: string, n: number) => {
  const v = (m.get(key) ?? 0) + n;
  if (v === 0) m.delete(key);
  else m.set(key, v);
};

export class Scheduler {
  /** Deliveries in flight (claimed and not yet answered). */
  inFlight = 0;
  /** A claim statement is running: rows it takes are not due any more, yet not in flight either. */
  claiming = false;
  /** In-flight deliveries per endpoint id and per organization id (absent at zero). */
  readonly busy = new Map<string, number>();
  readonly busyOrgs = new Map<string, number>();
  /** Endpoints and organizations the last claim took up to their cap (or skipped, being at it): due rows of them may be left. */
  private readonly capped = new Set<string>();
  private readonly cappedOrgs = new Set<string>();
  /** Where the next claim's round robin starts: after the last organization served. */
  private cursor = '';
  /** Something may be claimable: a wake-up, a poll, a full claim, or a slot freed on a capped endpoint. */
  private wantClaim = false;
  /** A wake-up or the poll: claim at once. Otherwise (slots freed under load) claims gather a few slots first. */
  private urgent = false;
  /** Slots freed since the last claim started. */
  private freed = 0;
  /** When the last claim ended, on `now()`'s scale. */
  private lastClaimEnd = 0;

  constructor(
    private readonly limits: Limits,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A NOTIFY, a nudge, the poll or the start: there may be new due rows, look at once. */
  signal(): void {
    this.wantClaim = true;
    this.urgent = true;
  }

  /**
   * 0: claim now. A number of milliseconds: slots were freed under load and may be claimed once
   * that much time has passed (unless more are freed first). Infinity: nothing to do until
   * something happens (a wake-up, a freed slot, a written batch).
   *
   * After a wake-up the claim goes at once; under load it waits for `minClaim` freed slots or for
   * `claimDelayMs` after the previous claim, since one claim per freed slot would cost more than the
   * deliveries themselves.
   */
  claimWait(unrecorded: number): number {
    const { concurrency, maxUnrecorded, minClaim, claimDelayMs } = this.limits;
    if (!this.wantClaim || this.inFlight >= concurrency || unrecorded >= maxUnrecorded) return Infinity;
    if (this.urgent || this.freed >= minClaim) return 0;
    if (this.freed === 0) return Infinity;
    const wait = this.lastClaimEnd + claimDelayMs - this.now();
    return wait <= 0 ? 0 : wait;
  }

  /** A claim starts: what it may take. Whatever made it wanted is now being answered. */
  startClaim(): Claim {
    this.wantClaim = false;
    this.urgent = false;
    this.freed = 0;
    this.claiming = true;
    return {
      room: this.limits.concurrency - this.inFlight,
      before: new Map(this.busy),
      beforeOrgs: new Map(this.busyOrgs),
      after: this.cursor,
    };
  }

  /**
   * The claim took these deliveries: they are in flight. `endedOn` is the last organization the
   * claim served (null if none): the next claim starts after it, so claims take turns.
   */
  claimed(claim: Claim, deliveries: ReadonlyArray<Slot>, endedOn: string | null = null): void {
    for (const d of deliveries) {
      this.inFlight++;
      add(this.busy, d.endpointId, 1);
      add(this.busyOrgs, d.organizationId, 1);
    }
    if (endedOn !== null) this.cursor = endedOn;
    // Endpoints and organizations at their cap once this claim is counted: the statement left their
    // due rows behind, so a slot freed on one of them is worth a claim even without a wake-up.
    const { perEndpoint, perOrganization } = this.limits;
    const counts = claim.before;
    const orgCounts = claim.beforeOrgs;
    this.capped.clear();
    this.cappedOrgs.clear();
    for (const d of deliveries) {
      counts.set(d.endpointId, (counts.get(d.endpointId) ?? 0) + 1);
      orgCounts.set(d.organizationId, (orgCounts.get(d.organizationId) ?? 0) + 1);
    }
    for (const [endpointId, n] of counts) if (n >= perEndpoint) this.capped.add(endpointId);
    for (const [organizationId, n] of orgCounts) if (n >= perOrganization) this.cappedOrgs.add(organizationId);
    // It got all it asked for: more may be due.
    if (deliveries.length === claim.room) this.wantClaim = true;
  }

  /** The claim statement is over (whether it succeeded or not). */
  endClaim(): void {
    this.claiming = false;
    this.lastClaimEnd = this.now();
  }

  /** A delivery answered (or failed): its slot is free. */
  release(d: Slot): void {
    add(this.busy, d.endpointId, -1);
    add(this.busyOrgs, d.organizationId, -1);
    // The last claim stopped at this endpoint's or organization's cap: rows of it may have been left for this slot.
    if (this.capped.has(d.endpointId) || this.cappedOrgs.has(d.organizationId)) this.wantClaim = true;
    this.inFlight--;
    this.freed++;
  }
}
