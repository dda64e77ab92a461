// Outside production a webhook to a local receiver just works (WEBHOOK_ALLOW_PRIVATE_URLS defaults to
// true there, docs/configuration.md); where the URL rules apply, a refused URL's message names the
// switch, and nothing is stored.
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createOrg, createWebhook, rowsOf, signedInUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { expectError, waitUntil } from '../../../test/expect.js';
import { workerFixtures } from '../../../test/fixtures/worker.js';

let t: TestApp | null = null;
const fx = workerFixtures(() => t!);
afterEach(async () => {
  await fx.stopAll();
  await t?.close();
  t = null;
});

const endpointCount = async (app: TestApp, orgId: string) =>
  rowsOf(await app.deps.db.execute(sql`select id from webhook_endpoints where organization_id = ${orgId}`)).length;

describe('webhooks to private addresses', () => {
  it('in development, unset: an endpoint on a local receiver is accepted and its test event delivered', async () => {
    t = await createTestApp({ env: { NODE_ENV: 'development', WEBHOOK_ALLOW_PRIVATE_URLS: undefined } });
    const app = t;
    const owner = await signedInUser(app, 'local-hooks');
    const org = await createOrg(app, owner);
    const rx = await fx.receiver();
    const endpoint = await createWebhook(app, org.id, owner, { url: `${rx.url}/hook` });
    await fx.worker().start();
    const sent = await app.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks/${endpoint.id}/test`,
      headers: owner.auth,
    });
    expect(sent.statusCode, sent.body).toBeLessThan(300);
    await waitUntil('the local receiver got the test event', () => rx.received.length === 1, 10_000);
    expect(JSON.parse(rx.received[0]!.body)).toMatchObject({ type: 'test' });
  });

  it('where the rules apply: a local URL is refused, the message names WEBHOOK_ALLOW_PRIVATE_URLS', async () => {
    t = await createTestApp();
    const app = t;
    const owner = await signedInUser(app, 'rules-hooks');
    const org = await createOrg(app, owner);
    for (const url of ['http://localhost:8080/hook', 'http://127.0.0.1/hook', 'http://intranet/hook']) {
      const res = await app.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/webhooks`,
        headers: owner.auth,
        payload: { url },
      });
      expectError(res, 400, 'VALIDATION_ERROR', /WEBHOOK_ALLOW_PRIVATE_URLS=true allows it outside production/);
    }
    // A URL that no switch makes valid says nothing of it.
    const ftp = await app.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks`,
      headers: owner.auth,
      payload: { url: 'ftp://example.com/hook' },
    });
    expectError(ftp, 400, 'VALIDATION_ERROR', { details: 'url: must use http or https' });
    expect(await endpointCount(app, org.id)).toBe(0);
  });
});
