// Passkeys end to end in Chromium against the real API: one added from the account page, then used
// to sign in (discoverable, and by email), renamed and deleted, through Chromium's virtual
// authenticator (the DevTools protocol's WebAuthn domain). WebAuthn refuses an IP address as the rp
// id, so this file serves the app on http://localhost:<port> (a secure context), not on 127.0.0.1 as
// app.ts does.
import net from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { FakeClock } from '../../src/lib/clock.js';
import { createTestApp, json, queryRows, type TestApp } from '../../test/harness.js';
import { CHROMIUM } from './app.js';
import { apiLogin, PASSWORD, shown, signedInAs, signInWithPassword, verifiedAccount } from './flows.js';

/** The wall clock: a browser's cookies and pages live in real time. */
class WallClock extends FakeClock {
  override now(): Date {
    return new Date();
  }
}

let t: TestApp;
let browser: Browser;
let origin: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  origin = `http://localhost:${port}`;
  t = await createTestApp({
    clock: new WallClock(),
    env: { APP_ORIGIN: origin, PUBLIC_API_URL: origin, PORT: String(port) },
  });
  await t.app.listen({ host: '127.0.0.1', port });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close().catch(() => {});
  await t?.close();
});

/** A fresh browser with a virtual platform authenticator that holds discoverable passkeys and verifies its user. */
async function personWithAuthenticator(): Promise<{ page: Page; credentials: () => Promise<number> }> {
  const context = await browser.newContext({
    baseURL: origin,
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  contexts.push(context);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    page,
    credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length,
  };
}

async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL(/\/sign-in/);
}

const passkeysOf = async (email: string) => {
  const res = await t.request({ method: 'GET', url: '/api/v1/users/me/passkeys', headers: await apiLogin(t, email) });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).passkeys as Array<{ id: string; name: string; lastUsedAt: string | null }>;
};

describe('passkeys in the browser', () => {
  it('adds a passkey on the account page, then signs in with it: discoverable, and by email', async () => {
    const email = await verifiedAccount(t, 'passkey');
    const { page, credentials } = await personWithAuthenticator();
    await signInWithPassword(page, email);
    await page.goto('/account');
    const section = page.getByRole('region', { name: 'Passkeys' });
    await shown(section.getByText('No passkey yet.'));
    await section.getByLabel('Name of the new passkey (optional)').fill('Test laptop');
    await section.getByRole('button', { name: 'Add a passkey', exact: true }).click();
    await shown(section.getByText('Passkey “Test laptop” added'));
    await shown(section.getByRole('cell', { name: 'Test laptop', exact: true }));
    expect(await credentials()).toBe(1);
    expect((await passkeysOf(email)).map((p) => p.name)).toEqual(['Test laptop']);

    // Discoverable: no email typed; the authenticator offers the passkey it holds for this rp id.
    await signOut(page);
    await page.getByRole('button', { name: 'Sign in with a passkey', exact: true }).click();
    await signedInAs(page, email);

    // By email: the options name the account's passkey.
    await signOut(page);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Sign in with a passkey', exact: true }).click();
    await signedInAs(page, email);
    // The session is the web app's: the refresh token in the HttpOnly cookie, nothing in storage.
    await page.reload();
    await signedInAs(page, email);
    expect((await passkeysOf(email))[0]!.lastUsedAt).not.toBeNull();
  });

  it('renames and deletes a passkey from the account page; a deleted passkey signs in no more', async () => {
    const email = await verifiedAccount(t, 'passkey-manage');
    const { page } = await personWithAuthenticator();
    await signInWithPassword(page, email);
    await page.goto('/account');
    const section = page.getByRole('region', { name: 'Passkeys' });
    await section.getByRole('button', { name: 'Add a passkey', exact: true }).click();
    await shown(section.getByRole('cell', { name: 'Passkey', exact: true }));

    await section.getByRole('button', { name: 'Rename Passkey', exact: true }).click();
    await section.getByLabel('Passkey name').fill('Work laptop');
    await section.getByRole('button', { name: 'Save', exact: true }).click();
    await shown(section.getByRole('cell', { name: 'Work laptop', exact: true }));
    expect((await passkeysOf(email)).map((p) => p.name)).toEqual(['Work laptop']);

    await section.getByRole('button', { name: 'Delete Work laptop', exact: true }).click();
    await shown(section.getByText('No passkey yet.'));
    expect(await passkeysOf(email)).toEqual([]);

    // The authenticator still holds the credential, but the service no longer knows it.
    await signOut(page);
    await page.getByRole('button', { name: 'Sign in with a passkey', exact: true }).click();
    await shown(page.getByRole('alert').filter({ hasText: 'Invalid passkey' }));
  });

  it('a session that signed in a while ago confirms the password before adding a passkey; a wrong one is said at the field and counted once', async () => {
    const email = await verifiedAccount(t, 'passkey-reauth');
    const { page, credentials } = await personWithAuthenticator();
    await signInWithPassword(page, email);
    // The clock here is the wall clock: the session's sign-in is moved eleven minutes back (the
    // window is ten), as if the person had signed in then.
    await t.deps.db.execute(
      sql`update sessions set authenticated_at = authenticated_at - interval '11 minutes' where user_id = (select id from users where email = ${email})`,
    );
    await page.goto('/account');
    const section = page.getByRole('region', { name: 'Passkeys' });
    await section.getByRole('button', { name: 'Add a passkey', exact: true }).click();
    const password = await shown(section.getByLabel('Your password', { exact: true }));
    await shown(section.getByText('confirm your password to add a passkey'));
    expect(await credentials()).toBe(0);

    await password.fill('Wrong-Password-1');
    await section.getByRole('button', { name: 'Add a passkey', exact: true }).click();
    await shown(section.getByText('Password is incorrect'));
    const [row] = await queryRows<{ n: number }>(
      t,
      sql`select failed_login_attempts as n from users where email = ${email}`,
    );
    expect(row!.n).toBe(1);
    expect(await credentials()).toBe(0);

    await section.getByLabel('Your password', { exact: true }).fill(PASSWORD);
    await section.getByRole('button', { name: 'Add a passkey', exact: true }).click();
    await shown(section.getByText('Passkey “Passkey” added'));
    expect(await credentials()).toBe(1);
    expect((await passkeysOf(email)).map((p) => p.name)).toEqual(['Passkey']);
    await section.getByLabel('Your password', { exact: true }).waitFor({ state: 'detached' });
  });
});
