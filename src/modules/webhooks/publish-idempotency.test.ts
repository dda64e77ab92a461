// The Idempotency-Key of POST /organizations/{orgId}/events through HTTP: a repeat within 24 h in
// the same organization answers the first answer and records nothing (also when the repeats run
// at once), the same key with another request answers 409, each organization has its own keys,
// and after 24 h (the app's fake clock moved) the key makes a new event.
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createOrg, createWebhook, eventsOf, login, type MadeKey } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { owner, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';
import { footprint, publish } from '../../../test/fixtures/publish.js';

useDeliveryApp('publish-idem-owner', { worker: 'none' });
let org: { id: string };
let key: MadeKey;
let keyCount = 0;
const ORDER = { type: 'order.shipped', data: { orderId: 'ord_7', total: 12.5 } };
const newKey = () => `publish-key-${Date.now().toString(36)}-${++keyCount}`;
// API keys do not expire with the clock, so they keep working after it is moved by a day.
// Access tokens do: a person signs in again after the clock has moved.
const ownerAuth = async () => ({ authorization: `Bearer ${(await login(t, owner.email)).accessToken}` });
const send = (idempotencyKey: string, payload: unknown = ORDER, orgId = org.id, headers = key.headers) =>
  publish(t, orgId, { ...headers, 'idempotency-key': idempotencyKey }, payload);

beforeAll(async () => {
  org = await createOrg(t, owner);
  await createWebhook(t, org.id, owner, { url: 'http://127.0.0.1:9/hook' });
  key = await createApiKey(t, org.id, owner, ['write:events']);
});

describe('Idempotency-Key', () => {
  it('repeated: the same status and body, Idempotent-Replayed: true, and no second event or delivery', async () => {
    const k = newKey();
    const before = await footprint(t, org.id);
    const first = await send(k);
    expect(first.statusCode, first.body).toBe(201);
    expect(json(first).data).toMatchObject({ type: 'order.shipped', deliveries: 1 });
    const afterFirst = await footprint(t, org.id);
    expect(afterFirst).toMatchObject({
      events: before.events + 1,
      deliveries: before.deliveries + 1,
      keys: before.keys + 1,
    });

    t.clock.advance(60 * 60 * 1000);
    // The key is the organization's: a person repeating it gets the key's answer too; the data's key order does not matter.
    for (const [headers, payload] of [
      [key.headers, ORDER],
      [await ownerAuth(), { type: ORDER.type, data: { total: 12.5, orderId: 'ord_7' } }],
    ] as const) {
      const again = await send(k, payload, org.id, headers);
      expect(again.statusCode).toBe(201);
      expect(again.body).toBe(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
    }
    expect(await footprint(t, org.id)).toEqual(afterFirst);
  });

  it('repeated with another type or data: 409 CONFLICT, nothing recorded', async () => {
    const k = newKey();
    expect((await send(k)).statusCode).toBe(201);
    const before = await footprint(t, org.id);
    for (const payload of [
      { ...ORDER, type: 'order.created' },
      { ...ORDER, data: { orderId: 'ord_8', total: 12.5 } },
      { ...ORDER, data: {} },
    ]) {
      const res = await send(k, payload);
      expect(res.statusCode, res.body).toBe(409);
      expect(json(res).error).toMatchObject({
        code: 'CONFLICT',
        message: 'This Idempotency-Key was used for another request',
      });
    }
    expect(await footprint(t, org.id)).toEqual(before);
  });

  it('of a refused request is not kept: the same key then records the event', async () => {
    const k = newKey();
    const before = await footprint(t, org.id);
    expect((await send(k, { type: 'project.created', data: {} })).statusCode).toBe(400);
    expect((await send(k, ORDER, org.id, { 'x-api-key': `svc_live_${'0'.repeat(32)}` })).statusCode).toBe(401);
    expect(await footprint(t, org.id)).toEqual(before);
    const res = await send(k);
    expect(res.statusCode, res.body).toBe(201);
    expect(await footprint(t, org.id)).toMatchObject({ events: before.events + 1, keys: before.keys + 1 });
  });

  it('of 255 characters is accepted', async () => {
    const k = `${newKey()}-`.padEnd(255, 'x');
    const first = await send(k);
    expect(first.statusCode, first.body).toBe(201);
    expect((await send(k)).body).toBe(first.body);
  });

  it('sent by 5 requests at once: one event, five identical answers', async () => {
    const k = newKey();
    const before = await footprint(t, org.id);
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(k)));
    expect(answers.map((a) => a.statusCode)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(4);
    expect(await footprint(t, org.id)).toMatchObject({
      events: before.events + 1,
      deliveries: before.deliveries + 1,
      keys: before.keys + 1,
    });
  });

  it('is per organization: the same key in two organizations makes two events', async () => {
    const person = { auth: await ownerAuth() };
    const second = await createOrg(t, person);
    const secondKey = await createApiKey(t, second.id, person, ['write:events']);
    const k = newKey();
    const a = await send(k);
    const b = await send(k, ORDER, second.id, secondKey.headers);
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect(json(a).data.id).not.toBe(json(b).data.id);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    const published = async (orgId: string) =>
      (await eventsOf(t, orgId)).filter((e) => e.type === 'order.shipped').map((e) => e.id as string);
    expect(await published(second.id)).toEqual([json(b).data.id]);
    expect(await published(org.id)).toContain(json(a).data.id);
    expect(await footprint(t, second.id)).toMatchObject({ keys: 1 });
  });

  it('counts for 24 hours: a day after its first use it makes a new event, whose answer is then the one repeated', async () => {
    const k = newKey();
    const first = await send(k);
    expect(first.statusCode).toBe(201);
    t.clock.advance(24 * 60 * 60 * 1000 - 1);
    expect((await send(k)).body).toBe(first.body);

    t.clock.advance(1);
    const before = await footprint(t, org.id);
    const renewed = await send(k, { ...ORDER, data: { orderId: 'ord_9' } });
    expect(renewed.statusCode, renewed.body).toBe(201);
    expect(renewed.headers['idempotent-replayed']).toBeUndefined();
    expect(json(renewed).data.id).not.toBe(json(first).data.id);
    expect(await footprint(t, org.id)).toMatchObject({ events: before.events + 1, keys: before.keys });

    t.clock.advance(60 * 1000);
    const again = await send(k, { ...ORDER, data: { orderId: 'ord_9' } });
    expect(again.body).toBe(renewed.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });
});
