// SSRF rules over HTTP (docs/api.md#webhook-url-rules), with WEBHOOK_ALLOW_PRIVATE_URLS unset: every
// refused address form at create and update, and the check again at delivery time on the resolved
// address (an endpoint row written straight into the database, bypassing the create check).
import dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  attemptRows,
  createOrg,
  createWebhook,
  deliveryRows,
  type Receiver,
  setPlan,
  startReceiver,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';
import { encrypt } from '../../lib/secrets.js';
import { createWebhookSender } from './worker/sender.js';
import { webhookEndpoints } from '../../db/tables/webhooks.js';
import { createProject, drain, owner, t, useDeliveryApp, worker } from '../../../test/fixtures/webhooks.js';

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
  // NAT64 (well-known and local-use prefixes), 6to4 and Teredo: each carries an IPv4 address a
  // gateway or relay would reach on our behalf.
  'http://[64:ff9b::127.0.0.1]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[64:ff9b:1::7f00:1]/',
  'http://[2002:7f00:1::1]/',
  'http://[2002:a9fe:a9fe::]/',
  'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
  'http://[2001::1]/',
  'http://intranet/',
  'http://intranet./',
  'ftp://example.com/',
  'file:///etc/passwd',
  'gopher://example.com/',
  'javascript:alert(1)',
  'not a url',
  'https://user:pass@example.com/hook',
];
const ACCEPTED = [
  'https://example.com/hook',
  'http://172.32.0.1/',
  'http://8.8.8.8/x',
  'https://hooks.example.org:8443/in?x=1',
];

const fx = useDeliveryApp('ssrf-owner', { privateUrls: false });

beforeAll(() => {
  expect(t.deps.config.webhook.allowPrivateUrls).toBe(false);
});

describe('at create and update', () => {
  it.each(REFUSED)('refuses %s with 400 VALIDATION_ERROR (create, flat create and update)', async (url) => {
    const org = await createOrg(t, owner);
    const create = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks`,
      headers: owner.auth,
      payload: { url },
    });
    expect(create.statusCode, create.body).toBe(400);
    expect(json(create).error.code).toBe('VALIDATION_ERROR');
    const flat = await t.request({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: owner.auth,
      payload: { url, organizationId: org.id },
    });
    expect(flat.statusCode, flat.body).toBe(400);
    expect(json(flat).error.code).toBe('VALIDATION_ERROR');

    const hook = await createWebhook(t, org.id, owner, { url: 'https://example.com/ok' });
    const update = await t.request({
      method: 'PATCH',
      url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`,
      headers: owner.auth,
      payload: { url },
    });
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
      const update = await t.request({
        method: 'PATCH',
        url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}`,
        headers: owner.auth,
        payload: { url },
      });
      expect(update.statusCode, update.body).toBe(200);
    }
  });
});

describe('at delivery time', () => {
  async function deliverTo(urlOf: (rx: Receiver) => string) {
    const rx = await fx.receiver();
    const org = await createOrg(t, owner);
    const hookId = await rawEndpoint(org.id, urlOf(rx));
    await createProject(org.id, 'p');
    await drain();
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

  it.each([
    (rx: Receiver) => `http://127.0.0.1:${rx.port}/hook`,
    (rx: Receiver) => `http://[::ffff:127.0.0.1]:${rx.port}/hook`,
    (rx: Receiver) => `http://2130706433:${rx.port}/hook`,
  ])('an address literal is refused without connecting (%#)', async (urlOf) => {
    const { rx, d } = await deliverTo(urlOf);
    expect(rx.connections).toBe(0);
    expect(rx.received).toHaveLength(0);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, response_status: null });
    expect(d.last_error).toMatch(/^blocked/);
  });
});

