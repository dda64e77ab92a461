// Signing in, end to end in Chromium against the real API: Google through the social sign-in hand-off
// (the local OAuth server as the provider), two-factor set up from the console (a QR code that
// encodes the API's otpauth URL, backup codes) and then asked for at sign-in, "Sign out everywhere",
// the sign-in form driven by the keyboard alone, and no sideways scrolling at phone width.
import fs from 'node:fs';
import QRCode from 'qrcode';
import * as OTPAuth from 'otpauth';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { json } from '../../test/harness.js';
import { useWebApp } from './app.js';
import {
  apiLogin,
  createOrganization,
  PASSWORD,
  shown,
  signedInAs,
  signInWithPassword,
  uniqueEmail,
  verifiedAccount,
} from './flows.js';

const w = useWebApp();

/** Whether the page scrolls sideways: its content is wider than the viewport. */
const scrollsSideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

/** The dark and light modules the browser drew for the QR code `img`, read back from its pixels. */
async function modulesDrawn(page: Page, size: number, margin: number): Promise<boolean[]> {
  const img = page.getByRole('img', { name: 'QR code for your authenticator app' });
  await img.waitFor();
  return img.evaluate(
    async (el, { size, margin }) => {
      const image = el as HTMLImageElement;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.naturalWidth;
      canvas.height = image.naturalHeight;
      const ctx = canvas.getContext('2d')!;
      ctx.drawImage(image, 0, 0);
      const scale = image.naturalWidth / (size + margin * 2);
      const dark: boolean[] = [];
      for (let r = 0; r < size; r++) {
        for (let c = 0; c < size; c++) {
          const [red] = ctx.getImageData(
            Math.floor((margin + c + 0.5) * scale),
            Math.floor((margin + r + 0.5) * scale),
            1,
            1,
          ).data;
          dark.push(red! < 128);
        }
      }
      return dark;
    },
    { size, margin },
  );
}

