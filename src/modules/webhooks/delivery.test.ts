// Signed delivery to real local receivers (docs/api.md#delivery-requests): the request on the wire, verification with the
// official `stripe` package, rotation, event filters and the alias, the test event, and that a
// rolled-back change sends nothing.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  addMember,
  attemptRows,
  createOrg,
  createWebhook,
  deliveryRows,
  rowsOf,
  setPlan,
  signedInUser,
  stripeVerify,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { recordEvent } from '../../platform/outbox.js';
import { drain, owner, createProject, t, useDeliveryApp, worker } from '../../../test/fixtures/webhooks.js';
import { waitUntil } from '../../../test/expect.js';

const { receiver } = useDeliveryApp('dlv-owner');

describe('the request', () => {
  it('is a POST of compact {id, type, timestamp, data} with the spec headers, signed so that stripe.webhooks.constructEvent accepts it', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const recordedAt = t.clock.now().toISOString();
    const project = await createProject(org.id, 'Launch');
    await drain();

    expect(rx.received).toHaveLength(1);
    const req = rx.received[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('Tenantry-Webhooks/1.0');
    expect(req.headers['x-webhook-event']).toBe('project.created');
    const [row] = await deliveryRows(t, hook.id);
    expect(req.headers['x-webhook-delivery-id']).toBe(row!.id);
    const now = Math.floor(t.clock.now().getTime() / 1000);
    expect(req.headers['x-webhook-signature']).toMatch(new RegExp(`^t=${now},v1=[0-9a-f]{64}$`));

    // Compact JSON, keys in the order id, type, timestamp, data; the id is the event's.
    const parsed = JSON.parse(req.body) as Record<string, unknown>;
    expect(req.body).toBe(JSON.stringify(parsed));
    expect(Object.keys(parsed)).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(parsed).toEqual({
      id: row!.event_id,
      type: 'project.created',
      timestamp: recordedAt,
      data: { projectId: project.id, organizationId: org.id, name: 'Launch' },
    });
    expect(parsed.id).toMatch(/^evt_[0-9a-z]{26}$/);

    const event = stripeVerify(t, req, hook.secret);
    expect(event).toEqual(parsed);
    // A tampered body or another secret does not verify.
    expect(() => stripeVerify(t, { ...req, body: req.body.replace('Launch', 'Lunch') }, hook.secret)).toThrow();
    expect(() => stripeVerify(t, req, `whsec_${'0'.repeat(64)}`)).toThrow();

    expect(row).toMatchObject({
      status: 'delivered',
      attempts: 1,
      response_status: 204,
      last_error: null,
      next_retry_at: null,
    });
    expect(row!.delivered_at).not.toBeNull();
    const attempts = await attemptRows(t, row!.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ attempt: 1, response_status: 204, error: null });
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(0);

    const listed = json(
      await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/deliveries`,
        headers: owner.auth,
      }),
    );
    expect(listed.data[0]).toMatchObject({
      id: row!.id,
      eventType: 'project.created',
      status: 'delivered',
      attempts: 1,
      responseStatus: 204,
      deliveredAt: expect.any(String),
      nextRetryAt: null,
      payload: expect.objectContaining({ type: parsed.type, timestamp: parsed.timestamp, data: parsed.data }),
    });
  });

  it('after rotate-secret the next delivery verifies with the new secret and fails with the old one', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url, events: ['project.created'] });
    await createProject(org.id, 'before');
    await drain();
    expect(rx.received).toHaveLength(1);
    expect(stripeVerify(t, rx.received[0]!, hook.secret)).toMatchObject({ type: 'project.created' });

    const rotated = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/rotate-secret`,
      headers: owner.auth,
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const fresh = json(rotated).data.secret as string;
    expect(fresh).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(fresh).not.toBe(hook.secret);

    await createProject(org.id, 'after');
    await drain();
    expect(rx.received).toHaveLength(2);
    const after = rx.received[1]!;
    expect(stripeVerify(t, after, fresh)).toMatchObject({ type: 'project.created', data: { name: 'after' } });
    expect(() => stripeVerify(t, after, hook.secret)).toThrow(/signature/i);
  });
});

