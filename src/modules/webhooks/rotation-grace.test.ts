// Rotating the signing secret with a grace period (docs/api.md#webhook-signatures): during the grace
// every delivery carries `t=…,v1=<new>,v1=<old>` and verifies with either secret (the `stripe`
// package and @tenantry/client/webhooks); from its end on, only the new one. Grace 0 (or no body)
// stops the old secret at once; a bad graceSeconds changes nothing; a previous secret that no key
// opens does not stop deliveries.
import { createHmac, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../../client/src/webhooks.js';
import { deliveryRows, type ReceivedRequest, rowsOf, stripeVerify } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import {
  createProject,
  drain,
  orgEndpoint,
  owner,
  signIn,
  t,
  useDeliveryApp,
  worker,
} from '../../../test/fixtures/webhooks.js';
import { encrypt } from '../../lib/secrets.js';

const fx = useDeliveryApp('grace-owner');

const TWO_V1 = /^t=(\d+),v1=([0-9a-f]{64}),v1=([0-9a-f]{64})$/;
const ONE_V1 = /^t=\d+,v1=[0-9a-f]{64}$/;

/** Moves the fake clock and signs in again (access tokens live 15 minutes). */
async function advance(seconds: number) {
  t.clock.advance(seconds * 1000);
  await signIn();
}

async function setup() {
  const rx = await fx.receiver();
  return { rx, ...(await orgEndpoint(rx, ['project.created'])) };
}

/** One project.created, delivered now: the request the receiver got. */
async function delivered(rx: { received: ReceivedRequest[] }, orgId: string): Promise<ReceivedRequest> {
  // Counted before the event exists: on PostgreSQL its commit can wake the worker at once.
  const before = rx.received.length;
  await createProject(orgId);
  worker.wake();
  await drain();
  expect(rx.received).toHaveLength(before + 1);
  return rx.received.at(-1)!;
}

async function rotate(url: string, payload?: InjectOptions['payload']) {
  const res = await t.request({
    method: 'POST',
    url: `${url}/rotate-secret`,
    headers: owner.auth,
    ...(payload === undefined ? {} : { payload }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data.secret as string;
}

const signature = (req: ReceivedRequest) => req.headers['x-webhook-signature'] as string;
const verifies = (req: ReceivedRequest, secret: string) => {
  try {
    stripeVerify(t, req, secret);
    return true;
  } catch {
    return false;
  }
};
const clientVerifies = (req: ReceivedRequest, secret: string) =>
  verifyWebhookSignature(req.body, signature(req), secret, { now: Math.floor(t.clock.now().getTime() / 1000) });

async function endpointRow(id: string) {
  const [row] = rowsOf(
    await t.deps.db.execute(
      sql`select secret_enc, previous_secret_enc, previous_secret_expires_at from webhook_endpoints where id = ${id}`,
    ),
  );
  return row!;
}

describe('rotate-secret with graceSeconds', () => {
  it('signs with both secrets, new first, until the grace ends; then with the new one only', async () => {
    const { rx, org, hook, base } = await setup();
    const rotatedAt = t.clock.now().getTime();
    const fresh = await rotate(base, { graceSeconds: 3600 });
    expect(fresh).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(fresh).not.toBe(hook.secret);
    expect(new Date((await endpointRow(hook.id)).previous_secret_expires_at).getTime()).toBe(rotatedAt + 3600_000);

    const during = await delivered(rx, org.id);
    const [, ts, first, second] = TWO_V1.exec(signature(during))!;
    // One header, the new secret's v1 first, then the old one's.
    const mac = (secret: string) => createHmac('sha256', secret).update(`${ts}.${during.body}`).digest('hex');
    expect([first, second]).toEqual([mac(fresh), mac(hook.secret)]);
    expect(stripeVerify(t, during, fresh)).toMatchObject({ type: 'project.created' });
    expect(stripeVerify(t, during, hook.secret)).toMatchObject({ type: 'project.created' });
    expect(clientVerifies(during, fresh) && clientVerifies(during, hook.secret)).toBe(true);
    expect(verifies(during, `whsec_${'0'.repeat(64)}`)).toBe(false);

    // A second before the end: still both.
    await advance(3599);
    const last = await delivered(rx, org.id);
    expect(signature(last)).toMatch(TWO_V1);
    expect(verifies(last, hook.secret)).toBe(true);

    // At the end: the new secret only; the old one fails.
    await advance(1);
    const after = await delivered(rx, org.id);
    expect(signature(after)).toMatch(ONE_V1);
    expect(stripeVerify(t, after, fresh)).toMatchObject({ type: 'project.created' });
    expect(() => stripeVerify(t, after, hook.secret)).toThrow(/signature/i);
    expect(clientVerifies(after, hook.secret)).toBe(false);
    const rows = await deliveryRows(t, hook.id);
    expect(rows.map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('grace 0, or no body, stops the old secret at once (and drops a previous one still in its grace)', async () => {
    const { rx, org, hook, base } = await setup();
    const zero = await rotate(base, { graceSeconds: 0 });
    const req = await delivered(rx, org.id);
    expect(signature(req)).toMatch(ONE_V1);
    expect(verifies(req, zero)).toBe(true);
    expect(verifies(req, hook.secret)).toBe(false);

    await rotate(base, { graceSeconds: 600 });
    expect((await endpointRow(hook.id)).previous_secret_enc).not.toBeNull();
    // As today: no body, or an empty one sent as JSON.
    const bare = await t.request({
      method: 'POST',
      url: `${base}/rotate-secret`,
      headers: { ...owner.auth, 'content-type': 'application/json' },
      payload: '',
    });
    expect(bare.statusCode, bare.body).toBe(200);
    expect(await endpointRow(hook.id)).toMatchObject({ previous_secret_enc: null, previous_secret_expires_at: null });
    await rotate(base, { graceSeconds: 600 });
    const latest = await rotate(base);
    expect(await endpointRow(hook.id)).toMatchObject({ previous_secret_enc: null, previous_secret_expires_at: null });
    const now = await delivered(rx, org.id);
    expect(signature(now)).toMatch(ONE_V1);
    expect(verifies(now, latest)).toBe(true);
    expect(verifies(now, zero)).toBe(false);
  });

  it('rotating during a grace: the current secret becomes the previous one with the new grace, the one before stops', async () => {
    const { rx, org, hook } = await setup();
    // The flat alias.
    const flat = `/api/v1/webhooks/${hook.id}`;
    const b = await rotate(flat, { graceSeconds: 600 });
    await advance(60);
    const c = await rotate(flat, { graceSeconds: 300 });
    const req = await delivered(rx, org.id);
    expect(signature(req)).toMatch(TWO_V1);
    expect([verifies(req, c), verifies(req, b), verifies(req, hook.secret)]).toEqual([true, true, false]);
    // The new grace (300 s) counts, not what was left of the first (540 s).
    await advance(300);
    const later = await delivered(rx, org.id);
    expect([verifies(later, c), verifies(later, b)]).toEqual([true, false]);
  });

  it('graceSeconds out of range, not an integer or not a number: 400, and nothing changes', async () => {
    const { rx, org, hook, base } = await setup();
    const before = await endpointRow(hook.id);
    for (const payload of [
      { graceSeconds: -1 },
      { graceSeconds: 604_801 },
      { graceSeconds: 1.5 },
      { graceSeconds: '60' },
      { graceSeconds: null },
      { grace: 60 },
    ]) {
      const res = await t.request({ method: 'POST', url: `${base}/rotate-secret`, headers: owner.auth, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(json(res)).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
      expect(json(res).error.details).toMatch(/^grace/);
    }
    expect(await endpointRow(hook.id)).toEqual(before);
    const req = await delivered(rx, org.id);
    expect(verifies(req, hook.secret)).toBe(true);
    // The bounds themselves are accepted.
    await rotate(base, { graceSeconds: 604_800 });
    expect(new Date((await endpointRow(hook.id)).previous_secret_expires_at).getTime()).toBe(
      t.clock.now().getTime() + 604_800_000,
    );
  });

  it('a previous secret no key of ENCRYPTION_KEY opens: delivered, signed with the current secret only', async () => {
    const { rx, org, hook, base } = await setup();
    const current = await rotate(base, { graceSeconds: 3600 });
    const foreign = encrypt(randomBytes(32), hook.secret);
    await t.deps.db.execute(sql`update webhook_endpoints set previous_secret_enc = ${foreign} where id = ${hook.id}`);
    for (let i = 0; i < 2; i++) {
      const req = await delivered(rx, org.id);
      expect(signature(req)).toMatch(ONE_V1);
      expect(verifies(req, current)).toBe(true);
    }
    expect((await deliveryRows(t, hook.id)).map((r) => [r.status, r.last_error])).toEqual([
      ['delivered', null],
      ['delivered', null],
    ]);
  });
});
