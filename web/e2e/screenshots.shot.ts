// The console's screenshots in the README (npm run screenshots): an organization on Pro with
// projects, an invitation, API keys that has been used and a webhook endpoint with deliveries, made through the
// pages as a person would, then docs/screenshots/api-keys.png and docs/screenshots/webhooks.png.
// Written again on every run; commit them when the pages change.
import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useWebApp } from './app.js';
import { apiLogin, createOrganization, shown, signInWithPassword, verifiedAccount } from './flows.js';

const OUT = fileURLToPath(new URL('../../docs/screenshots', import.meta.url));
const w = useWebApp();

describe('screenshots', () => {
  it('writes docs/screenshots/api-keys.png and docs/screenshots/webhooks.png', async () => {
    await fs.mkdir(OUT, { recursive: true });
    const email = await verifiedAccount(w.t, 'ada', 'Ada Lovelace', 'ada@analytical-engines.example');
    const teammate = await verifiedAccount(w.t, 'charles', 'Charles Babbage', 'charles@analytical-engines.example');
    const { page } = await w.person(1200);
    await signInWithPassword(page, email);
    const orgId = await createOrganization(page, 'Analytical Engines', 'analytical-engines');

    // On Pro (through the built-in test checkout): room for two keys.
    await page.getByRole('link', { name: 'Billing', exact: true }).click();
    await page.getByRole('button', { name: 'Upgrade', exact: true }).click();
    await page.getByRole('button', { name: 'Pay and subscribe' }).click();
    await shown(page.getByTestId('plan-name').filter({ hasText: 'Pro' }));

    await page.getByRole('link', { name: 'Projects', exact: true }).click();
    for (const name of ['Website', 'Mobile app']) {
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByRole('button', { name: 'Create project', exact: true }).click();
      await shown(page.getByRole('list', { name: 'Projects' }).getByText(name, { exact: true }));
    }
    await page.getByRole('link', { name: 'Members', exact: true }).click();
    await page.getByLabel('Email', { exact: true }).fill(teammate);
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await shown(page.getByRole('list', { name: 'Pending invitations' }).getByText(teammate));

    // Two keys, one used a few times.
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    let plain = '';
    for (const [name, scope] of [
      ['deploy-bot', 'Write projects'],
      ['analytics-export', 'Read the audit log'],
    ] as const) {
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel(scope).check();
      await page.getByRole('button', { name: 'Create API key', exact: true }).click();
      plain ||= (await (await shown(page.getByTestId('plain-key'))).textContent())!.trim();
      await page.getByRole('button', { name: 'I have saved it' }).click();
    }
    for (let i = 0; i < 3; i++) {
      const res = await w.t.request({
        method: 'GET',
        url: `/api/v1/organizations/${orgId}/projects`,
        headers: { 'x-api-key': plain },
      });
      expect(res.statusCode).toBe(200);
    }
    await page.reload();
    await shown(page.getByRole('table', { name: 'API keys' }).getByText('3 requests'));
    await page.screenshot({ path: `${OUT}api-keys.png` });

    // An endpoint, a test event and a project event delivered to it.
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByLabel('URL', { exact: true }).fill(w.receiver.url);
    await page.getByLabel('Description', { exact: true }).fill('Billing service');
    await page.getByRole('button', { name: 'Add endpoint', exact: true }).click();
    await shown(page.getByTestId('signing-secret'));
    await page.getByRole('link', { name: w.receiver.url }).click();
    await page.getByRole('button', { name: 'Send test', exact: true }).click();
    const created = await w.t.request({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/projects`,
      headers: await apiLogin(w.t, email),
      payload: { name: 'Data pipeline' },
    });
    expect(created.statusCode).toBe(201);
    await expect.poll(() => w.receiver.received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const deliveries = page.getByRole('table', { name: 'Deliveries' });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh', exact: true }).click();
          return deliveries.getByText('delivered', { exact: true }).count();
        },
        { timeout: 10_000 },
      )
      .toBeGreaterThanOrEqual(2);
    await deliveries.getByRole('row').filter({ hasText: 'project.created' }).getByText('Body and answer').click();
    await shown(deliveries.getByText('"name": "Data pipeline"'));
    await page.screenshot({ path: `${OUT}webhooks.png` });
  });
});
