// Attack tests (outside review): custom events, idempotency, endpoint controls across tenants.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { json, queryRows } from './harness.js';
import { t, useApp } from './fixtures/app.js';
import {
  addMember,
  createApiKey,
  createOrg,
  createWebhook,
  setPlan,
  signedInUser,
  type SignedInUser,
} from './factories.js';

let a: SignedInUser;
let b: SignedInUser;
let orgA: { id: string };
let orgB: { id: string };
let hookA: { id: string };
let hookB: { id: string };

useApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
beforeAll(async () => {
  a = await signedInUser(t, 'whA');
  b = await signedInUser(t, 'whB');
  orgA = await createOrg(t, a);
  orgB = await createOrg(t, b);
  await setPlan(t, orgA.id, 'pro');
  await setPlan(t, orgB.id, 'pro');
  hookA = await createWebhook(t, orgA.id, a, { url: 'http://127.0.0.1:9/a', events: ['*'] }).catch(async () =>
    createWebhook(t, orgA.id, a, { url: 'http://127.0.0.1:9/a', events: ['order.shipped'] }),
  );
  hookB = await createWebhook(t, orgB.id, b, {
    url: 'http://127.0.0.1:9/b',
    events: ['order.shipped', 'member.added'],
  });
});

const publish = (orgId: string, headers: Record<string, string>, payload: unknown) =>
  t.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/events`,
    headers,
    payload: payload as Record<string, unknown>,
  });
const eventCount = async (orgId: string) =>
  (await queryRows<{ n: number }>(t, sql`select count(*)::int as n from events where organization_id = ${orgId}`))[0]!
    .n;

describe('publishing', () => {
  it("A's owner cannot publish into B", async () => {
    const before = await eventCount(orgB.id);
    const res = await publish(orgB.id, a.auth, { type: 'order.shipped', data: {} });
    expect([403, 404]).toContain(res.statusCode);
    expect(await eventCount(orgB.id)).toBe(before);
  });

  it("A's write:events key cannot publish into B", async () => {
    const key = await createApiKey(t, orgA.id, a, ['write:events']);
    const before = await eventCount(orgB.id);
    const res = await publish(orgB.id, key.headers, { type: 'order.shipped', data: {} });
    expect([401, 403, 404]).toContain(res.statusCode);
    expect(await eventCount(orgB.id)).toBe(before);
  });

  it('a key with write:webhooks but not write:events cannot publish', async () => {
    const key = await createApiKey(t, orgA.id, a, ['write:webhooks', 'read:webhooks']);
    expect((await publish(orgA.id, key.headers, { type: 'order.shipped', data: {} })).statusCode).toBe(403);
  });

  const impersonations = [
    'member.added',
    'billing.updated',
    'subscription.updated',
    'webhook_endpoint.disabled',
    'test',
    'Member.Added',
    'member.added ',
    ' member.added',
    'member.added\u0000',
    'member.\u0430dded',
    'api_key.revoked',
    '*',
    'member.*',
    'member..added',
  ];
  for (const type of impersonations) {
    it(`type ${JSON.stringify(type)} is refused`, async () => {
      const before = await eventCount(orgA.id);
      const res = await publish(orgA.id, a.auth, { type, data: {} });
      expect(res.statusCode, res.body).toBe(400);
      expect(await eventCount(orgA.id)).toBe(before);
    });
  }

  it('the same Idempotency-Key in two organizations: two events, neither sees the other', async () => {
    const key = `k-${Date.now()}`;
    const ra = await publish(orgA.id, { ...a.auth, 'idempotency-key': key }, { type: 'order.shipped', data: { n: 1 } });
    expect(ra.statusCode, ra.body).toBe(201);
    const rb = await publish(orgB.id, { ...b.auth, 'idempotency-key': key }, { type: 'order.shipped', data: { n: 1 } });
    expect(rb.statusCode, rb.body).toBe(201);
    expect(json(rb).data.id).not.toBe(json(ra).data.id);
    expect(rb.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a repeated key with other data: 409, nothing recorded', async () => {
    const key = `k2-${Date.now()}`;
    expect(
      (await publish(orgA.id, { ...a.auth, 'idempotency-key': key }, { type: 'order.shipped', data: { n: 1 } }))
        .statusCode,
    ).toBe(201);
    const before = await eventCount(orgA.id);
    const res = await publish(
      orgA.id,
      { ...a.auth, 'idempotency-key': key },
      { type: 'order.shipped', data: { n: 2 } },
    );
    expect(res.statusCode).toBe(409);
    expect(await eventCount(orgA.id)).toBe(before);
  });

  it('a repeated key with the same data but other key order replays', async () => {
    const key = `k3-${Date.now()}`;
    const first = await publish(
      orgA.id,
      { ...a.auth, 'idempotency-key': key },
      { type: 'order.shipped', data: { x: 1, y: 2 } },
    );
    const again = await publish(
      orgA.id,
      { ...a.auth, 'idempotency-key': key },
      { type: 'order.shipped', data: { y: 2, x: 1 } },
    );
    expect(again.statusCode).toBe(201);
    expect(json(again).data.id).toBe(json(first).data.id);
  });
});

describe('endpoint controls across tenants', () => {
  for (const action of ['rotate-secret', 'recover', 'test']) {
    it(`${action} on B's endpoint through A's org path: 404, nothing changed`, async () => {
      const [before] = await queryRows<{ s: string }>(
        t,
        sql`select secret_enc as s from webhook_endpoints where id = ${hookB.id}`,
      );
      const payload =
        action === 'recover'
          ? { since: new Date(t.clock.now().getTime() - 3600_000).toISOString() }
          : action === 'rotate-secret'
            ? { graceSeconds: 10 }
            : undefined;
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/organizations/${orgA.id}/webhooks/${hookB.id}/${action}`,
        headers: a.auth,
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, res.body).toBe(404);
      const [after] = await queryRows<{ s: string }>(
        t,
        sql`select secret_enc as s from webhook_endpoints where id = ${hookB.id}`,
      );
      expect(after!.s).toBe(before!.s);
    });
    it(`${action} on B's endpoint through the flat path as A: refused`, async () => {
      const payload =
        action === 'recover' ? { since: new Date(t.clock.now().getTime() - 3600_000).toISOString() } : undefined;
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/webhooks/${hookB.id}/${action}`,
        headers: a.auth,
        ...(payload ? { payload } : {}),
      });
      expect([403, 404]).toContain(res.statusCode);
      expect(res.body).not.toMatch(/whsec_|"secret"/);
    });
  }

  for (const graceSeconds of [-1, 604801, 1.5, 1e12, '10', null]) {
    it(`graceSeconds ${JSON.stringify(graceSeconds)} is 400`, async () => {
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/organizations/${orgA.id}/webhooks/${hookA.id}/rotate-secret`,
        headers: a.auth,
        payload: { graceSeconds } as Record<string, unknown>,
      });
      expect(res.statusCode, res.body).toBe(400);
    });
  }

  it('a member (not admin) cannot rotate, recover or send test events', async () => {
    const m = await signedInUser(t, 'whM');
    await addMember(t, orgA.id, a, m, 'member');
    for (const action of ['rotate-secret', 'test']) {
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/organizations/${orgA.id}/webhooks/${hookA.id}/${action}`,
        headers: m.auth,
      });
      expect(res.statusCode, `${action} ${res.body}`).toBe(403);
    }
  });

  it('test events: at most 10 a minute, also through both paths together', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) {
      const url =
        i % 2 ? `/api/v1/organizations/${orgA.id}/webhooks/${hookA.id}/test` : `/api/v1/webhooks/${hookA.id}/test`;
      codes.push((await t.request({ method: 'POST', url, headers: a.auth })).statusCode);
    }
    expect(codes.filter((c) => c === 200).length).toBe(10);
    expect(codes.slice(10)).toEqual([429, 429]);
  });

  it('test events: concurrent requests do not exceed 10', async () => {
    const hook = await createWebhook(t, orgA.id, a, { url: 'http://127.0.0.1:9/c', events: ['order.shipped'] });
    const res = await Promise.all(
      Array.from({ length: 15 }, () =>
        t.request({ method: 'POST', url: `/api/v1/webhooks/${hook.id}/test`, headers: a.auth }),
      ),
    );
    expect(res.filter((r) => r.statusCode === 200).length).toBeLessThanOrEqual(10);
  });
});
