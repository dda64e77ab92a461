// The event id in every delivery's body ({id, type, timestamp, data}), with real local receivers and
// signatures checked by the `stripe` package: one event sent to two endpoints carries the same id
// (the event's), two events two ids. Deliveries recorded by earlier versions (with a copy of the body,
// with or without the id): delivery-migration.test.ts.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createOrg, createWebhook, rowsOf, setPlan, stripeVerify } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { createProject, drain, owner, t, useDeliveryApp, worker } from '../../../test/fixtures/webhooks.js';

const fx = useDeliveryApp('event-id-owner', { worker: 'made' });

describe('the event id', () => {
  it('is the first key of the body: the same for both endpoints of one event, another for the next event; signatures verify', async () => {
    const a = await fx.receiver();
    const b = await fx.receiver();
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    const hookA = await createWebhook(t, org.id, owner, { url: a.url });
    const hookB = await createWebhook(t, org.id, owner, { url: b.url });
    await worker.start();
    for (const name of ['one', 'two']) await createProject(org.id, name);
    await drain();

    const events = rowsOf(
      await t.deps.db.execute(
        sql`select id from events where organization_id = ${org.id} and type = 'project.created' order by created_at, id`,
      ),
    );
    expect(events).toHaveLength(2);
    const byName = (rx: typeof a, secret: string) =>
      Object.fromEntries(
        rx.received.map((r) => [
          (JSON.parse(r.body) as { data: { name: string } }).data.name,
          stripeVerify(t, r, secret),
        ]),
      );
    const fromA = byName(a, hookA.secret);
    const fromB = byName(b, hookB.secret);
    for (const name of ['one', 'two']) {
      expect(Object.keys(fromA[name]!)).toEqual(['id', 'type', 'timestamp', 'data']);
      expect(fromA[name]!.id).toBe(fromB[name]!.id);
    }
    expect(new Set([fromA.one!.id, fromA.two!.id])).toEqual(new Set(events.map((e) => e.id)));
    // Each endpoint's delivery has its own delivery id, though the event id is shared.
    expect(a.received[0]!.headers['x-webhook-delivery-id']).not.toBe(b.received[0]!.headers['x-webhook-delivery-id']);
  });

  it('of the test event is the eventId the test route answers', async () => {
    const rx = await fx.receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    await worker.start();
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/test`,
      headers: owner.auth,
    });
    expect(res.statusCode, res.body).toBe(200);
    await worker.drain(60_000);
    expect(stripeVerify(t, rx.received[0]!, hook.secret)).toMatchObject({ id: json(res).data.eventId, type: 'test' });
  });
});
