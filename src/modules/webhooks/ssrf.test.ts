// SSRF rules over HTTP (spec §6.4, DECISIONS §5), with WEBHOOK_ALLOW_PRIVATE_URLS unset: every
// refused address form at create and update, and the check again at delivery time on the resolved
// address (an endpoint row written straight into the database, bypassing the create check).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptRows, createOrg, createWebhook, deliveryRows, type Receiver, setPlan, signedInUser, type SignedInUser, startReceiver } from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';
import { encrypt } from '../../lib/secrets.js';
import { webhookEndpoints } from './tables.js';
import { createDeliveryWorker, type DeliveryWorker } from './worker.js';

const REFUSED = [
  'http://localhost/',
  'http://LOCALHOST:8080/x',
  'http://api.localhost/',
  'http://127.0.0.1/',
  'http://127.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://0.0.0.0/',
  'http://0/',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://172.31.255.255/',
  'http://192.168.1.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://100.64.0.1/',
  'http://[::1]/',
  'http://[::]/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
  'http://[fd12:3456::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://intranet/',
  'http://intranet./',
  'ftp://example.com/',
  'file:///etc/passwd',
  'gopher://example.com/',
  'javascript:alert(1)',
  'not a url',
  'https://user:pass@example.com/hook',
];
const ACCEPTED = ['https://example.com/hook', 'http://172.32.0.1/', 'http://8.8.8.8/x', 'https://hooks.example.org:8443/in?x=1'];

let t: TestApp;
let worker: DeliveryWorker;
let owner: SignedInUser;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await createTestApp();
  expect(t.deps.config.webhook.allowPrivateUrls).toBe(false);
  worker = createDeliveryWorker(t.deps, { pollMs: 50 });
  await worker.start();
  owner = await signedInUser(t, 'ssrf-owner');
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await worker?.stop();
  await t?.close();
});

describe('at create and update', () => {
  it.each(REFUSED)('refuses %s with 400 VALIDATION_ERROR (create, flat create and update)', async (url) => {
    const org = await createOrg(t, owner);
    const create = await t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/webhooks`, headers: owner.auth, payload: { url } });
    expect(create.statusCode, create.body).toBe(400);
    expect(json(create).error.code).toBe('VALIDATION_ERROR');
    const flat = await t.request({ method: 'POST', url: '/api/v1/webhooks', headers: owner.auth, payload: { url, organizationId: org.id } });
    expect(flat.statusCode, flat.body).toBe(400);
    expect(json(flat).error.code).toBe('VALIDATION_ERROR');

    const hook = await createWebhook(t, org.id, owner, { url: 'https://example.com/ok' });
    const update = await t.request({ method: 'PATCH', url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`, headers: owner.auth, payload: { url } });
    expect(update.statusCode, update.body).toBe(400);
    expect(json(update).error.code).toBe('VALIDATION_ERROR');
    const got = json(await t.request({ method: 'GET', url: `/api/v1/webhooks/${hook.id}`, headers: owner.auth })).data;
    expect(got.url).toBe('https://example.com/ok');
  });

  it('accepts public addresses and names (https://example.com/hook, 172.32.0.1, …) at create and update', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'enterprise');
    for (const url of ACCEPTED) {
      const hook = await createWebhook(t, org.id, owner, { url });
      expect(hook.url).toBe(url);
      const update = await t.request({ method: 'PATCH', url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`, headers: owner.auth, payload: { url } });
      expect(update.statusCode, update.body).toBe(200);
    }
  });
});

describe('at delivery time', () => {
  /** An endpoint row written directly, as if its URL had passed the create check. */
  async function rawEndpoint(orgId: string, url: string) {
    const now = t.clock.now();
    const id = newId('wh', now.getTime());
    await t.deps.db.insert(webhookEndpoints).values({
      organizationId: orgId,
      id,
      url,
      description: null,
      events: [],
      secretEnc: encrypt(t.deps.config.encryptionKey, `whsec_${'ab'.repeat(32)}`),
      createdAt: now,
      updatedAt: now,
    });
    return id;
  }

  async function deliverTo(urlOf: (rx: Receiver) => string) {
    const rx = await startReceiver();
    receivers.push(rx);
    const org = await createOrg(t, owner);
    const hookId = await rawEndpoint(org.id, urlOf(rx));
    const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${org.id}/projects`, headers: owner.auth, payload: { name: 'p' } });
    expect(res.statusCode, res.body).toBe(201);
    await worker.drain(60_000);
    const [d] = await deliveryRows(t, hookId);
    return { rx, d: d!, attempts: await attemptRows(t, d!.id) };
  }

  it('a hostname that resolves to a loopback address (localhost) is refused without connecting', async () => {
    const { rx, d, attempts } = await deliverTo((rx) => `http://localhost:${rx.port}/hook`);
    expect(rx.connections).toBe(0);
    expect(rx.received).toHaveLength(0);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, response_status: null, delivered_at: null });
    expect(d.last_error).toMatch(/^blocked/);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.error).toMatch(/^blocked/);
  });

  it.each([(rx: Receiver) => `http://127.0.0.1:${rx.port}/hook`, (rx: Receiver) => `http://[::ffff:127.0.0.1]:${rx.port}/hook`, (rx: Receiver) => `http://2130706433:${rx.port}/hook`])(
    'an address literal is refused without connecting (%#)',
    async (urlOf) => {
      const { rx, d } = await deliverTo(urlOf);
      expect(rx.connections).toBe(0);
      expect(rx.received).toHaveLength(0);
      expect(d).toMatchObject({ status: 'pending', attempts: 1, response_status: null });
      expect(d.last_error).toMatch(/^blocked/);
    },
  );
});