describe('at delivery time, a public-looking hostname that resolves to a non-public address', () => {
  // Names the resolver answers with internal addresses (as a hostile DNS zone would): the create
  // check cannot see them, so only the check on the resolved address stands between the worker
  // and the internal network. The sender resolves through node:dns, which is faked here.
  const zone = new Map<string, string[]>();
  const realLookup = dns.lookup.bind(dns);
  beforeAll(() => {
    vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, options: unknown, callback: unknown) => {
      const answer = zone.get(hostname);
      if (!answer) return (realLookup as (...a: unknown[]) => void)(hostname, options, callback);
      const addresses = answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      process.nextTick(() => (callback as (e: null, a: typeof addresses) => void)(null, addresses));
    }) as unknown as typeof dns.lookup);
  });
  afterAll(() => {
    vi.restoreAllMocks();
  });

  const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}\b/;
  const IPV6 = /[0-9a-f]{0,4}:[0-9a-f]{0,4}:[0-9a-f]{0,4}/i;

  let n = 0;
  it.each([
    ['127.0.0.1'],
    ['10.20.30.40'],
    ['169.254.169.254'],
    ['::1'],
    ['fd00::1234'],
    ['64:ff9b::7f00:1'],
    ['64:ff9b:1::a14:1e28'],
    ['2002:7f00:1::1'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['93.184.215.14', '10.20.30.40'],
  ])(
    'resolving to %s is refused, and the stored error (read over HTTP) names no address',
    async (...addresses: string[]) => {
      const rx = await fx.receiver();
      const host = `hooks-${++n}.partner.example`;
      zone.set(host, addresses);
      const org = await createOrg(t, owner);
      // Accepted at create: the name has a dot and is not an address literal.
      const hook = await createWebhook(t, org.id, owner, { url: `http://${host}:${rx.port}/hook` });
      const test = await t.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/test`,
        headers: owner.auth,
      });
      expect(test.statusCode, test.body).toBe(200);
      await worker.drain(60_000);

      expect(rx.connections).toBe(0);
      const list = await t.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id}/webhooks/${hook.id}/deliveries`,
        headers: owner.auth,
      });
      expect(list.statusCode, list.body).toBe(200);
      const [d] = json(list).data as {
        status: string;
        attempts: number;
        responseStatus: number | null;
        lastError: string;
      }[];
      expect(d).toMatchObject({ status: 'pending', attempts: 1, responseStatus: null });
      expect(d!.lastError).toMatch(/^blocked: destination not allowed/);
      for (const a of addresses) expect(d!.lastError).not.toContain(a);
      expect(d!.lastError).not.toMatch(IPV4);
      expect(d!.lastError).not.toMatch(IPV6);
      const [row] = await deliveryRows(t, hook.id);
      const [attempt] = await attemptRows(t, row!.id as string);
      expect(attempt!.error).toBe(d!.lastError);
    },
  );

  it('an address literal is refused with the same words', async () => {
    const rx = await fx.receiver();
    const org = await createOrg(t, owner);
    const hookId = await rawEndpoint(org.id, `http://[2002:7f00:1::1]:${rx.port}/hook`);
    const test = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks/${hookId}/test`,
      headers: owner.auth,
    });
    expect(test.statusCode, test.body).toBe(200);
    await worker.drain(60_000);
    const [d] = await deliveryRows(t, hookId);
    expect(d!.last_error).toMatch(/^blocked: destination not allowed/);
    expect(d!.last_error).not.toMatch(IPV6);
  });
});

describe('connection failures', () => {
  it('record the error code, not the address tried', async () => {
    // Private addresses allowed here, only to reach a closed local port.
    const sender = createWebhookSender({ ...t.deps.config.webhook, allowPrivateUrls: true });
    const rx = await startReceiver();
    await rx.close();
    try {
      const result = await sender.send(`http://127.0.0.1:${rx.port}/hook`, '{}', {
        'content-type': 'application/json',
      });
      expect(result).toMatchObject({ status: null, body: null, error: 'connect ECONNREFUSED' });
    } finally {
      await sender.close();
    }
  });
});

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
