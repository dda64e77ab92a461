// Webhook endpoints over HTTP: the contract of create/list/get/patch/delete, event
// validation, permissions and the flat aliases (plan limits and the secret at rest:
// endpoints-limits.test.ts). No worker runs here: deliveries are only looked at as rows.
import { describe, expect, it } from 'vitest';
import { addMember, createOrg, createWebhook, deliveryRows, setPlan, signedInUser } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { owner, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';

useDeliveryApp('wh-owner', { privateUrls: false, worker: 'none' });

const HOOK = 'https://example.com/hook';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const hooksOf = (orgId: string) => `/api/v1/organizations/${orgId}/webhooks`;

describe('create, list, get, update, delete', () => {
  it('create answers 201 with the endpoint and its whsec_ secret; list omits the secret', async () => {
    const org = await createOrg(t, owner);
    const res = await t.request({
      method: 'POST',
      url: hooksOf(org.id),
      headers: owner.auth,
      payload: { url: HOOK, description: 'orders', events: ['member.added', 'project.created'] },
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = json(res);
    expect(body.success).toBe(true);
    const data = body.data;
    expect(Object.keys(data).sort()).toEqual([
      'createdAt',
      'description',
      'disabledReason',
      'events',
      'id',
      'isActive',
      'organizationId',
      'secret',
      'updatedAt',
      'url',
    ]);
    expect(data).toMatchObject({
      organizationId: org.id,
      url: HOOK,
      description: 'orders',
      events: ['member.added', 'project.created'],
      isActive: true,
      disabledReason: null,
    });
    expect(data.id).toMatch(/^wh_/);
    expect(data.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(data.createdAt).toMatch(ISO);
    expect(data.updatedAt).toMatch(ISO);

    const list = await t.request({ method: 'GET', url: hooksOf(org.id), headers: owner.auth });
    expect(list.statusCode, list.body).toBe(200);
    const listed = json(list);
    expect(listed.success).toBe(true);
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).not.toHaveProperty('secret');
    expect(list.body).not.toContain(data.secret);
    const { secret: _secret, ...withoutSecret } = data;
    expect(listed.data[0]).toEqual(withoutSecret);

    const one = await t.request({ method: 'GET', url: `${hooksOf(org.id)}/${data.id}`, headers: owner.auth });
    expect(one.statusCode, one.body).toBe(200);
    expect(json(one)).toEqual({ success: true, data: withoutSecret });
  });

  it('description and events are optional: events default to [] (all events)', async () => {
    const org = await createOrg(t, owner);
    const data = await createWebhook(t, org.id, owner, { url: HOOK });
    expect(data).toMatchObject({ events: [], description: null, isActive: true });
  });

  it('PATCH changes url, description, events and isActive; the secret stays out of the answer', async () => {
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: HOOK });
    t.clock.advance(1000);
    const res = await t.request({
      method: 'PATCH',
      url: `${hooksOf(org.id)}/${hook.id}`,
      headers: owner.auth,
      payload: {
        url: 'https://hooks.example.org/in',
        description: 'new',
        events: ['api_key.created'],
        isActive: false,
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const data = json(res).data;
    expect(data).toMatchObject({
      id: hook.id,
      url: 'https://hooks.example.org/in',
      description: 'new',
      events: ['api_key.created'],
      isActive: false,
      createdAt: hook.createdAt,
    });
    expect(data).not.toHaveProperty('secret');
    expect(Date.parse(data.updatedAt)).toBeGreaterThan(Date.parse(hook.updatedAt as string));
    const got = json(
      await t.request({ method: 'GET', url: `${hooksOf(org.id)}/${hook.id}`, headers: owner.auth }),
    ).data;
    expect(got).toEqual(data);
  });

  it('DELETE answers {success, message}; the endpoint is gone from get and list, and its pending deliveries are canceled', async () => {
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: HOOK });
    // A pending delivery (no worker runs in this file).
    const project = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: owner.auth,
      payload: { name: 'p' },
    });
    expect(project.statusCode, project.body).toBe(201);
    expect((await deliveryRows(t, hook.id)).map((d) => d.status)).toEqual(['pending']);

    const res = await t.request({ method: 'DELETE', url: `${hooksOf(org.id)}/${hook.id}`, headers: owner.auth });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toMatchObject({ success: true, message: expect.any(String) });
    expect(
      (await t.request({ method: 'GET', url: `${hooksOf(org.id)}/${hook.id}`, headers: owner.auth })).statusCode,
    ).toBe(404);
    expect(json(await t.request({ method: 'GET', url: hooksOf(org.id), headers: owner.auth })).data).toEqual([]);
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({ status: 'canceled', next_retry_at: null });
    expect(
      (await t.request({ method: 'DELETE', url: `${hooksOf(org.id)}/${hook.id}`, headers: owner.auth })).statusCode,
    ).toBe(404);
  });

  it('a disabled endpoint refuses a test event (409) until enabled again', async () => {
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: HOOK });
    const patch = (isActive: boolean) =>
      t.request({ method: 'PATCH', url: `${hooksOf(org.id)}/${hook.id}`, headers: owner.auth, payload: { isActive } });
    expect((await patch(false)).statusCode).toBe(200);
    const refused = await t.request({ method: 'POST', url: `${hooksOf(org.id)}/${hook.id}/test`, headers: owner.auth });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(await deliveryRows(t, hook.id)).toHaveLength(0);
    expect((await patch(true)).statusCode).toBe(200);
    expect(
      (await t.request({ method: 'POST', url: `${hooksOf(org.id)}/${hook.id}/test`, headers: owner.auth })).statusCode,
    ).toBe(200);
    expect(await deliveryRows(t, hook.id)).toHaveLength(1);
  });

  it('an endpoint of another organization is 404 on the organization path', async () => {
    const a = await createOrg(t, owner);
    const b = await createOrg(t, owner);
    const hook = await createWebhook(t, a.id, owner, { url: HOOK });
    for (const [method, suffix] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['GET', '/deliveries'],
      ['POST', '/test'],
      ['POST', '/rotate-secret'],
    ] as const) {
      const res = await t.request({
        method,
        url: `${hooksOf(b.id)}/${hook.id}${suffix}`,
        headers: owner.auth,
        ...(method === 'PATCH' ? { payload: { description: 'x' } } : {}),
      });
      expect(res.statusCode, `${method} ${suffix}: ${res.body}`).toBe(404);
    }
  });
});

