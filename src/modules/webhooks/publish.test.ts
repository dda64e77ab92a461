// POST /organizations/{orgId}/events through HTTP: a published event reaches a real local receiver
// signed (checked with the `stripe` package), goes to the endpoints its type selects, and every
// refusal (a type of the service's own, a malformed type or data, a bad Idempotency-Key, a role or
// key without events:publish, another organization's key, no credential) records nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  createApiKey,
  createOrg,
  createWebhook,
  deliveryRows,
  eventsOf,
  type MadeKey,
  setPlan,
  signedInUser,
  type SignedInUser,
  stripeVerify,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { owner, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';
import { footprint, publish } from '../../../test/fixtures/publish.js';

let admin: SignedInUser;
let member: SignedInUser;
let viewer: SignedInUser;
let outsider: SignedInUser;
let org: { id: string };
let other: { id: string };
let eventsKey: MadeKey;
let webhooksKey: MadeKey;
let otherKey: MadeKey;
const fx = useDeliveryApp('publish-owner', { worker: 'none' });
const ORDER = {
  type: 'order.shipped',
  data: { orderId: 'ord_1', lines: [{ sku: 'A', qty: 2 }], gift: false, note: null },
};

beforeAll(async () => {
  [admin, member, viewer, outsider] = await Promise.all([
    signedInUser(t, 'publish-admin'),
    signedInUser(t, 'publish-member'),
    signedInUser(t, 'publish-viewer'),
    signedInUser(t, 'publish-outsider'),
  ]);
  org = await createOrg(t, owner);
  other = await createOrg(t, outsider);
  await setPlan(t, org.id, 'enterprise');
  await addMember(t, org.id, owner, admin, 'admin');
  await addMember(t, org.id, owner, member, 'member');
  await addMember(t, org.id, owner, viewer, 'viewer');
  eventsKey = await createApiKey(t, org.id, owner, ['write:events']);
  webhooksKey = await createApiKey(t, org.id, owner, ['write:webhooks']);
  otherKey = await createApiKey(t, other.id, outsider, ['write:events']);
});

describe('publishing an event', () => {
  it('answers 201 with the event id and the deliveries queued; the receiver gets {id, type, timestamp, data} signed', async () => {
    const rx = await fx.receiver();
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const worker = fx.worker();
    await worker.start();

    const res = await publish(t, org.id, owner.auth, ORDER);
    expect(res.statusCode, res.body).toBe(201);
    const body = json(res);
    expect(body).toEqual({
      success: true,
      data: { id: expect.stringMatching(/^evt_[0-9a-z]{26}$/), type: 'order.shipped', deliveries: 1 },
    });
    expect(res.headers['idempotent-replayed']).toBeUndefined();

    await worker.drain(60_000);
    await worker.stop();
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0]!;
    expect(got.headers['x-webhook-event']).toBe('order.shipped');
    expect(stripeVerify(t, got, hook.secret)).toEqual({
      id: body.data.id,
      type: 'order.shipped',
      timestamp: t.clock.now().toISOString(),
      data: ORDER.data,
    });
    expect((await eventsOf(t, org.id)).filter((e) => e.id === body.data.id)).toEqual([
      expect.objectContaining({ type: 'order.shipped', data: ORDER.data }),
    ]);
    expect(await deliveryRows(t, hook.id)).toEqual([
      expect.objectContaining({ event_id: body.data.id, status: 'delivered' }),
    ]);
    await t.request({
      method: 'DELETE',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`,
      headers: owner.auth,
    });
  });

  it('is allowed to admins and to a key with write:events (whose request leaves no change entry, only its request audit)', async () => {
    for (const headers of [admin.auth, eventsKey.headers, { authorization: `Bearer ${eventsKey.plain}` }]) {
      const before = await footprint(t, org.id);
      const res = await publish(t, org.id, headers, { type: 'invoice.paid', data: {} });
      expect(res.statusCode, res.body).toBe(201);
      const after = await footprint(t, org.id);
      expect(after.events).toBe(before.events + 1);
      expect(after.changes).toBe(before.changes + (headers === admin.auth ? 1 : 0));
    }
  });

  it('queues one delivery per active, live endpoint subscribed to the type or to every event', async () => {
    const o = await createOrg(t, owner);
    await setPlan(t, o.id, 'enterprise');
    const rx = await fx.receiver();
    const make = (events: string[]) => createWebhook(t, o.id, owner, { url: rx.url, events });
    const all = await make([]);
    const shipped = await make(['order.shipped', 'member.added']);
    const created = await make(['order.created']);
    await make(['project.created']);
    const paused = await make(['order.shipped']);
    const deleted = await make([]);
    const patch = await t.request({
      method: 'PATCH',
      url: `/api/v1/organizations/${o.id}/webhooks/${paused.id}`,
      headers: owner.auth,
      payload: { isActive: false },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v1/organizations/${o.id}/webhooks/${deleted.id}`,
      headers: owner.auth,
    });
    expect(del.statusCode, del.body).toBe(200);

    const cases: Array<[string, string[]]> = [
      ['order.shipped', [all.id, shipped.id]],
      ['order.created', [all.id, created.id]],
      ['invoice.paid', [all.id]],
    ];
    for (const [type, endpoints] of cases) {
      const res = await publish(t, o.id, owner.auth, { type, data: { n: 1 } });
      expect(res.statusCode, res.body).toBe(201);
      expect(json(res).data.deliveries, type).toBe(endpoints.length);
      const hooks = [all, shipped, created, paused, deleted];
      const reached = [];
      for (const h of hooks)
        if ((await deliveryRows(t, h.id)).some((d) => d.event_id === json(res).data.id)) reached.push(h.id);
      expect(reached.sort(), type).toEqual([...endpoints].sort());
    }
    // An organization without endpoints records the event all the same.
    const bare = await createOrg(t, owner);
    const res = await publish(t, bare.id, owner.auth, ORDER);
    expect(json(res)).toMatchObject({ success: true, data: { type: 'order.shipped', deliveries: 0 } });
    expect(await eventsOf(t, bare.id)).toHaveLength(1);
  });
});

