// Migration 0020: deliveries stop carrying a copy of their event's body and reference the event row
// instead. Deliveries recorded by earlier versions keep working: their SQL is run here on a database
// put back in the earlier shape (the `payload` column, no foreign key) holding such rows: one with the
// event's id in its copy, one from before bodies carried it, and one whose event row is missing
// (recreated from the copy). A worker then sends each the body its copy held, signed.
import fs from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createOrg,
  createWebhook,
  eventsOf,
  rowsOf,
  setPlan,
  signedInUser,
  stripeVerify,
} from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { workerFixtures } from '../../../test/fixtures/worker.js';
import { recordEvent } from '../../platform/outbox.js';

let t: TestApp;
const fx = workerFixtures(() => t);

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
});
afterAll(async () => {
  await fx.stopAll();
  await t?.close();
});

const exec = (q: ReturnType<typeof sql>) => t.deps.db.execute(q);

it('keeps every delivery recorded before it: each is sent the body its copy held, signed', async () => {
  const rx = await fx.receiver();
  const owner = await signedInUser(t, 'migration-owner');
  const org = await createOrg(t, owner);
  await setPlan(t, org.id, 'enterprise');
  const hooks = [
    await createWebhook(t, org.id, owner, { url: `${rx.url}/a` }),
    await createWebhook(t, org.id, owner, { url: `${rx.url}/b` }),
  ];

  // The earlier shape of the table.
  await exec(sql`alter table webhook_deliveries drop constraint webhook_deliveries_event_fk`);
  await exec(sql`alter table webhook_deliveries add column payload jsonb`);

  // Three events as the earlier versions left them, each to both endpoints.
  const bodies: Array<Record<string, unknown>> = [];
  for (const [i, kind] of ['with id', 'without id', 'event row missing'].entries()) {
    t.clock.advance(1_000);
    const data = { orderId: `ord_${i}`, kind, nested: { n: i, list: [1, 'two', null] } };
    const { eventId } = await t.deps.db.transaction((tx) => recordEvent(t.deps, tx, org.id, 'order.shipped', data));
    const body = { id: eventId, type: 'order.shipped', timestamp: t.clock.now().toISOString(), data };
    const copy = kind === 'without id' ? { type: body.type, timestamp: body.timestamp, data } : body;
    await exec(
      sql`update webhook_deliveries set payload = ${JSON.stringify(copy)}::jsonb where organization_id = ${org.id} and event_id = ${eventId}`,
    );
    if (kind === 'event row missing')
      await exec(sql`delete from events where organization_id = ${org.id} and id = ${eventId}`);
    bodies.push(body);
  }
  await exec(sql`alter table webhook_deliveries alter column payload set not null`);
  expect(await eventsOf(t, org.id)).toHaveLength(2);

  const migration = fs.readFileSync(
    new URL('../../../drizzle/0020_delivery_event_reference.sql', import.meta.url),
    'utf8',
  );
  for (const statement of migration.split('--> statement-breakpoint')) await exec(sql.raw(statement));

  // The copies are gone; every delivery has its event, the missing one recreated from its copy.
  const columns = rowsOf(
    await exec(
      sql`select column_name from information_schema.columns where table_name = 'webhook_deliveries' and column_name = 'payload'`,
    ),
  );
  expect(columns).toEqual([]);
  const events = await eventsOf(t, org.id);
  expect(
    events.map((e) => ({
      id: e.id,
      type: e.type,
      data: e.data,
      timestamp: new Date(e.created_at as string).toISOString(),
    })),
  ).toEqual(bodies.map((b) => ({ id: b.id, type: b.type, data: b.data, timestamp: b.timestamp })));
  // The foreign key holds from now on: a delivery of an unknown event is refused.
  await expect(
    exec(sql`insert into webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, created_at, updated_at)
      values (${org.id}, 'dlv_orphan', ${hooks[0]!.id}, 'evt_unknown', 'order.shipped', 'pending', now(), now())`),
  ).rejects.toThrow();

  const worker = fx.worker();
  await worker.start();
  await worker.drain(60_000);
  await worker.stop();
  expect(rx.received).toHaveLength(6);
  for (const [i, hook] of hooks.entries()) {
    const got = rx.received.filter((r) => r.url === `/hook/${'ab'[i]}`);
    expect(
      got
        .map((r) => stripeVerify(t, r, hook.secret))
        .sort((x, y) => String(x.timestamp).localeCompare(String(y.timestamp))),
    ).toEqual(bodies);
  }
});
