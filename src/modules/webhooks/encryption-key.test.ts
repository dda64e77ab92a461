// Endpoint signing secrets across a change of ENCRYPTION_KEY. Each endpoint is created by an app
// whose key is A; another app on the same database (a restart with a new configuration) then
// delivers with its own key list. A secret that no listed key opens fails its delivery with a
// message naming ENCRYPTION_KEY instead of staying pending forever; listing the old key after the
// new one ("B,A") keeps old secrets working while new ones are encrypted with B.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createOrg,
  createWebhook,
  deliveryRows,
  attemptRows,
  rowsOf,
  signedInUser,
  type SignedInUser,
  startReceiver,
  type Receiver,
  stripeVerify,
} from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { DecryptError, decrypt } from '../../lib/secrets.js';
import { createDeliveryWorker, type DeliveryWorker } from './worker/index.js';

const A = randomBytes(32).toString('hex');
const B = randomBytes(32).toString('hex');
const UNREADABLE = "the endpoint's signing secret cannot be decrypted with ENCRYPTION_KEY";

let underA: TestApp;
let owner: SignedInUser;
const receivers: Receiver[] = [];
const workers: DeliveryWorker[] = [];
const apps: TestApp[] = [];

beforeAll(async () => {
  underA = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ENCRYPTION_KEY: A } });
  owner = await signedInUser(underA, 'enc-key-owner');
});
// Each test's apps and workers go with it: a worker left running would take the next test's deliveries.
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop().catch(() => {});
  for (const r of receivers.splice(0)) await r.close();
  for (const a of apps.splice(0)) await a.close();
});
afterAll(async () => {
  await underA?.close();
});

/** The app restarted on the same database (and clock) with another ENCRYPTION_KEY, with a delivery worker of its own. */
async function restartWith(encryptionKey: string, env: Record<string, string> = {}) {
  const app = await createTestApp({
    database: underA.database,
    clock: underA.clock,
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ENCRYPTION_KEY: encryptionKey, ...env },
  });
  apps.push(app);
  const worker = createDeliveryWorker(app.deps, { pollMs: 50 });
  workers.push(worker);
  await worker.start();
  return { app, worker };
}

/** The same, without a worker (its API only). */
async function apiWith(encryptionKey: string) {
  const app = await createTestApp({
    database: underA.database,
    clock: underA.clock,
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ENCRYPTION_KEY: encryptionKey },
  });
  apps.push(app);
  return app;
}

/** An organization with one endpoint, created over HTTP by `app`, and its receiver. */
async function endpoint(app: TestApp) {
  const rx = await startReceiver();
  receivers.push(rx);
  const org = await createOrg(app, owner);
  const hook = await createWebhook(app, org.id, owner, { url: rx.url, events: ['project.created'] });
  return { org, hook, rx };
}

/** One `project.created` event for the organization, through the API of `app`. */
async function projectCreated(app: TestApp, orgId: string) {
  const res = await app.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/projects`,
    headers: owner.auth,
    payload: { name: 'P' },
  });
  expect(res.statusCode, res.body).toBe(201);
}

async function secretEncOf(app: TestApp, endpointId: string): Promise<string> {
  const [row] = rowsOf(
    await app.deps.db.execute(sql`select secret_enc from webhook_endpoints where id = ${endpointId}`),
  );
  return row!.secret_enc as string;
}

describe('ENCRYPTION_KEY changed under existing endpoints', () => {
  it('with only the new key (B), a delivery to an endpoint made under A ends failed, its lastError naming ENCRYPTION_KEY, not pending forever', async () => {
    const { org, hook, rx } = await endpoint(underA);
    const { app, worker } = await restartWith(B, { WEBHOOK_RETRY_DELAYS: '60' });
    await projectCreated(app, org.id);
    await worker.drain(60_000);

    // The first attempt is recorded as a failure (no request sent) and retried like any other:
    // during a rolling change of the key list another instance may still open it.
    let [d] = await deliveryRows(app, hook.id);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, response_status: null });
    expect(d!.last_error).toContain(UNREADABLE);
    expect(d!.next_retry_at).not.toBeNull();

    app.clock.advance(60_000);
    worker.wake();
    await worker.drain(60_000);
    [d] = await deliveryRows(app, hook.id);
    expect(d).toMatchObject({
      status: 'failed',
      attempts: 2,
      next_retry_at: null,
      response_status: null,
      delivered_at: null,
    });
    expect(d!.last_error).toContain(UNREADABLE);
    expect(d!.last_error).not.toMatch(/unable to authenticate/i);
    const attempts = await attemptRows(app, d!.id);
    expect(attempts.map((a) => [a.attempt, a.response_status, a.error])).toEqual([
      [1, null, d!.last_error],
      [2, null, d!.last_error],
    ]);
    expect(rx.received).toHaveLength(0);

    // What the organization sees.
    const listed = json(
      await app.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/deliveries`,
        headers: owner.auth,
      }),
    ).data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: d!.id, status: 'failed', attempts: 2, nextRetryAt: null });
    expect(listed[0].lastError).toContain(UNREADABLE);
  });

  it('with the new key first and the old one after it ("B,A"), the endpoint made under A is delivered, signed with its secret', async () => {
    const { org, hook, rx } = await endpoint(underA);
    const { app, worker } = await restartWith(`${B},${A}`);
    await projectCreated(app, org.id);
    await worker.drain(60_000);
    const [d] = await deliveryRows(app, hook.id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, response_status: 204, last_error: null });
    expect(rx.received).toHaveLength(1);
    expect(stripeVerify(app, rx.received[0]!, hook.secret)).toMatchObject({ type: 'project.created' });
  });

  it('an endpoint created under "B,A" is encrypted with B: a worker with B alone delivers it, A no longer opens it', async () => {
    const underBA = await apiWith(`${B},${A}`);
    const { org, hook, rx } = await endpoint(underBA);
    const enc = await secretEncOf(underBA, hook.id);
    expect(decrypt(Buffer.from(B, 'hex'), enc)).toBe(hook.secret);
    expect(() => decrypt(Buffer.from(A, 'hex'), enc)).toThrow(DecryptError);

    const { app: underB, worker } = await restartWith(B);
    await projectCreated(underB, org.id);
    await worker.drain(60_000);
    const [d] = await deliveryRows(underB, hook.id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, last_error: null });
    expect(rx.received).toHaveLength(1);
    expect(stripeVerify(underB, rx.received[0]!, hook.secret)).toMatchObject({ type: 'project.created' });

    // A rotated secret is encrypted with the first key too.
    const rotated = await underBA.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/rotate-secret`,
      headers: owner.auth,
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const newSecret = json(rotated).data.secret as string;
    expect(decrypt(Buffer.from(B, 'hex'), await secretEncOf(underBA, hook.id))).toBe(newSecret);
  });
});
