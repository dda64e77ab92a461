// POST …/webhooks/{id}/recover {since} (docs/api.md#deliveries): every failed delivery of the
// endpoint created at or after `since` is queued again under the same id and delivered to a real
// receiver; older failures, delivered and pending ones are left alone. One more attempt each, as a
// manual retry: a failure ends `failed` again, without automatic retries. Validation, permissions,
// a paused or deleted endpoint, the audit entry.
import type { ServerResponse } from 'node:http';
import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import {
  addMember,
  attemptRows,
  auditOf,
  createApiKey,
  createOrg,
  deliveryRows,
  type Receiver,
  setPlan,
  signedInUser,
  stripeVerify,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import {
  after,
  orgEndpoint,
  owner,
  createProject,
  signIn,
  t,
  useDeliveryApp,
} from '../../../test/fixtures/webhooks.js';

// Two attempts in all (at once, then 60 s later): a delivery fails in a minute. The clock moves by
// minutes and hours: a fresh access token for each test.
const fx = useDeliveryApp('recover-owner', { env: { WEBHOOK_RETRY_DELAYS: '60' }, freshTokens: true });

const answer = (status: number) => (_req: unknown, res: ServerResponse) => res.writeHead(status).end();
async function projectCreated(orgId: string, name: string) {
  await createProject(orgId, name);
  await after(0);
}
const recover = (url: string, payload: InjectOptions['payload'], headers: Record<string, string> = owner.auth) =>
  t.request({ method: 'POST', url: `${url}/recover`, headers, payload });
const byName = async (hookId: string) =>
  Object.fromEntries((await deliveryRows(t, hookId)).map((d) => [d.event_data.name as string, d]));

const endpoint = (rx: Receiver) => orgEndpoint(rx, ['project.created']);

describe('recover', () => {
  it('queues the failed deliveries created since T under their ids, one more attempt each; the rest is untouched', async () => {
    const rx = await fx.receiver(answer(500));
    const { org, hook, base } = await endpoint(rx);
    await projectCreated(org.id, 'old');
    await after(60);
    await after(60);
    const since = t.clock.now().toISOString();
    // Created at exactly `since` (included), then a minute later; both fail.
    await projectCreated(org.id, 'f1');
    await after(60);
    await projectCreated(org.id, 'f2');
    await after(60);
    rx.handler = answer(200);
    await projectCreated(org.id, 'ok');
    const before = await byName(hook.id);
    expect(Object.fromEntries(Object.entries(before).map(([k, d]) => [k, [d.status, d.attempts]]))).toEqual({
      old: ['failed', 2],
      f1: ['failed', 2],
      f2: ['failed', 2],
      ok: ['delivered', 1],
    });
    expect(new Date(before.f1!.created_at).toISOString()).toBe(since);

    // While the receiver still fails: queued, attempted once more, failed again, no automatic retries.
    rx.handler = answer(503);
    const first = await recover(base, { since });
    expect(first.statusCode, first.body).toBe(202);
    expect(json(first)).toEqual({ success: true, data: { queued: 2 } });
    const queued = await byName(hook.id);
    expect([queued.f1!.status, queued.f2!.status]).toEqual(['pending', 'pending']);
    expect(new Date(queued.f1!.next_retry_at).getTime()).toBe(t.clock.now().getTime());
    await after(0);
    await after(3600);
    const again = await byName(hook.id);
    expect([again.f1, again.f2].map((d) => [d!.status, d!.attempts, d!.response_status, d!.next_retry_at])).toEqual([
      ['failed', 3, 503, null],
      ['failed', 3, 503, null],
    ]);

    // The receiver is back: recover on the flat path delivers both under the same ids.
    await signIn();
    rx.handler = answer(200);
    const seen = rx.received.length;
    const second = await recover(`/api/v1/webhooks/${hook.id}`, { since });
    expect(json(second)).toEqual({ success: true, data: { queued: 2 } });
    await after(0);
    const sent = rx.received.slice(seen);
    expect(sent.map((r) => r.headers['x-webhook-delivery-id']).sort()).toEqual([before.f1!.id, before.f2!.id].sort());
    for (const req of sent) expect(stripeVerify(t, req, hook.secret)).toMatchObject({ type: 'project.created' });
    const end = await byName(hook.id);
    expect([end.f1, end.f2].map((d) => [d!.status, d!.attempts, d!.response_status])).toEqual([
      ['delivered', 4, 200],
      ['delivered', 4, 200],
    ]);
    expect((await attemptRows(t, before.f1!.id)).map((a) => a.response_status)).toEqual([500, 500, 503, 200]);
    // Older than `since`, and delivered: untouched.
    expect(end.old).toMatchObject({ status: 'failed', attempts: 2, updated_at: before.old!.updated_at });
    expect(end.ok).toMatchObject({ status: 'delivered', attempts: 1, updated_at: before.ok!.updated_at });

    // Nothing left to recover since T; the old one is recovered with an earlier `since`.
    expect(json(await recover(base, { since }))).toEqual({ success: true, data: { queued: 0 } });
    expect(json(await recover(base, { since: new Date(Date.parse(since) - 3600_000).toISOString() }))).toEqual({
      success: true,
      data: { queued: 1 },
    });

    // Each recovery is in the audit log, with the status answered.
    const audit = (await auditOf(t, org.id)).filter((a) => a.action.endsWith('/recover'));
    expect(audit.map((a) => [a.action, a.statusCode])).toEqual([
      ['POST /api/v1/organizations/:orgId/webhooks/:id/recover', 202],
      ['POST /api/v1/webhooks/:id/recover', 202],
      ['POST /api/v1/organizations/:orgId/webhooks/:id/recover', 202],
      ['POST /api/v1/organizations/:orgId/webhooks/:id/recover', 202],
    ]);
  });

  it('a pending delivery is not touched', async () => {
    const rx = await fx.receiver(answer(500));
    const { org, hook, base } = await endpoint(rx);
    const since = t.clock.now().toISOString();
    await projectCreated(org.id, 'waiting');
    const [d] = await deliveryRows(t, hook.id);
    expect(d).toMatchObject({ status: 'pending', attempts: 1 });
    expect(json(await recover(base, { since }))).toEqual({ success: true, data: { queued: 0 } });
    expect((await deliveryRows(t, hook.id))[0]).toEqual(d);
  });
});

describe('recover: refusals', () => {
  it('since missing, malformed or in the future: 400, and nothing is queued', async () => {
    const rx = await fx.receiver(answer(500));
    const { org, hook, base } = await endpoint(rx);
    const since = t.clock.now().toISOString();
    await projectCreated(org.id, 'x');
    await after(60);
    const future = new Date(t.clock.now().getTime() + 1000).toISOString();
    for (const [payload, details] of [
      [{}, 'since: is required'],
      [undefined, ''],
      [{ since: 'yesterday' }, 'since: must match format "date-time"'],
      [{ since: future }, 'since: must not be in the future'],
      [{ since, extra: 1 }, 'extra: is not an allowed field'],
    ] as const) {
      const res = await recover(base, payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(json(res).error.code).toBe('VALIDATION_ERROR');
      if (details) expect(json(res).error.details).toBe(details);
    }
    expect((await deliveryRows(t, hook.id)).map((d) => d.status)).toEqual(['failed']);
    // Now is not the future.
    expect((await recover(base, { since: t.clock.now().toISOString() })).statusCode).toBe(202);
  });

  it('a viewer, a key with read:webhooks only: 403; through another organization: 404; a key with write:webhooks: 202', async () => {
    const rx = await fx.receiver();
    const { org, hook, base } = await endpoint(rx);
    const since = t.clock.now().toISOString();
    await setPlan(t, org.id, 'pro');
    const viewer = await signedInUser(t, 'recover-viewer');
    await addMember(t, org.id, owner, viewer, 'viewer');
    const flat = `/api/v1/webhooks/${hook.id}`;
    for (const url of [base, flat]) expect((await recover(url, { since }, viewer.auth)).statusCode).toBe(403);
    const reader = await createApiKey(t, org.id, owner, ['read:webhooks']);
    for (const url of [base, flat]) expect((await recover(url, { since }, reader.headers)).statusCode).toBe(403);

    // The endpoint through another organization's path, by its owner or by the owner of both: 404.
    const stranger = await signedInUser(t, 'recover-stranger');
    const theirs = await createOrg(t, stranger);
    expect(
      (await recover(`/api/v1/organizations/${theirs.id}/webhooks/${hook.id}`, { since }, stranger.auth)).statusCode,
    ).toBe(404);
    const mine = await createOrg(t, owner);
    const cross = await recover(`/api/v1/organizations/${mine.id}/webhooks/${hook.id}`, { since });
    expect(cross.statusCode, cross.body).toBe(404);
    expect(json(cross).error.message).toBe('Webhook endpoint not found');
    // A non-member on the endpoint's own paths: 403, as on the sibling routes.
    for (const url of [base, flat]) expect((await recover(url, { since }, stranger.auth)).statusCode).toBe(403);

    const writer = await createApiKey(t, org.id, owner, ['write:webhooks'], 'writer');
    const res = await recover(flat, { since }, writer.headers);
    expect(res.statusCode, res.body).toBe(202);
  });

  it('a paused endpoint answers 409 and a deleted one 404, queuing nothing', async () => {
    const rx = await fx.receiver(answer(500));
    const { org, hook, base } = await endpoint(rx);
    const since = t.clock.now().toISOString();
    await projectCreated(org.id, 'x');
    await after(60);
    expect(
      (await t.request({ method: 'PATCH', url: base, headers: owner.auth, payload: { isActive: false } })).statusCode,
    ).toBe(200);
    const paused = await recover(base, { since });
    expect(paused.statusCode, paused.body).toBe(409);
    expect(json(paused).error).toMatchObject({ code: 'CONFLICT', message: 'The endpoint is disabled' });
    expect((await t.request({ method: 'DELETE', url: base, headers: owner.auth })).statusCode).toBe(200);
    for (const url of [base, `/api/v1/webhooks/${hook.id}`])
      expect((await recover(url, { since })).statusCode).toBe(404);
    expect((await deliveryRows(t, hook.id)).map((d) => d.status)).toEqual(['failed']);
  });
});
