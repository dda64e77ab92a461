// The worker's scheduling decisions without a database: the limits that follow from the options,
// when a claim may go (at once after a wake-up, gathering freed slots under load, paused when every
// slot is busy or results pile up), what a claim may take, the caps per endpoint and per
// organization, and where the round robin over organizations starts.
import { describe, expect, it } from 'vitest';
import { type Claim, Scheduler, workerSettings } from './scheduler.js';

/** A scheduler on a clock the test moves by hand. */
function scheduler(opts: Parameters<typeof workerSettings>[0] = {}) {
  let now = 1000;
  const sched = new Scheduler(workerSettings(opts, 30_000), () => now);
  return {
    sched,
    advance(ms: number) {
      now += ms;
    },
  };
}

/** A delivery's slot; each endpoint in an organization of its own unless one is given. */
const slot = (endpointId: string, organizationId = `org-${endpointId}`) => ({ endpointId, organizationId });
const to = (...endpointIds: string[]) => endpointIds.map((endpointId) => slot(endpointId));

/** A whole claim: signalled, started, and these deliveries taken. */
function claimOf(
  sched: Scheduler,
  deliveries: Array<{ endpointId: string; organizationId: string }>,
  endedOn: string | null = null,
): Claim {
  const claim = sched.startClaim();
  sched.claimed(claim, deliveries, endedOn);
  sched.endClaim();
  return claim;
}

describe('workerSettings', () => {
  it('defaults: 256 slots, a quarter per endpoint, claims of 32, 500 per batch, 2,000 unwritten at most, polls every second', () => {
    expect(workerSettings({}, 30_000)).toEqual({
      concurrency: 256,
      perEndpoint: 64,
      perOrganization: 32,
      pollMs: 1000,
      batchSize: 500,
      flushDelayMs: 2,
      claimDelayMs: 2,
      minClaim: 32,
      maxUnrecorded: 2000,
      leaseMs: 60_000,
    });
  });

  it('the lease outlasts an attempt by 30 s', () => {
    expect(workerSettings({}, 500).leaseMs).toBe(30_500);
  });

  it('bounds: at least one slot, one per endpoint, one per claim and one per batch; an endpoint never more than every slot', () => {
    expect(workerSettings({ concurrency: 0, batchSize: 0 }, 1)).toMatchObject({
      concurrency: 1,
      perEndpoint: 1,
      minClaim: 1,
      batchSize: 1,
      maxUnrecorded: 4,
    });
    expect(workerSettings({ concurrency: 3 }, 1)).toMatchObject({ perEndpoint: 1, minClaim: 1 });
    expect(workerSettings({ concurrency: 8 }, 1)).toMatchObject({ perEndpoint: 2, minClaim: 1 });
    expect(workerSettings({ concurrency: 4, perEndpoint: 10 }, 1)).toMatchObject({ perEndpoint: 4 });
    // A claim never waits for more slots than one endpoint may hold.
    expect(workerSettings({ concurrency: 64, perEndpoint: 2 }, 1)).toMatchObject({ minClaim: 2 });
  });

  it('an organization holds 32 slots by default, between one and every slot; a claim never waits for more than one organization may hold', () => {
    expect(workerSettings({ perOrganization: 0 }, 1)).toMatchObject({ perOrganization: 1, minClaim: 1 });
    expect(workerSettings({ concurrency: 16, perOrganization: 100 }, 1)).toMatchObject({ perOrganization: 16 });
    expect(workerSettings({ perOrganization: 4 }, 1)).toMatchObject({
      perOrganization: 4,
      perEndpoint: 64,
      minClaim: 4,
    });
    expect(workerSettings({ concurrency: 1024, perOrganization: 500 }, 1)).toMatchObject({
      perOrganization: 500,
      minClaim: 128,
    });
  });
});

