// Auto-disable through HTTP and real local receivers, on the fake clock (WEBHOOK_DISABLE_AFTER_H=1
// here): an endpoint whose every attempt failed for an hour is turned off with disabledReason
// "failing", its pending deliveries end failed, the organization's other endpoints get
// webhook_endpoint.disabled (verified with the `stripe` package), and its owners and admins (not
// its members) are mailed. A success ends the streak; turning the endpoint on again clears it.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  addMember,
  createOrg,
  createWebhook,
  deliveryRows,
  type Receiver,
  setPlan,
  signedInUser,
  stripeVerify,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { createProject, drain, owner, signIn, t, useDeliveryApp, worker } from '../../../test/fixtures/webhooks.js';
import { expectRefused, load } from '../../../test/fixtures/config.js';

const fx = useDeliveryApp('autodisable-owner', { env: { WEBHOOK_DISABLE_AFTER_H: '1' } });
const MINUTE = 60_000;

const failing = (_req: unknown, res: ServerResponse) => res.writeHead(500).end('down');

/** Moves the fake clock, signs the owner in again (tokens last 15 minutes) and lets due retries go. */
async function advance(ms: number) {
  t.clock.advance(ms);
  await signIn();
  worker.wake();
  await drain();
}

/** A project change: one event for every endpoint of the organization. */
async function event(orgId: string) {
  await createProject(orgId);
  await drain();
}

async function endpoint(orgId: string, id: string) {
  const res = await t.request({
    method: 'GET',
    url: `/api/v1/organizations/${orgId}/webhooks/${id}`,
    headers: owner.auth,
  });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as { isActive: boolean; disabledReason: string | null };
}

async function orgWithTwoEndpoints() {
  const org = await createOrg(t, owner);
  await setPlan(t, org.id, 'pro');
  const bad = await fx.receiver(failing);
  const good = await fx.receiver();
  const badHook = await createWebhook(t, org.id, owner, { url: bad.url });
  const goodHook = await createWebhook(t, org.id, owner, { url: good.url });
  return { org, bad, good, badHook, goodHook };
}

const disabledNotices = (rx: Receiver) =>
  rx.received.filter((r) => r.headers['x-webhook-event'] === 'webhook_endpoint.disabled');

describe('WEBHOOK_DISABLE_AFTER_H', () => {
  it('defaults to 120; takes whole hours from 1 to 8760', () => {
    expect(load().webhook.disableAfterH).toBe(120);
    expect(load({ WEBHOOK_DISABLE_AFTER_H: '24' }).webhook.disableAfterH).toBe(24);
    for (const bad of ['0', '-1', '1.5', '8761', 'soon'])
      expectRefused(() => load({ WEBHOOK_DISABLE_AFTER_H: bad }), 'WEBHOOK_DISABLE_AFTER_H');
  });
});

describe('an endpoint whose every attempt fails', () => {
  it('is turned off once the failures have lasted the period: failing, notices, mails, pending deliveries failed', async () => {
    const { org, bad, good, badHook, goodHook } = await orgWithTwoEndpoints();
    const admin = await signedInUser(t, 'autodisable-admin');
    const member = await signedInUser(t, 'autodisable-member');
    await addMember(t, org.id, owner, admin, 'admin');
    await addMember(t, org.id, owner, member, 'member');
    const started = t.clock.now().toISOString();

    await event(org.id);
    await advance(30 * MINUTE);
    await event(org.id);
    expect(await endpoint(org.id, badHook.id)).toMatchObject({ isActive: true, disabledReason: null });
    expect(disabledNotices(good)).toHaveLength(0);

    // An hour and a minute after the first failure, the next failed attempt turns it off.
    await advance(31 * MINUTE);
    expect(await endpoint(org.id, badHook.id)).toMatchObject({ isActive: false, disabledReason: 'failing' });
    expect(await endpoint(org.id, goodHook.id)).toMatchObject({ isActive: true, disabledReason: null });

    const [notice] = disabledNotices(good);
    expect(notice).toBeDefined();
    expect(stripeVerify(t, notice!, goodHook.secret)).toMatchObject({
      type: 'webhook_endpoint.disabled',
      data: { webhookId: badHook.id, organizationId: org.id, url: bad.url, reason: 'failing', failingSince: started },
    });
    expect(disabledNotices(bad)).toHaveLength(0);

    // Nothing is left pending for it: what was waiting ended failed, so recover can send it again.
    const rows = await deliveryRows(t, badHook.id);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.status === 'pending')).toEqual([]);
    expect(rows.some((r) => r.status === 'failed' && /turned off/.test(String(r.last_error)))).toBe(true);

    for (const who of [owner, admin]) {
      const mail = await t.mail.waitFor(who.email, /webhook endpoint .* was turned off/i);
      expect(mail.decoded).toContain(bad.url);
    }
    await t.mail.settled();
    expect(
      t.mail.mails.filter((m) => m.to.includes(member.email.toLowerCase()) && /turned off/.test(m.subject)),
    ).toEqual([]);

    // Turned off, it gets no new deliveries; the other endpoint still does.
    const before = { bad: bad.received.length, good: good.received.length };
    await event(org.id);
    expect(bad.received).toHaveLength(before.bad);
    expect(good.received).toHaveLength(before.good + 1);
  });

  it('is turned off once only, though several failures come in after the period', async () => {
    const { org, good, badHook } = await orgWithTwoEndpoints();
    await event(org.id);
    await advance(61 * MINUTE);
    await event(org.id);
    await advance(10 * MINUTE);
    expect(await endpoint(org.id, badHook.id)).toMatchObject({ isActive: false, disabledReason: 'failing' });
    expect(disabledNotices(good)).toHaveLength(1);
  });

  it('a success ends the streak: failures before it do not count', async () => {
    const org = await createOrg(t, owner);
    let answer = 500;
    const rx = await fx.receiver((_req, res) => res.writeHead(answer).end());
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });

    await event(org.id); // fails: the streak starts
    await advance(30 * MINUTE);
    answer = 200;
    await event(org.id); // delivered: the streak ends
    await advance(31 * MINUTE);
    answer = 500;
    await event(org.id); // fails: a new streak starts now
    await advance(59 * MINUTE);
    await event(org.id);
    expect(await endpoint(org.id, hook.id)).toMatchObject({ isActive: true, disabledReason: null });
    await advance(2 * MINUTE);
    await event(org.id);
    expect(await endpoint(org.id, hook.id)).toMatchObject({ isActive: false, disabledReason: 'failing' });
  });

  it('turned on again by a person: disabledReason cleared, and the failures before do not count', async () => {
    const org = await createOrg(t, owner);
    const rx = await fx.receiver(failing);
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    await event(org.id);
    await advance(61 * MINUTE);
    await event(org.id);
    expect(await endpoint(org.id, hook.id)).toMatchObject({ isActive: false, disabledReason: 'failing' });

    const on = await t.request({
      method: 'PATCH',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`,
      headers: owner.auth,
      payload: { isActive: true },
    });
    expect(on.statusCode, on.body).toBe(200);
    expect(json(on).data).toMatchObject({ isActive: true, disabledReason: null });
    // Still failing, but its new streak is minutes old.
    await event(org.id);
    await advance(5 * MINUTE);
    expect(await endpoint(org.id, hook.id)).toMatchObject({ isActive: true, disabledReason: null });

    // Turned off by a person: no reason given by the service.
    const off = await t.request({
      method: 'PATCH',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`,
      headers: owner.auth,
      payload: { isActive: false },
    });
    expect(json(off).data).toMatchObject({ isActive: false, disabledReason: null });
  });
});
