// The retention job (jobs/retention.ts) through the real database on the fake clock: rows on both
// sides of each boundary, pending deliveries kept whatever their age, bounded batches, and two runs
// at once deleting each row once.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, rowsOf, signedInUser } from '../../test/factories.js';
import { createTestApp, type TestApp } from '../../test/harness.js';
import { deferred } from '../../test/fixtures/worker.js';
import { createRetentionJob, SESSION_DAYS } from './retention.js';
import { waitUntil } from '../../test/expect.js';

const DAY = 24 * 3600_000;
const MS = 1;
let t: TestApp;
let second: TestApp;
let userId: string;
let orgId: string;
let n = 0;
const id = (prefix: string) => `${prefix}_ret_${++n}`;

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_RETENTION_DAYS: '30' } });
  // A second instance on the same database, as another API or worker process would be.
  second = await createTestApp({ database: t.database, clock: t.clock });
  const user = await signedInUser(t, 'retention');
  userId = user.userId;
  orgId = (await createOrg(t, user)).id;
});
afterAll(async () => {
  await second?.close();
  await t?.close();
});

const ago = (ms: number) => new Date(t.clock.now().getTime() - ms).toISOString();
const exec = (q: ReturnType<typeof sql>) => t.deps.db.execute(q);

async function token(expiresAt: string) {
  const tokenId = id('tok');
  await exec(sql`insert into email_tokens (id, user_id, purpose, token_hash, email, expires_at, created_at)
    values (${tokenId}, ${userId}, 'magic_link', ${tokenId}, 'r@example.com', ${expiresAt}::timestamptz, ${ago(DAY)}::timestamptz)`);
  return tokenId;
}
async function session(end: { revokedAt?: string; expiresAt: string }) {
  const sessionId = id('ses');
  await exec(sql`insert into sessions (id, user_id, refresh_token_hash, last_used_at, expires_at, created_at, authenticated_at, revoked_at)
    values (${sessionId}, ${userId}, ${sessionId}, ${ago(60 * DAY)}::timestamptz, ${end.expiresAt}::timestamptz, ${ago(60 * DAY)}::timestamptz, ${ago(60 * DAY)}::timestamptz, ${end.revokedAt ?? null}::timestamptz)`);
  return sessionId;
}
async function event(createdAt: string) {
  const eventId = id('evt');
  await exec(
    sql`insert into events (organization_id, id, type, data, created_at) values (${orgId}, ${eventId}, 'test', '{}'::jsonb, ${createdAt}::timestamptz)`,
  );
  return eventId;
}
async function delivery(eventId: string, status: string, updatedAt: string, attempts = 0) {
  const deliveryId = id('dlv');
  await exec(sql`insert into webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, attempts, next_retry_at, created_at, updated_at)
    values (${orgId}, ${deliveryId}, ${id('wh')}, ${eventId}, 'test', ${status}, ${attempts},
      ${status === 'pending' ? updatedAt : null}::timestamptz, ${ago(60 * DAY)}::timestamptz, ${updatedAt}::timestamptz)`);
  for (let i = 1; i <= attempts; i++) {
    await exec(sql`insert into webhook_attempts (organization_id, id, delivery_id, attempt, duration_ms, created_at)
      values (${orgId}, ${id('att')}, ${deliveryId}, ${i}, 5, ${updatedAt}::timestamptz)`);
  }
  return deliveryId;
}
async function idempotencyKey(createdAt: string) {
  const key = id('key');
  await exec(sql`insert into event_idempotency_keys (organization_id, key, event_id, response, created_at)
    values (${orgId}, ${key}, 'evt_x', '{"status":201,"body":{}}'::jsonb, ${createdAt}::timestamptz)`);
  return key;
}
async function present(table: string, column: string, ids: string[]): Promise<string[]> {
  const rows = rowsOf(
    await exec(
      sql`select ${sql.identifier(column)} as id from ${sql.identifier(table)} where ${sql.identifier(column)} in ${ids}`,
    ),
  );
  return rows.map((r) => String(r.id)).sort();
}
const count = async (table: string) =>
  Number(rowsOf(await exec(sql`select count(*)::int as n from ${sql.identifier(table)}`))[0]!.n);