describe('which endpoints receive an event', () => {
  it('an endpoint subscribed to member.added does not get project.created; one with empty events gets everything', async () => {
    const only = await receiver();
    const all = await receiver();
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    await createWebhook(t, org.id, owner, { url: only.url, events: ['member.added'] });
    await createWebhook(t, org.id, owner, { url: all.url, events: [] });

    await createProject(org.id);
    await drain();
    expect(all.received.map((r) => r.headers['x-webhook-event'])).toEqual(['project.created']);
    expect(only.received).toHaveLength(0);

    const member = await signedInUser(t, 'dlv-member');
    const membership = await addMember(t, org.id, owner, member, 'member');
    await drain();
    expect(only.received.map((r) => r.headers['x-webhook-event'])).toEqual(['member.added']);
    expect(all.received.map((r) => r.headers['x-webhook-event'])).toEqual(['project.created', 'member.added']);
    expect(JSON.parse(only.received[0]!.body).data).toMatchObject({
      memberId: membership.id,
      organizationId: org.id,
      userId: member.userId,
      email: member.email,
      role: 'member',
    });
    // Both endpoints got the same event, each under its own delivery id.
    expect(only.received[0]!.body).toBe(all.received[1]!.body);
    expect(only.received[0]!.headers['x-webhook-delivery-id']).not.toBe(
      all.received[1]!.headers['x-webhook-delivery-id'],
    );
  });

  it('"subscription.updated" receives billing.updated (sent under that name) but not billing.canceled', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url, events: ['subscription.updated'] });
    const data = {
      organizationId: org.id,
      plan: 'pro',
      status: 'active',
      subscriptionId: 'sub_1',
      currentPeriodEnd: '2026-04-01T00:00:00.000Z',
      cancelAtPeriodEnd: false,
    };
    await t.deps.db.transaction(async (tx) => {
      await recordEvent(t.deps, tx, org.id, 'billing.updated', data);
      await recordEvent(t.deps, tx, org.id, 'billing.canceled', {
        organizationId: org.id,
        subscriptionId: 'sub_1',
        cancelAt: null,
      });
    });
    worker.wake();
    await drain();
    expect(rx.received).toHaveLength(1);
    expect(rx.received[0]!.headers['x-webhook-event']).toBe('billing.updated');
    expect(stripeVerify(t, rx.received[0]!, hook.secret)).toMatchObject({ type: 'billing.updated', data });
  });

  it('a custom type is delivered to its subscribers', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    await createWebhook(t, org.id, owner, { url: rx.url, events: ['order.shipped'] });
    await t.deps.db.transaction(async (tx) => {
      await recordEvent(t.deps, tx, org.id, 'order.created', { orderId: 'o1' });
      await recordEvent(t.deps, tx, org.id, 'order.shipped', { orderId: 'o1' });
    });
    worker.wake();
    await drain();
    expect(rx.received.map((r) => JSON.parse(r.body))).toEqual([
      expect.objectContaining({ type: 'order.shipped', data: { orderId: 'o1' } }),
    ]);
  });

  it('a disabled endpoint receives nothing; enabled again, it receives what follows', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const patch = (isActive: boolean) =>
      t.request({
        method: 'PATCH',
        url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`,
        headers: owner.auth,
        payload: { isActive },
      });
    expect((await patch(false)).statusCode).toBe(200);
    await createProject(org.id, 'quiet');
    await drain();
    expect(rx.received).toHaveLength(0);
    expect(await deliveryRows(t, hook.id)).toHaveLength(0);
    expect((await patch(true)).statusCode).toBe(200);
    await createProject(org.id, 'loud');
    await drain();
    expect(rx.received.map((r) => JSON.parse(r.body).data.name)).toEqual(['loud']);
  });

  it('POST …/test sends a `test` event with {message, webhookId}, whatever the endpoint’s filter', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url, events: ['member.added'] });
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/test`,
      headers: owner.auth,
    });
    expect(res.statusCode, res.body).toBe(200);
    await drain();
    expect(rx.received).toHaveLength(1);
    const req = rx.received[0]!;
    expect(req.headers['x-webhook-event']).toBe('test');
    expect(req.headers['x-webhook-delivery-id']).toBe(json(res).data.deliveryId);
    const event = stripeVerify(t, req, hook.secret);
    expect(event).toEqual({
      id: json(res).data.eventId,
      type: 'test',
      timestamp: expect.any(String),
      data: { message: expect.any(String), webhookId: hook.id },
    });
    expect((event.data as { message: string }).message.length).toBeGreaterThan(0);
  });
});