describe('events validation', () => {
  it('unknown "foo" is 400 VALIDATION_ERROR; custom "order.shipped" and the alias "subscription.updated" are accepted', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    for (const events of [['foo'], ['member.added', 'foo'], ['Order.Shipped'], ['order.'], ['']]) {
      const res = await t.request({
        method: 'POST',
        url: hooksOf(org.id),
        headers: owner.auth,
        payload: { url: HOOK, events },
      });
      expect(res.statusCode, `${JSON.stringify(events)}: ${res.body}`).toBe(400);
      expect(json(res).error.code).toBe('VALIDATION_ERROR');
    }
    const custom = await createWebhook(t, org.id, owner, { url: HOOK, events: ['order.shipped'] });
    expect(custom.events).toEqual(['order.shipped']);
    const alias = await createWebhook(t, org.id, owner, {
      url: HOOK,
      events: ['subscription.updated', 'billing.canceled'],
    });
    expect(alias.events).toEqual(['subscription.updated', 'billing.canceled']);
    const all = await createWebhook(t, org.id, owner, {
      url: HOOK,
      events: [
        'member.added',
        'member.removed',
        'member.updated',
        'billing.updated',
        'billing.canceled',
        'api_key.created',
        'api_key.revoked',
        'project.created',
        'project.updated',
        'project.deleted',
        'test',
      ],
    });
    expect(all.events).toHaveLength(11);

    // The same rule on PATCH.
    const bad = await t.request({
      method: 'PATCH',
      url: `${hooksOf(org.id)}/${custom.id}`,
      headers: owner.auth,
      payload: { events: ['foo'] },
    });
    expect(bad.statusCode, bad.body).toBe(400);
    expect(json(bad).error.code).toBe('VALIDATION_ERROR');
  });
});

