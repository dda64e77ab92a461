// The deliveries view in Chromium against the real API and the inline worker: a delivery whose first
// attempt a local receiver answers 500 and whose retry (the row's Retry button) it answers 200 shows
// both attempts under "Attempts": number, status, duration, time; and the page still fits a phone.
import { afterAll, describe, expect, it } from 'vitest';
import { json } from '../../test/harness.js';
import { createOrg, startReceiver, type Receiver } from '../../test/factories.js';
import { useWebApp } from './app.js';
import { apiLogin, signInWithPassword, shown, verifiedAccount } from './flows.js';

const w = useWebApp();
let rx: Receiver | undefined;
afterAll(async () => {
  await rx?.close();
});

describe('the deliveries view', () => {
  it("a retried delivery's attempts: HTTP 500 then HTTP 200, each with its duration and time; at 390 px without sideways scroll", async () => {
    let calls = 0;
    rx = await startReceiver((_req, res) => {
      calls++;
      res.writeHead(calls === 1 ? 500 : 200, { 'content-type': 'text/plain' }).end(calls === 1 ? 'boom' : 'ok');
    });
    const email = await verifiedAccount(w.t, 'attempts');
    const auth = await apiLogin(w.t, email);
    const orgId = (await createOrg(w.t, { auth }, { name: 'Retried Hooks' })).id;
    const hook = await w.t.request({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/webhooks`,
      headers: auth,
      payload: { url: rx.url },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const hookId = json(hook).data.id as string;
    const deliveries = async () => {
      const res = await w.t.request({
        method: 'GET',
        url: `/api/v1/organizations/${orgId}/webhooks/${hookId}/deliveries`,
        headers: auth,
      });
      return json(res).data as Array<{ status: string; attempts: number }>;
    };

    const { page } = await w.person();
    await signInWithPassword(page, email);
    await page.goto(`/orgs/${orgId}/webhooks/${hookId}`);
    await page.getByRole('button', { name: 'Send test', exact: true }).click();
    // The first attempt fails (500): pending, waiting for its retry.
    await expect.poll(async () => (await deliveries())[0]?.attempts, { timeout: 15_000 }).toBe(1);
    const table = page.getByRole('table', { name: 'Deliveries' });
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await shown(table.getByText('HTTP 500', { exact: true }));
    await table.getByRole('button', { name: 'Retry', exact: true }).click();
    await expect.poll(async () => (await deliveries())[0]?.status, { timeout: 15_000 }).toBe('delivered');
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await shown(table.getByText('delivered', { exact: true }));

    // The row's disclosure (the column header has the same word).
    await table.locator('tbody summary').getByText('Attempts', { exact: true }).click();
    const attempts = page.getByRole('list', { name: /^Attempts of the test delivery dlv_/ });
    await shown(attempts);
    const items = attempts.getByRole('listitem');
    await shown(items.nth(1));
    expect(await items.count()).toBe(2);
    expect(await items.nth(0).textContent()).toMatch(/^#1 HTTP 500 · \d+\sms · \S/);
    expect(await items.nth(1).textContent()).toMatch(/^#2 HTTP 200 · \d+\sms · \S/);
    // The times are the attempts' own, in order.
    const times = await attempts.locator('time').evaluateAll((els) => els.map((e) => e.getAttribute('datetime')!));
    expect(times).toHaveLength(2);
    expect(Date.parse(times[0]!)).toBeLessThanOrEqual(Date.parse(times[1]!));

    // At a phone's width, with the attempts open, the page does not scroll sideways.
    await page.setViewportSize({ width: 390, height: 812 });
    await shown(items.nth(1));
    expect(await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth)).toBe(
      false,
    );
  });
});
