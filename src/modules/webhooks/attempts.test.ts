// GET …/webhooks/{id}/deliveries/{deliveryId}/attempts (docs/api.md#deliveries), on both path
// shapes: the attempts of a delivery retried by a real worker against a local receiver (a 500, a
// redirect, a dropped connection, then a 200), oldest first and capped at the newest 100; tenant
// isolation (another organization's or endpoint's delivery is 404), validation, roles and API-key scopes.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  attemptRows,
  createApiKey,
  createOrg,
  createWebhook,
  deliveryRows,
  type Receiver,
  setPlan,
  signedInUser,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { after, createProject, drain, owner, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';

const fx = useDeliveryApp('attempts-owner', { freshTokens: true });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ELSEWHERE = 'http://example.com/elsewhere';
const orgPath = (orgId: string, hookId: string, deliveryId: string) =>
  `/api/v1/organizations/${orgId}/webhooks/${hookId}/deliveries/${deliveryId}/attempts`;
const flatPath = (hookId: string, deliveryId: string) => `/api/v1/webhooks/${hookId}/deliveries/${deliveryId}/attempts`;
const get = (url: string, headers: Record<string, string>) => t.request({ method: 'GET', url, headers });

/**
 * An organization (pro plan: two endpoints, keys) whose endpoint received one project.created
 * event, answered 500, then a redirect, then a dropped connection, then 200: four attempts.
 */
let org: { id: string };
let hook: { id: string };
let delivery: string;
let rx: Receiver;

/** An event of the organization written straight into the database, for deliveries written the same way. */
const storedEvent = (id: string) =>
  t.deps.db.execute(
    sql`insert into events (organization_id, id, type, data, created_at) values (${org.id}, ${id}, 'order.shipped', '{}'::jsonb, now())`,
  );

beforeAll(async () => {
  let calls = 0;
  rx = await fx.receiver((_req, res) => {
    calls++;
    if (calls === 1) res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
    else if (calls === 2) res.writeHead(302, { location: ELSEWHERE }).end();
    else if (calls === 3) res.socket?.destroy();
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  org = await createOrg(t, owner);
  await setPlan(t, org.id, 'pro');
  hook = await createWebhook(t, org.id, owner, { url: rx.url, events: ['project.created'] });
  await createProject(org.id);
  await drain();
  await after(60);
  await after(300);
  await after(900);
  const [d] = await deliveryRows(t, hook.id);
  expect(d).toMatchObject({ status: 'delivered', attempts: 4 });
  delivery = d!.id as string;
});

describe('the attempts of a retried delivery', () => {
  it('lists every attempt oldest first: status codes, errors, durations and times as recorded', async () => {
    const res = await get(orgPath(org.id, hook.id, delivery), owner.auth);
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['data', 'success']);
    expect(body.success).toBe(true);
    const data = body.data as Array<Record<string, unknown>>;
    expect(data.map((a) => Object.keys(a).sort())).toEqual(
      Array(4).fill(['attempt', 'createdAt', 'durationMs', 'error', 'responseBody', 'responseStatus']),
    );
    expect(data.map((a) => [a.attempt, a.responseStatus, a.responseBody])).toEqual([
      [1, 500, 'boom'],
      [2, 302, ''],
      [3, null, null],
      [4, 200, 'ok'],
    ]);
    expect(data[0]!.error).toBeNull();
    expect(data[1]!.error).toBe(`redirect to ${ELSEWHERE} not followed`);
    expect(data[2]!.error).toEqual(expect.stringMatching(/\S/));
    expect(data[3]!.error).toBeNull();

    // As recorded: the same durations and times, 0, +60, +360 and +1260 s after the first.
    const rows = await attemptRows(t, delivery);
    expect(data.map((a) => a.durationMs)).toEqual(rows.map((r) => r.duration_ms));
    expect(data.map((a) => a.error)).toEqual(rows.map((r) => r.error));
    for (const a of data) {
      expect(Number.isInteger(a.durationMs) && (a.durationMs as number) >= 0).toBe(true);
      expect(a.createdAt).toMatch(ISO);
    }
    const times = data.map((a) => new Date(a.createdAt as string).getTime());
    expect(times.map((x) => (x - times[0]!) / 1000)).toEqual([0, 60, 360, 1260]);
    expect(data.map((a) => a.createdAt)).toEqual(rows.map((r) => new Date(r.created_at as string).toISOString()));
  });

  it('the flat path answers the same', async () => {
    const a = await get(orgPath(org.id, hook.id, delivery), owner.auth);
    const b = await get(flatPath(hook.id, delivery), owner.auth);
    expect(b.statusCode, b.body).toBe(200);
    expect(json(b)).toEqual(json(a));
  });

  it('a delivery canceled before its first attempt has none: 200 with an empty list', async () => {
    const quiet = await createWebhook(t, org.id, owner, { url: rx.url, events: ['order.shipped'] });
    // Written straight into the database, canceled: no worker sends it.
    await storedEvent('evt_attempts_none');
    await t.deps.db.execute(sql`
      insert into webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, created_at, updated_at)
      values (${org.id}, 'dlv_attempts_none', ${quiet.id}, 'evt_attempts_none', 'order.shipped', 'canceled', now(), now())`);
    const res = await get(orgPath(org.id, quiet.id, 'dlv_attempts_none'), owner.auth);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ success: true, data: [] });
  });

  it('at most the newest 100 attempts, oldest of them first', async () => {
    const many = await createWebhook(t, org.id, owner, { url: rx.url, events: ['order.shipped'] });
    // 105 recorded attempts of a failed delivery, written straight into the database.
    await storedEvent('evt_attempts_many');
    await t.deps.db.execute(sql`
      insert into webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, attempts, created_at, updated_at)
      values (${org.id}, 'dlv_attempts_many', ${many.id}, 'evt_attempts_many', 'order.shipped', 'failed', 105, now(), now())`);
    await t.deps.db.execute(sql`
      insert into webhook_attempts (organization_id, id, delivery_id, attempt, response_status, response_body, error, duration_ms, created_at)
      select ${org.id}, 'att_many_' || n, 'dlv_attempts_many', n, 500, 'no', null, n, now() + n * interval '1 second'
      from generate_series(1, 105) as n`);
    const res = await get(orgPath(org.id, many.id, 'dlv_attempts_many'), owner.auth);
    expect(res.statusCode, res.body).toBe(200);
    const data = json(res).data as Array<{ attempt: number; durationMs: number }>;
    expect(data.map((a) => a.attempt)).toEqual(Array.from({ length: 100 }, (_, i) => i + 6));
    expect(data.map((a) => a.durationMs)).toEqual(Array.from({ length: 100 }, (_, i) => i + 6));
  });
});