describe('when to claim', () => {
  it('nothing to do until a signal; after one, at once', () => {
    const { sched } = scheduler();
    expect(sched.claimWait(0)).toBe(Infinity);
    sched.signal();
    expect(sched.claimWait(0)).toBe(0);
  });

  it('a claim answers the signal: no new claim until something else happens', () => {
    const { sched } = scheduler();
    sched.signal();
    const claim = sched.startClaim();
    expect(sched.claiming).toBe(true);
    expect(sched.claimWait(0)).toBe(Infinity);
    sched.claimed(claim, to('a'));
    sched.endClaim();
    expect(sched.claiming).toBe(false);
    expect(sched.claimWait(0)).toBe(Infinity);
  });

  it('a claim may take every free slot, and carries the in-flight counts it started with', () => {
    const { sched } = scheduler({ concurrency: 10, perEndpoint: 5 });
    sched.signal();
    claimOf(sched, to('a', 'a', 'b'));
    sched.signal();
    const claim = sched.startClaim();
    expect(claim.room).toBe(7);
    expect(claim.before).toEqual(
      new Map([
        ['a', 2],
        ['b', 1],
      ]),
    );
    // A snapshot: what changes later does not reach the claim in progress.
    sched.release(slot('b'));
    expect(claim.before.get('b')).toBe(1);
  });

  it('a claim that got all it asked for wants another; under load it waits for freed slots', () => {
    const { sched } = scheduler({ concurrency: 4, perEndpoint: 4 });
    sched.signal();
    claimOf(sched, to('a', 'b', 'c', 'd'));
    expect(sched.inFlight).toBe(4);
    // Every slot busy: nothing, whatever wakes it.
    sched.signal();
    expect(sched.claimWait(0)).toBe(Infinity);
    sched.release(slot('a'));
    expect(sched.claimWait(0)).toBe(0);
  });

  it('a claim that got less than it asked for (the queue is empty) wants no other until a signal', () => {
    const { sched } = scheduler({ concurrency: 8 });
    sched.signal();
    claimOf(sched, to('a'));
    expect(sched.claimWait(0)).toBe(Infinity);
    sched.release(slot('a'));
    expect(sched.claimWait(0)).toBe(Infinity);
  });

  it('under load, freed slots gather: minClaim of them, or claimDelayMs after the last claim ended', () => {
    // 16 slots: claims of 2 at least, 2 ms apart at most.
    const { sched, advance } = scheduler({ concurrency: 16, perEndpoint: 16 });
    sched.signal();
    claimOf(sched, to(...Array.from({ length: 16 }, (_, i) => `e${i}`)));
    advance(0.5);
    sched.release(slot('e0'));
    expect(sched.claimWait(0)).toBeCloseTo(1.5);
    advance(1.5);
    expect(sched.claimWait(0)).toBe(0);

    // Or a second freed slot, whatever the time.
    claimOf(sched, to('x'));
    sched.release(slot('e1'));
    expect(sched.claimWait(0)).toBeCloseTo(2);
    sched.release(slot('e2'));
    expect(sched.claimWait(0)).toBe(0);
  });

  it('a signal under load claims at once, without gathering', () => {
    const { sched } = scheduler({ concurrency: 16, perEndpoint: 16 });
    sched.signal();
    claimOf(sched, to(...Array.from({ length: 16 }, (_, i) => `e${i}`)));
    sched.release(slot('e0'));
    expect(sched.claimWait(0)).toBeGreaterThan(0);
    sched.signal();
    expect(sched.claimWait(0)).toBe(0);
  });

  it('claims pause while maxUnrecorded results wait to be written', () => {
    const { sched } = scheduler({ batchSize: 10 });
    sched.signal();
    expect(sched.claimWait(39)).toBe(0);
    expect(sched.claimWait(40)).toBe(Infinity);
    expect(sched.claimWait(400)).toBe(Infinity);
  });
});