describe('the outbox', () => {
  it('a rolled-back change sends nothing and leaves no event nor delivery row', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const eventsBefore = rowsOf(
      await t.deps.db.execute(sql`select id from events where organization_id = ${org.id}`),
    ).length;
    await expect(
      t.deps.db.transaction(async (tx) => {
        const { deliveryIds } = await recordEvent(t.deps, tx, org.id, 'project.created', {
          projectId: 'prj_x',
          organizationId: org.id,
          name: 'ghost',
        });
        expect(deliveryIds).toHaveLength(1);
        // Give a worker every chance to see it before the rollback.
        worker.wake();
        await new Promise((r) => setTimeout(r, 300));
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    worker.wake();
    await drain();
    // And once more: the worker claims again and has nothing in flight (a delivery would be at the receiver).
    const looked = worker.stats().claims;
    await waitUntil(
      'the worker has claimed again',
      () => worker.stats().claims > looked && worker.stats().inFlight === 0,
    );
    expect(rx.received).toHaveLength(0);
    expect(await deliveryRows(t, hook.id)).toHaveLength(0);
    expect(rowsOf(await t.deps.db.execute(sql`select id from events where organization_id = ${org.id}`))).toHaveLength(
      eventsBefore,
    );

    // A committed one right after is delivered.
    await createProject(org.id, 'real');
    await drain();
    expect(rx.received.map((r) => JSON.parse(r.body).data.name)).toEqual(['real']);
  });

  it('a failed API request (validation error) records no event', async () => {
    const rx = await receiver();
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: owner.auth,
      payload: { name: '' },
    });
    expect(res.statusCode).toBe(400);
    await drain();
    expect(rx.received).toHaveLength(0);
    expect(await deliveryRows(t, hook.id)).toHaveLength(0);
  });
});

describe('WEBHOOK_ALLOW_PRIVATE_URLS=true', () => {
  it('lifts the address rules only: loopback names and addresses are accepted, other schemes still refused', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    for (const url of ['http://localhost:9/x', 'http://127.0.0.1:9/', 'http://[::1]:9/', 'http://intranet/'])
      await createWebhook(t, org.id, owner, { url });
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'not a url']) {
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/webhooks`,
        headers: owner.auth,
        payload: { url },
      });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
      expect(json(res).error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('isolation between endpoints', () => {
  it('a slow endpoint does not hold back the others', async () => {
    const slow = await receiver(() => {
      // Never answers (the default 30 s timeout applies); closed in afterAll.
    });
    const fast = await receiver();
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    await createWebhook(t, org.id, owner, { url: slow.url });
    await createWebhook(t, org.id, owner, { url: fast.url });
    for (let i = 0; i < 5; i++) await createProject(org.id, `p${i}`);
    worker.wake();
    await fast.waitFor(5, 20_000);
    await slow.waitFor(1, 20_000);
    expect(fast.received).toHaveLength(5);
  });
});