describe('signing in', () => {
  it('"Continue with Google" signs in through the hand-off: the provider, /auth/callback#code=…, the exchange', async () => {
    const { page, context } = await w.person();
    const email = uniqueEmail('google');
    await page.goto('/sign-in');
    await w.signInAtProviderAs({ sub: `g-${Date.now()}`, email, emailVerified: true, name: 'Grace Hopper' });
    const callback = page.waitForURL(/\/auth\/callback/);
    await page.getByRole('link', { name: 'Continue with Google', exact: true }).click();
    await callback;
    await signedInAs(page, email);
    // The one-time code left the address bar; the session is the HttpOnly cookie and memory.
    expect(page.url()).not.toContain('code=');
    expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([
      0,
      0,
      '',
    ]);
    expect((await context.cookies()).find((c) => c.name === 'tenantry_refresh')).toMatchObject({ httpOnly: true });
    await page.reload();
    await signedInAs(page, email);
  });

  it('a code finished in another browser (an attacker’s, sent as a link) signs no one in here', async () => {
    // The attacker signs in with Google in their own browser and stops before the exchange.
    const attacker = await w.person();
    const urls: string[] = [];
    attacker.page.on('framenavigated', (frame) => urls.push(frame.url()));
    await attacker.page.route('**/api/v1/auth/oauth/exchange', (route) => route.abort());
    await attacker.page.goto('/sign-in');
    w.signInAtProviderAs({ sub: `atk-${Date.now()}`, email: uniqueEmail('attacker'), emailVerified: true });
    await attacker.page.getByRole('link', { name: 'Continue with Google', exact: true }).click();
    await attacker.page.waitForURL(/\/auth\/callback/);
    const link = urls.find((u) => u.includes('#code='));
    expect(link).toBeDefined();

    // The victim opens the link: the page refuses the code it did not ask for, and no session starts.
    const victim = await w.person();
    const exchanges: string[] = [];
    victim.page.on('request', (r) => r.url().endsWith('/auth/oauth/exchange') && exchanges.push(r.url()));
    await victim.page.goto(link!);
    await shown(victim.page.getByText('This sign-in was not started in this browser tab', { exact: false }));
    expect(exchanges).toEqual([]);
    expect((await victim.context.cookies()).find((c) => c.name === 'tenantry_refresh')).toBeUndefined();
  });

  it('a provider email it has not verified ends on /auth/callback with the page’s own message for the code', async () => {
    const { page } = await w.person();
    await page.goto('/sign-in');
    w.signInAtProviderAs({
      sub: `unv-${Date.now()}`,
      email: uniqueEmail('unverified-at-provider'),
      emailVerified: false,
    });
    await page.getByRole('link', { name: 'Continue with Google', exact: true }).click();
    await shown(page.getByRole('alert').getByText('has not verified your email address', { exact: false }));
    await page.waitForURL(`${w.origin}/auth/callback`);
  });

  it('text an attacker writes into a /auth/callback link is never shown: a message per known code, a generic one otherwise', async () => {
    const PHISH = 'Your account is suspended. Call +1 555 0100 and give your password to restore it';
    const { page } = await w.person();
    const alertOf = async (fragment: string) => {
      await page.goto('/sign-in');
      await page.goto(`/auth/callback#${fragment}`);
      const alert = await shown(page.getByRole('alert'));
      return (await alert.textContent())!;
    };
    const withPhish = (error: string) => new URLSearchParams({ error, error_description: PHISH }).toString();

    const locked = await alertOf(withPhish('ACCOUNT_LOCKED'));
    expect(locked).toContain('locked');
    expect(locked).not.toContain('555');

    const unknown = await alertOf(withPhish('CALL_SUPPORT_AT_555_0100'));
    expect(unknown).toContain('The sign-in did not complete');
    expect(unknown).not.toContain('555');
    expect(unknown).not.toContain('CALL_SUPPORT');

    // A description alone, or an error that is no code at all, says nothing of its own either.
    for (const fragment of [new URLSearchParams({ error_description: PHISH }).toString(), withPhish(PHISH)]) {
      const shownText = await alertOf(fragment);
      expect(shownText).not.toContain('555');
    }
  });

  it('"Continue with GitHub" signs in too; with two-factor on, /auth/callback asks for the code', async () => {
    // GitHub, a new account.
    const first = await w.person();
    const newcomer = uniqueEmail('github');
    await first.page.goto('/sign-in');
    w.signInAtProviderAs({ sub: String(Date.now()), email: newcomer, emailVerified: true, name: 'Linus' });
    await first.page.getByRole('link', { name: 'Continue with GitHub', exact: true }).click();
    await signedInAs(first.page, newcomer);

    // Google reaching an account that has two-factor on: the callback page takes the second step.
    const email = await verifiedAccount(w.t, 'social-2fa');
    const auth = await apiLogin(w.t, email);
    const setup = await w.t.request({
      method: 'POST',
      url: '/api/v1/auth/two-factor/setup',
      headers: auth,
      payload: { password: PASSWORD },
    });
    const totp = OTPAuth.URI.parse(json(setup).otpauthUrl as string) as OTPAuth.TOTP;
    const on = await w.t.request({
      method: 'POST',
      url: '/api/v1/auth/two-factor/verify',
      headers: auth,
      payload: { code: totp.generate() },
    });
    expect(on.statusCode, on.body).toBe(200);
    const { page } = await w.person();
    await page.goto('/sign-in');
    w.signInAtProviderAs({ sub: `g2-${Date.now()}`, email, emailVerified: true });
    await page.getByRole('link', { name: 'Continue with Google', exact: true }).click();
    await page.waitForURL(/\/auth\/callback$/);
    await page.getByLabel('Code', { exact: true }).fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await signedInAs(page, email);
  });

  it('sets up two-factor with a QR code of the otpauth URL and backup codes; sign-in then asks for a code', async () => {
    const email = await verifiedAccount(w.t, 'totp');
    const { page } = await w.person();
    await signInWithPassword(page, email);
    await page.goto('/account');
    const section = page.getByRole('region', { name: 'Two-factor authentication' });
    await section.getByLabel('Password', { exact: true }).fill(PASSWORD);
    const answer = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/two-factor/setup') && r.status() === 200);
    await section.getByRole('button', { name: 'Set up two-factor' }).click();
    const { otpauthUrl, secret, backupCodes } = (await (await answer).json()) as {
      otpauthUrl: string;
      secret: string;
      backupCodes: string[];
    };

    // The QR code drawn is the otpauth URL's, module for module: an authenticator app scanning it reads that URL.
    const qr = QRCode.create(otpauthUrl, {});
    const expected = Array.from(qr.modules.data, (bit) => bit === 1);
    expect(await modulesDrawn(page, qr.modules.size, 1)).toEqual(expected);
    expect((await page.getByTestId('totp-secret').textContent())!.trim()).toBe(secret);
    const shownCodes = await page.getByRole('list', { name: 'Backup codes' }).getByRole('listitem').allTextContents();
    expect(shownCodes.map((c) => c.trim())).toEqual(backupCodes);
    // Saved as a file, one code a line.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download codes', exact: true }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('backup-codes.txt');
    const saved = await download.path();
    expect(fs.readFileSync(saved, 'utf8')).toBe(`${backupCodes.join('\n')}\n`);

    const totp = OTPAuth.URI.parse(otpauthUrl) as OTPAuth.TOTP;
    // A wrong code is refused next to the field.
    await section.getByLabel('Code', { exact: true }).fill('000000');
    await section.getByRole('button', { name: 'Turn on two-factor' }).click();
    const codeField = section.getByLabel('Code', { exact: true });
    await shown(section.getByRole('alert'));
    expect(await codeField.getAttribute('aria-invalid')).toBe('true');
    await codeField.fill(totp.generate());
    await section.getByRole('button', { name: 'Turn on two-factor' }).click();
    await shown(section.getByText('Two-factor is on.'));

    // Sign-in now takes the password, then a code: a backup code here, once.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await shown(page.getByRole('heading', { name: 'Two-factor sign-in' }));
    await page.getByLabel('Code', { exact: true }).fill(backupCodes[0]!);
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await signedInAs(page, email);

    // And with the authenticator's code (the next step's: the current one was spent confirming).
    const second = await w.person();
    await second.page.goto('/sign-in');
    await second.page.getByLabel('Email', { exact: true }).fill(email);
    await second.page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await second.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await second.page.getByLabel('Code', { exact: true }).fill(backupCodes[0]!);
    await second.page.getByRole('button', { name: 'Verify', exact: true }).click();
    await shown(second.page.getByRole('alert'));
    await second.page.getByLabel('Code', { exact: true }).fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await second.page.getByRole('button', { name: 'Verify', exact: true }).click();
    await signedInAs(second.page, email);
  });

  it('"Sign out everywhere" ends the sessions of every browser', async () => {
    const email = await verifiedAccount(w.t, 'everywhere');
    const a = await w.person();
    const b = await w.person();
    await signInWithPassword(a.page, email);
    await signInWithPassword(b.page, email);
    await a.page.goto('/account');
    await a.page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await shown(a.page.getByRole('heading', { name: 'Sign in', exact: true }));
    await shown(a.page.getByText('You were signed out of every session.'));

    await b.page.goto('/account');
    await b.page.waitForURL(/\/sign-in\?next=%2Faccount$/);
    const res = await w.t.request({
      method: 'GET',
      url: '/api/v1/users/me/sessions',
      headers: await apiLogin(w.t, email),
    });
    expect(json(res).sessions).toHaveLength(1); // the one just made by apiLogin
  });

  it('the sign-in form works from the keyboard alone, in a sensible order', async () => {
    const email = await verifiedAccount(w.t, 'keyboard');
    const { page } = await w.person();
    await page.goto('/sign-in');
    // The social buttons come once the page knows the service offers them (/app-config.json).
    await shown(page.getByRole('link', { name: 'Continue with GitHub', exact: true }));
    const focused = () =>
      page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        if (!el) return '';
        const label = el.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : null;
        return (label ?? el.textContent ?? '').trim();
      });
    // Tab from the top to the last link of the card; every control on the way, in reading order.
    const order: string[] = [];
    for (let i = 0; i < 20 && order[order.length - 1] !== 'Create an account'; i++) {
      await page.keyboard.press('Tab');
      order.push(await focused());
    }
    const expected = [
      'Skip to content',
      'Tenantry',
      'Email',
      'Password',
      'Sign in',
      'Email me a sign-in link',
      'Forgot your password?',
      'Continue with Google',
      'Continue with GitHub',
      'Create an account',
    ];
    // (Other ways to sign in, such as passkeys, may sit between; these come in this order.)
    expect(order.filter((name) => expected.includes(name))).toEqual(expected);
    expect(order.slice(0, 5)).toEqual(expected.slice(0, 5));
    // Focus is visible where it lands.
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe('none');

    await page.goto('/sign-in');
    await shown(page.getByRole('heading', { name: 'Sign in', exact: true }));
    for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await signedInAs(page, email);
  });

  it('at phone width (390 px) the sign-in page and every console page fit without sideways scrolling', async () => {
    const email = await verifiedAccount(w.t, 'phone');
    const { page } = await w.person(390);
    await page.goto('/sign-in');
    await shown(page.getByRole('button', { name: 'Sign in', exact: true }));
    expect(await scrollsSideways(page)).toBe(false);
    await page.goto('/sign-up');
    await shown(page.getByRole('button', { name: 'Sign up', exact: true }));
    expect(await scrollsSideways(page)).toBe(false);

    await signInWithPassword(page, email);
    // The email is shown whole, not cut short.
    expect(await page.getByTestId('signed-in-email').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    const orgId = await createOrganization(page, 'Pocket Computing', `pocket-${Date.now().toString(36)}`);
    const pages: Array<[string, string | RegExp]> = [
      [`/orgs/${orgId}/projects`, 'Create project'],
      [`/orgs/${orgId}/members`, 'Invite'],
      [`/orgs/${orgId}/api-keys`, 'Create API key'],
      [`/orgs/${orgId}/webhooks`, 'Add endpoint'],
      [`/orgs/${orgId}/billing`, 'Upgrade'],
      [`/orgs/${orgId}/audit-log`, 'Apply filters'],
      [`/orgs/${orgId}/settings`, 'Save settings'],
      ['/account', 'Sign out everywhere'],
      ['/orgs', 'Create organization'],
    ];
    for (const [path, button] of pages) {
      await page.goto(path);
      await shown(page.getByRole('button', { name: button, exact: true }));
      expect(await scrollsSideways(page), path).toBe(false);
    }
  });
});