describe('slots per endpoint', () => {
  it('counts deliveries in flight, in all and per endpoint, and forgets an endpoint with none', () => {
    const { sched } = scheduler({ concurrency: 8 });
    sched.signal();
    claimOf(sched, to('a', 'b', 'a'));
    expect(sched.inFlight).toBe(3);
    expect(sched.busy).toEqual(
      new Map([
        ['a', 2],
        ['b', 1],
      ]),
    );
    sched.release(slot('a'));
    sched.release(slot('b'));
    expect(sched.busy).toEqual(new Map([['a', 1]]));
    sched.release(slot('a'));
    expect(sched.inFlight).toBe(0);
    expect(sched.busy.size).toBe(0);
  });

  it('a slot freed on an endpoint the last claim left at its cap is worth a claim; one freed elsewhere is not', () => {
    // 8 slots, 2 per endpoint, claims of 1.
    const { sched } = scheduler({ concurrency: 8 });
    sched.signal();
    claimOf(sched, to('a', 'a', 'b'));
    sched.release(slot('b'));
    expect(sched.claimWait(0)).toBe(Infinity);
    sched.release(slot('a'));
    expect(sched.claimWait(0)).toBe(0);
  });

  it('the cap counts what was in flight before the claim: one more of an endpoint already at one of two caps it', () => {
    const { sched } = scheduler({ concurrency: 8 });
    sched.signal();
    claimOf(sched, to('a'));
    sched.signal();
    claimOf(sched, to('a', 'b'));
    sched.release(slot('b'));
    expect(sched.claimWait(0)).toBe(Infinity);
    sched.release(slot('a'));
    expect(sched.claimWait(0)).toBe(0);
  });

  it('an endpoint the claim skipped, being at its cap already, counts as capped too', () => {
    const { sched } = scheduler({ concurrency: 8 });
    sched.signal();
    claimOf(sched, to('a', 'a'));
    sched.signal();
    claimOf(sched, to('b'));
    sched.release(slot('a'));
    expect(sched.claimWait(0)).toBe(0);
  });

  it('each claim decides the capped endpoints anew', () => {
    const { sched } = scheduler({ concurrency: 8 });
    sched.signal();
    claimOf(sched, to('a', 'a'));
    sched.release(slot('a'));
    sched.release(slot('a'));
    sched.signal();
    claimOf(sched, to('b'));
    sched.signal();
    claimOf(sched, to('a'));
    // a holds one of two slots: no longer capped.
    sched.release(slot('a'));
    expect(sched.claimWait(0)).toBe(Infinity);
  });
});

describe('slots per organization', () => {
  it('counts deliveries in flight per organization across its endpoints, and forgets an organization with none', () => {
    const { sched } = scheduler({ concurrency: 16 });
    sched.signal();
    claimOf(sched, [slot('a', 'o1'), slot('b', 'o1'), slot('c', 'o2')]);
    expect(sched.busyOrgs).toEqual(
      new Map([
        ['o1', 2],
        ['o2', 1],
      ]),
    );
    sched.signal();
    const claim = sched.startClaim();
    expect(claim.beforeOrgs).toEqual(
      new Map([
        ['o1', 2],
        ['o2', 1],
      ]),
    );
    sched.claimed(claim, []);
    sched.endClaim();
    sched.release(slot('a', 'o1'));
    sched.release(slot('c', 'o2'));
    expect(sched.busyOrgs).toEqual(new Map([['o1', 1]]));
    sched.release(slot('b', 'o1'));
    expect(sched.busyOrgs.size).toBe(0);
  });

  it('a slot freed in an organization the last claim left at its cap is worth a claim, whichever of its endpoints it was on', () => {
    // 3 per organization, 8 per endpoint: the organization's cap is the one reached.
    const { sched } = scheduler({ concurrency: 32, perEndpoint: 8, perOrganization: 3 });
    sched.signal();
    claimOf(sched, [slot('a', 'o1'), slot('b', 'o1'), slot('c', 'o1'), slot('x', 'o2')]);
    sched.release(slot('x', 'o2'));
    expect(sched.claimWait(0)).toBe(Infinity);
    sched.release(slot('b', 'o1'));
    expect(sched.claimWait(0)).toBeGreaterThan(0);
    expect(sched.claimWait(0)).not.toBe(Infinity);
  });

  it('an organization already at its cap when the claim started counts as capped, though the claim gave it nothing', () => {
    const { sched } = scheduler({ concurrency: 32, perEndpoint: 8, perOrganization: 2 });
    sched.signal();
    claimOf(sched, [slot('a', 'o1'), slot('b', 'o1')]);
    sched.signal();
    claimOf(sched, [slot('x', 'o2')]);
    sched.release(slot('a', 'o1'));
    expect(sched.claimWait(0)).not.toBe(Infinity);
  });
});

describe('round robin over organizations', () => {
  it('the first claim starts at the beginning; each next one after the organization the previous one ended on', () => {
    const { sched } = scheduler({ concurrency: 64 });
    sched.signal();
    const first = sched.startClaim();
    expect(first.after).toBe('');
    sched.claimed(first, [slot('a', 'o1'), slot('b', 'o3')], 'o3');
    sched.endClaim();
    sched.signal();
    const second = sched.startClaim();
    expect(second.after).toBe('o3');
    // A claim that served nobody leaves the turn where it was.
    sched.claimed(second, [], null);
    sched.endClaim();
    sched.signal();
    expect(sched.startClaim().after).toBe('o3');
  });
});