describe('the retention job', () => {
  it('deletes on the old side of every boundary and keeps the rest, pending deliveries whatever their age', async () => {
    const expired = await token(ago(MS));
    const live = await token(ago(-MS));

    const revokedLong = await session({ revokedAt: ago(SESSION_DAYS * DAY + MS), expiresAt: ago(-DAY) });
    const revokedRecently = await session({ revokedAt: ago(SESSION_DAYS * DAY - MS), expiresAt: ago(-DAY) });
    const expiredLong = await session({ expiresAt: ago(SESSION_DAYS * DAY + MS) });
    const expiredRecently = await session({ expiresAt: ago(SESSION_DAYS * DAY - MS) });
    const active = await session({ expiresAt: ago(-DAY) });

    const old = ago(30 * DAY + MS);
    const recent = ago(30 * DAY - MS);
    const freedEvent = await event(old);
    const gone = [
      await delivery(freedEvent, 'delivered', old, 1),
      await delivery(freedEvent, 'failed', old, 4),
      await delivery(freedEvent, 'canceled', old),
    ];
    const heldEvent = await event(old);
    const pending = await delivery(heldEvent, 'pending', ago(40 * DAY), 2);
    const recentEvent = await event(old);
    const recentDelivery = await delivery(recentEvent, 'delivered', recent, 1);
    const bareOld = await event(old);
    const bareRecent = await event(recent);

    const staleKey = await idempotencyKey(ago(DAY + MS));
    const freshKey = await idempotencyKey(ago(DAY - MS));

    const result = await createRetentionJob(t.deps).runOnce();
    expect(result).toEqual({
      emailTokens: 1,
      sessions: 2,
      deliveries: 3,
      attempts: 5,
      idempotencyKeys: 1,
      events: 2,
      statements: 5,
    });

    expect(await present('email_tokens', 'id', [expired, live])).toEqual([live]);
    expect(
      await present('sessions', 'id', [revokedLong, revokedRecently, expiredLong, expiredRecently, active]),
    ).toEqual([active, expiredRecently, revokedRecently].sort());
    expect(await present('webhook_deliveries', 'id', [...gone, pending, recentDelivery])).toEqual(
      [pending, recentDelivery].sort(),
    );
    expect(await present('webhook_attempts', 'delivery_id', [...gone, pending, recentDelivery])).toEqual(
      [pending, pending, recentDelivery].sort(),
    );
    expect(await present('events', 'id', [freedEvent, heldEvent, recentEvent, bareOld, bareRecent])).toEqual(
      [heldEvent, recentEvent, bareRecent].sort(),
    );
    expect(await present('event_idempotency_keys', 'key', [staleKey, freshKey])).toEqual([freshKey]);

    // Nothing left to take: a second run deletes nothing.
    expect(await createRetentionJob(t.deps).runOnce()).toMatchObject({
      emailTokens: 0,
      sessions: 0,
      deliveries: 0,
      events: 0,
      idempotencyKeys: 0,
    });
  });

  it('deletes in bounded batches, one statement per batch', async () => {
    for (let i = 0; i < 25; i++) await token(ago(MS));
    const result = await createRetentionJob(t.deps, { batchSize: 10, pauseMs: 1 }).runOnce();
    // 10 + 10 + 5 tokens, then one statement for each other kind.
    expect(result).toMatchObject({ emailTokens: 25, statements: 3 + 4 });
    expect(await count('email_tokens')).toBeGreaterThan(0);
    expect(
      rowsOf(
        await exec(
          sql`select count(*)::int as n from email_tokens where expires_at < ${t.clock.now().toISOString()}::timestamptz`,
        ),
      )[0]!.n,
    ).toBe(0);
  });

  it('two instances at once: one run at a time, every row deleted once', async () => {
    const made: string[] = [];
    for (let i = 0; i < 30; i++) made.push(await token(ago(MS)));
    // The first instance's run is held at its first statement, so it holds the lock while the second tries.
    const gate = deferred();
    const entered = deferred();
    const held = new Proxy(t.deps.db, {
      get(target, prop, receiver) {
        if (prop !== 'execute') return Reflect.get(target, prop, receiver) as unknown;
        return async (query: Parameters<typeof target.execute>[0]) => {
          entered.resolve();
          await gate.promise;
          return target.execute(query);
        };
      },
    });
    const a = createRetentionJob({ ...t.deps, db: held }, { batchSize: 5, pauseMs: 1 });
    const b = createRetentionJob(second.deps, { batchSize: 5, pauseMs: 1 });
    const first = a.runOnce();
    await entered.promise;
    // The other instance finds the run under way and skips.
    expect(await b.runOnce()).toBeNull();
    gate.resolve();
    expect(await first).toMatchObject({ emailTokens: 30 });
    expect(await present('email_tokens', 'id', made)).toEqual([]);
    // Once it is over, the other instance runs (and finds nothing left).
    expect(await b.runOnce()).toMatchObject({ emailTokens: 0 });
  });

  it('runs on its own once started, and stops', async () => {
    const made = [await token(ago(MS)), await token(ago(MS))];
    const job = createRetentionJob(t.deps, { firstRunMs: 0, intervalMs: 3600_000 });
    job.start();
    await waitUntil(
      'the started job has run',
      async () => (await present('email_tokens', 'id', made)).length === 0,
      30_000,
    );
    await job.stop();
    expect(await job.runOnce()).toMatchObject({ statements: 0 });
  });
});