describe('permissions', () => {
  it('a viewer may list and read (200) but not create, update, delete, test or rotate (403)', async () => {
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: HOOK });
    const viewer = await signedInUser(t, 'wh-viewer');
    await addMember(t, org.id, owner, viewer, 'viewer');

    expect((await t.request({ method: 'GET', url: hooksOf(org.id), headers: viewer.auth })).statusCode).toBe(200);
    expect(
      (await t.request({ method: 'GET', url: `${hooksOf(org.id)}/${hook.id}`, headers: viewer.auth })).statusCode,
    ).toBe(200);
    expect(
      (await t.request({ method: 'GET', url: `${hooksOf(org.id)}/${hook.id}/deliveries`, headers: viewer.auth }))
        .statusCode,
    ).toBe(200);
    const create = await t.request({
      method: 'POST',
      url: hooksOf(org.id),
      headers: viewer.auth,
      payload: { url: HOOK },
    });
    expect(create.statusCode, create.body).toBe(403);
    expect(json(create).error.code).toBe('AUTHORIZATION_ERROR');
    for (const [method, suffix] of [
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/test'],
      ['POST', '/rotate-secret'],
    ] as const) {
      const res = await t.request({
        method,
        url: `${hooksOf(org.id)}/${hook.id}${suffix}`,
        headers: viewer.auth,
        ...(method === 'PATCH' ? { payload: { description: 'x' } } : {}),
      });
      expect(res.statusCode, `${method} ${suffix}: ${res.body}`).toBe(403);
    }
  });

  it('a non-member gets 403 on list, create and the flat paths; an unknown organization is 404; no token is 401', async () => {
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: HOOK });
    const stranger = await signedInUser(t, 'wh-stranger');
    expect((await t.request({ method: 'GET', url: hooksOf(org.id), headers: stranger.auth })).statusCode).toBe(403);
    expect(
      (await t.request({ method: 'POST', url: hooksOf(org.id), headers: stranger.auth, payload: { url: HOOK } }))
        .statusCode,
    ).toBe(403);
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/webhooks',
          headers: stranger.auth,
          payload: { url: HOOK, organizationId: org.id },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/webhooks/${hook.id}`, headers: stranger.auth })).statusCode,
    ).toBe(403);
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/webhooks/${hook.id}/deliveries`, headers: stranger.auth }))
        .statusCode,
    ).toBe(403);
    expect(
      (await t.request({ method: 'POST', url: `/api/v1/webhooks/${hook.id}/rotate-secret`, headers: stranger.auth }))
        .statusCode,
    ).toBe(403);

    const unknown = await t.request({ method: 'GET', url: hooksOf('org_doesnotexist'), headers: owner.auth });
    expect(unknown.statusCode, unknown.body).toBe(404);
    expect(
      (
        await t.request({
          method: 'POST',
          url: hooksOf('org_doesnotexist'),
          headers: owner.auth,
          payload: { url: HOOK },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (await t.request({ method: 'GET', url: '/api/v1/webhooks/wh_doesnotexist/deliveries', headers: owner.auth }))
        .statusCode,
    ).toBe(404);
    expect((await t.request({ method: 'GET', url: hooksOf(org.id) })).statusCode).toBe(401);
  });
});