describe('refusals record nothing', () => {
  const refuses = async (
    orgId: string,
    headers: Record<string, string>,
    payload: unknown,
    status: number,
    code: string,
    details?: RegExp,
  ) => {
    const before = [await footprint(t, org.id), await footprint(t, other.id)];
    const res = await publish(t, orgId, headers, payload);
    expect(res.statusCode, `${JSON.stringify(payload)}: ${res.body}`).toBe(status);
    expect(json(res).error.code).toBe(code);
    if (details) expect(json(res).error.details).toMatch(details);
    expect([await footprint(t, org.id), await footprint(t, other.id)]).toEqual(before);
  };

  it('a type of the service’s own catalogue or an alias of one: 400 naming type', async () => {
    for (const type of [
      'project.created',
      'member.added',
      'billing.updated',
      'api_key.revoked',
      'subscription.updated',
      'test',
    ]) {
      await refuses(org.id, owner.auth, { type, data: {} }, 400, 'VALIDATION_ERROR', /^type: /);
    }
  });

  it('a type that is not a custom a.b name: 400 naming type', async () => {
    for (const type of [
      'order',
      'Order.Shipped',
      'order.',
      '.shipped',
      'order..shipped',
      '1order.shipped',
      'order shipped.x',
      'order-shipped.x',
      `order.${'x'.repeat(100)}`,
      '',
    ]) {
      await refuses(org.id, owner.auth, { type, data: {} }, 400, 'VALIDATION_ERROR', /^type: /);
    }
  });

  it('data that is not a JSON object, a missing field or an unknown one: 400 naming it', async () => {
    for (const data of [[], [1], 'x', 1, true, null])
      await refuses(org.id, owner.auth, { type: 'order.shipped', data }, 400, 'VALIDATION_ERROR', /^data: /);
    await refuses(org.id, owner.auth, { type: 'order.shipped' }, 400, 'VALIDATION_ERROR', /^data: is required/);
    await refuses(org.id, owner.auth, { data: {} }, 400, 'VALIDATION_ERROR', /^type: is required/);
    await refuses(
      org.id,
      owner.auth,
      { ...ORDER, extra: 1 },
      400,
      'VALIDATION_ERROR',
      /^extra: is not an allowed field/,
    );
  });

  it('an Idempotency-Key that is empty or longer than 255 characters: 400 naming it', async () => {
    for (const key of ['', 'k'.repeat(256)]) {
      await refuses(
        org.id,
        { ...owner.auth, 'idempotency-key': key },
        ORDER,
        400,
        'VALIDATION_ERROR',
        /^idempotency-key: /,
      );
    }
  });

  it('members, viewers and non-members: 403; an unknown organization: 404', async () => {
    await refuses(org.id, member.auth, ORDER, 403, 'AUTHORIZATION_ERROR', /events:publish/);
    await refuses(org.id, viewer.auth, ORDER, 403, 'AUTHORIZATION_ERROR', /events:publish/);
    await refuses(org.id, outsider.auth, ORDER, 403, 'AUTHORIZATION_ERROR');
    await refuses('org_01jq3bz8n6m4k2j0h8g6f4d2c0', owner.auth, ORDER, 404, 'NOT_FOUND');
  });

  it('a key without write:events, a key of another organization: 403; no credential or a bad one: 401', async () => {
    await refuses(org.id, webhooksKey.headers, ORDER, 403, 'AUTHORIZATION_ERROR', /write:events/);
    await refuses(org.id, otherKey.headers, ORDER, 403, 'AUTHORIZATION_ERROR');
    await refuses(other.id, eventsKey.headers, ORDER, 403, 'AUTHORIZATION_ERROR');
    await refuses(org.id, {}, ORDER, 401, 'AUTHENTICATION_ERROR');
    await refuses(org.id, { 'x-api-key': `svc_live_${'0'.repeat(32)}` }, ORDER, 401, 'AUTHENTICATION_ERROR');
  });
});
