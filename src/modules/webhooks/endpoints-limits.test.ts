// Webhook endpoints over HTTP: the plan's limit on endpoints (also under parallel creation) and the
// secret at rest. The contract of the routes is in endpoints.test.ts.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createOrg, createWebhook, rowsOf, setPlan } from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { owner, t, useDeliveryApp } from '../../../test/fixtures/webhooks.js';

useDeliveryApp('wh-limits-owner', { privateUrls: false, worker: 'none' });

const HOOK = 'https://example.com/hook';
const hooksOf = (orgId: string) => `/api/v1/organizations/${orgId}/webhooks`;

describe('plan limits', () => {
  it('Free allows 1 endpoint: the second is 402; deleting one frees the slot; Pro allows 10', async () => {
    const org = await createOrg(t, owner);
    const first = await createWebhook(t, org.id, owner, { url: HOOK });
    const second = await t.request({
      method: 'POST',
      url: hooksOf(org.id),
      headers: owner.auth,
      payload: { url: HOOK },
    });
    expect(second.statusCode, second.body).toBe(402);
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/webhooks',
          headers: owner.auth,
          payload: { url: HOOK, organizationId: org.id },
        })
      ).statusCode,
    ).toBe(402);
    expect(
      (await t.request({ method: 'DELETE', url: `${hooksOf(org.id)}/${first.id}`, headers: owner.auth })).statusCode,
    ).toBe(200);
    await createWebhook(t, org.id, owner, { url: HOOK });

    await setPlan(t, org.id, 'pro');
    for (let i = 1; i < 10; i++) await createWebhook(t, org.id, owner, { url: HOOK });
    expect(
      (await t.request({ method: 'POST', url: hooksOf(org.id), headers: owner.auth, payload: { url: HOOK } }))
        .statusCode,
    ).toBe(402);
    await setPlan(t, org.id, 'enterprise');
    await createWebhook(t, org.id, owner, { url: HOOK });
  });

  it('5 parallel creations on Free: exactly one 201, the others 402', async () => {
    const org = await createOrg(t, owner);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        t.request({ method: 'POST', url: hooksOf(org.id), headers: owner.auth, payload: { url: `${HOOK}/${i}` } }),
      ),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes, results.map((r) => r.body).join('\n')).toEqual([201, 402, 402, 402, 402]);
    const rows = rowsOf(
      await t.deps.db.execute(
        sql`select id from webhook_endpoints where organization_id = ${org.id} and deleted_at is null`,
      ),
    );
    expect(rows).toHaveLength(1);
  });
});

describe('the secret at rest', () => {
  it('is stored encrypted: neither the secret nor its hex appears anywhere in webhook_endpoints; rotation replaces it', async () => {
    const org = await createOrg(t, owner);
    const hook = await createWebhook(t, org.id, owner, { url: HOOK });
    const hex = hook.secret.slice('whsec_'.length);
    const dump = async () => JSON.stringify(rowsOf(await t.deps.db.execute(sql`select * from webhook_endpoints`)));
    let all = await dump();
    expect(all).toContain(hook.id);
    expect(all).not.toContain(hex);
    expect(all).not.toContain(hex.slice(0, 16));
    const [row] = rowsOf(await t.deps.db.execute(sql`select secret_enc from webhook_endpoints where id = ${hook.id}`));
    const before = row!.secret_enc as string;
    expect(before).toBeTruthy();

    const rotated = json(
      await t.request({ method: 'POST', url: `${hooksOf(org.id)}/${hook.id}/rotate-secret`, headers: owner.auth }),
    ).data;
    all = await dump();
    expect(all).not.toContain(rotated.secret.slice('whsec_'.length, 'whsec_'.length + 16));
    const [after] = rowsOf(
      await t.deps.db.execute(sql`select secret_enc from webhook_endpoints where id = ${hook.id}`),
    );
    expect(after!.secret_enc).not.toBe(before);
    // The secret never reaches the audit log either.
    expect(JSON.stringify(rowsOf(await t.deps.db.execute(sql`select * from audit_logs`)))).not.toContain(hex);
  });
});