describe('tenant isolation and validation', () => {
  const deliveryNotFound = {
    success: false,
    error: { code: 'NOT_FOUND', message: 'Delivery not found', details: expect.any(String) },
  };
  const endpointNotFound = {
    success: false,
    error: { code: 'NOT_FOUND', message: 'Webhook endpoint not found', details: expect.any(String) },
  };

  it("another organization's path: its endpoint cannot reach this delivery, nor this endpoint through it (404)", async () => {
    const other = await createOrg(t, owner);
    const otherHook = await createWebhook(t, other.id, owner, { url: rx.url, events: ['project.created'] });
    const viaOtherHook = await get(orgPath(other.id, otherHook.id, delivery), owner.auth);
    expect(viaOtherHook.statusCode, viaOtherHook.body).toBe(404);
    expect(json(viaOtherHook)).toEqual(deliveryNotFound);
    const viaOtherOrg = await get(orgPath(other.id, hook.id, delivery), owner.auth);
    expect(viaOtherOrg.statusCode, viaOtherOrg.body).toBe(404);
    expect(json(viaOtherOrg)).toEqual(endpointNotFound);
    const flat = await get(flatPath(otherHook.id, delivery), owner.auth);
    expect(flat.statusCode, flat.body).toBe(404);
    expect(json(flat)).toEqual(deliveryNotFound);
  });

  it('someone who is not a member is refused (403), on both paths', async () => {
    const outsider = await signedInUser(t, 'attempts-outsider');
    for (const url of [orgPath(org.id, hook.id, delivery), flatPath(hook.id, delivery)]) {
      const res = await get(url, outsider.auth);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(403);
      expect(json(res)).toEqual({
        success: false,
        error: {
          code: 'AUTHORIZATION_ERROR',
          message: 'You are not a member of this organization',
          details: expect.any(String),
        },
      });
    }
  });

  it("another endpoint's delivery in the same organization is 404", async () => {
    const second = await createWebhook(t, org.id, owner, { url: rx.url, events: ['project.created'] });
    for (const url of [orgPath(org.id, second.id, delivery), flatPath(second.id, delivery)]) {
      const res = await get(url, owner.auth);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(404);
      expect(json(res)).toEqual(deliveryNotFound);
    }
  });

  it('an unknown delivery is 404; an unknown endpoint is 404; an id longer than 64 characters is 400', async () => {
    const unknown = await get(orgPath(org.id, hook.id, 'dlv_00000000000000000000000000'), owner.auth);
    expect(unknown.statusCode, unknown.body).toBe(404);
    expect(json(unknown)).toEqual(deliveryNotFound);
    const unknownHook = await get(orgPath(org.id, 'wh_00000000000000000000000000', delivery), owner.auth);
    expect(unknownHook.statusCode, unknownHook.body).toBe(404);
    expect(json(unknownHook)).toEqual(endpointNotFound);
    const malformed = await get(orgPath(org.id, hook.id, 'x'.repeat(65)), owner.auth);
    expect(malformed.statusCode, malformed.body).toBe(400);
    expect(json(malformed).error).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});

describe('who may read them', () => {
  it('every role reads deliveries (webhooks:read), the viewer included', async () => {
    const viewer = await signedInUser(t, 'attempts-viewer');
    await addMember(t, org.id, owner, viewer, 'viewer');
    for (const url of [orgPath(org.id, hook.id, delivery), flatPath(hook.id, delivery)]) {
      const res = await get(url, viewer.auth);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      expect(json(res).data).toHaveLength(4);
    }
  });

  it('an API key needs read:webhooks (or write:webhooks): without it 403, with it 200', async () => {
    const without = await createApiKey(t, org.id, owner, ['read:projects']);
    for (const url of [orgPath(org.id, hook.id, delivery), flatPath(hook.id, delivery)]) {
      const res = await get(url, without.headers);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(403);
      expect(json(res).error).toMatchObject({ code: 'AUTHORIZATION_ERROR' });
    }
    for (const scope of ['read:webhooks', 'write:webhooks']) {
      const key = await createApiKey(t, org.id, owner, [scope]);
      for (const url of [orgPath(org.id, hook.id, delivery), flatPath(hook.id, delivery)]) {
        const res = await get(url, key.headers);
        expect(res.statusCode, `${scope} ${url}: ${res.body}`).toBe(200);
        expect((json(res).data as Array<{ attempt: number }>).map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
      }
    }
  });

  it("a key of another organization is refused (403) for this one's delivery, on both paths", async () => {
    const other = await createOrg(t, owner);
    await setPlan(t, other.id, 'pro');
    const key = await createApiKey(t, other.id, owner, ['read:webhooks']);
    for (const url of [orgPath(org.id, hook.id, delivery), flatPath(hook.id, delivery)]) {
      const res = await get(url, key.headers);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(403);
      expect(json(res)).toEqual({
        success: false,
        error: {
          code: 'AUTHORIZATION_ERROR',
          message: 'This API key belongs to another organization',
          details: expect.any(String),
        },
      });
    }
  });
});