describe('flat aliases (docs/api.md#flat-webhook-paths)', () => {
  it('POST /webhooks with organizationId in the body creates the endpoint (201 with secret)', async () => {
    const org = await createOrg(t, owner);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: owner.auth,
      payload: { url: HOOK, organizationId: org.id, events: ['test'] },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(json(res).data).toMatchObject({
      organizationId: org.id,
      url: HOOK,
      events: ['test'],
      secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/),
    });
    const missing = await t.request({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: owner.auth,
      payload: { url: HOOK },
    });
    expect(missing.statusCode, missing.body).toBe(400);
  });

  it('POST /webhooks with an API key (write:webhooks) takes the key’s organization; read:webhooks alone cannot create', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    const mk = async (scopes: string[]) => {
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/api-keys`,
        headers: owner.auth,
        payload: { name: scopes.join(' '), scopes },
      });
      expect(res.statusCode, res.body).toBe(201);
      return { 'x-api-key': json(res).plainKey as string };
    };
    const writer = await mk(['write:webhooks']);
    const reader = await mk(['read:webhooks']);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: writer,
      payload: { url: HOOK, description: 'by key' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const data = json(res).data;
    expect(data).toMatchObject({
      organizationId: org.id,
      description: 'by key',
      secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/),
    });
    const denied = await t.request({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: reader,
      payload: { url: HOOK },
    });
    expect(denied.statusCode, denied.body).toBe(403);
    const listed = await t.request({ method: 'GET', url: hooksOf(org.id), headers: reader });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(json(listed).data.map((e: { id: string }) => e.id)).toEqual([data.id]);
    // A key of this organization cannot create in another.
    const other = await createOrg(t, owner);
    const cross = await t.request({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: writer,
      payload: { url: HOOK, organizationId: other.id },
    });
    expect(cross.statusCode, cross.body).toBe(403);
  });

  it('GET /webhooks/{id}/deliveries, POST /webhooks/{id}/test and POST /webhooks/{id}/rotate-secret', async () => {
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: HOOK, events: ['member.added'] });

    const tested = await t.request({ method: 'POST', url: `/api/v1/webhooks/${hook.id}/test`, headers: owner.auth });
    expect(tested.statusCode, tested.body).toBe(200);
    const { deliveryId } = json(tested).data;
    expect(deliveryId).toEqual(expect.any(String));

    const list = await t.request({ method: 'GET', url: `/api/v1/webhooks/${hook.id}/deliveries`, headers: owner.auth });
    expect(list.statusCode, list.body).toBe(200);
    const page = json(list);
    expect(page).toMatchObject({ success: true, total: 1, page: 1, pageSize: 20, hasMore: false });
    expect(page.data[0]).toMatchObject({
      id: deliveryId,
      endpointId: hook.id,
      eventType: 'test',
      status: 'pending',
      attempts: 0,
      responseStatus: null,
      responseBody: null,
      deliveredAt: null,
      payload: {
        type: 'test',
        timestamp: expect.stringMatching(ISO),
        data: { message: expect.any(String), webhookId: hook.id },
      },
    });
    expect(Object.keys(page.data[0]).sort()).toEqual(
      [
        'attempts',
        'createdAt',
        'deliveredAt',
        'endpointId',
        'eventType',
        'id',
        'lastError',
        'nextRetryAt',
        'payload',
        'responseBody',
        'responseStatus',
        'status',
        'updatedAt',
      ].sort(),
    );

    const rotated = await t.request({
      method: 'POST',
      url: `/api/v1/webhooks/${hook.id}/rotate-secret`,
      headers: owner.auth,
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const { secret } = json(rotated).data;
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(secret).not.toBe(hook.secret);
    expect(json(rotated).data).toMatchObject({ id: hook.id, organizationId: org.id });

    // get / patch / delete on the flat path too.
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/webhooks/${hook.id}`, headers: owner.auth })).statusCode,
    ).toBe(200);
    const patched = await t.request({
      method: 'PATCH',
      url: `/api/v1/webhooks/${hook.id}`,
      headers: owner.auth,
      payload: { description: 'flat' },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(json(patched).data.description).toBe('flat');
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/webhooks/${hook.id}`, headers: owner.auth })).statusCode,
    ).toBe(200);
    expect(
      (await t.request({ method: 'GET', url: `/api/v1/webhooks/${hook.id}`, headers: owner.auth })).statusCode,
    ).toBe(404);
  });

  it('deliveries are paginated newest first', async () => {
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: HOOK });
    for (let i = 0; i < 3; i++) {
      t.clock.advance(1000);
      expect(
        (await t.request({ method: 'POST', url: `${hooksOf(org.id)}/${hook.id}/test`, headers: owner.auth }))
          .statusCode,
      ).toBe(200);
    }
    const first = json(
      await t.request({
        method: 'GET',
        url: `${hooksOf(org.id)}/${hook.id}/deliveries?pageSize=2`,
        headers: owner.auth,
      }),
    );
    expect(first).toMatchObject({ total: 3, page: 1, pageSize: 2, hasMore: true });
    const second = json(
      await t.request({
        method: 'GET',
        url: `${hooksOf(org.id)}/${hook.id}/deliveries?pageSize=2&page=2`,
        headers: owner.auth,
      }),
    );
    expect(second).toMatchObject({ total: 3, page: 2, pageSize: 2, hasMore: false });
    const created = [...first.data, ...second.data].map((d: { createdAt: string }) => Date.parse(d.createdAt));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(new Set(created).size).toBe(3);
  });
});
