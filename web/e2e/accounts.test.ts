// The pages mailed links land on, end to end in Chromium against the real API: sign-up and its
// verification link, sign-in, a session that survives a reload through the HttpOnly cookie and ends
// with "Sign out", the password reset from the mail, and the sign-in link.
import { describe, expect, it } from 'vitest';
import { json } from '../../test/harness.js';
import { useWebApp } from './app.js';
import {
  apiLogin,
  mailedLink,
  PASSWORD,
  shown,
  signedInAs,
  signInWithPassword,
  uniqueEmail,
  verifiedAccount,
} from './flows.js';

const w = useWebApp();

describe('accounts in the browser', () => {
  it('sign-up → the mailed link → "Email verified" → sign-in shows the email', async () => {
    const { page } = await w.person();
    const email = uniqueEmail('signup');
    await page.goto('/sign-up');
    await page.getByLabel('Full name', { exact: true }).fill('Ada Lovelace');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up', exact: true }).click();
    await shown(page.getByText('We sent a verification link'));

    await page.goto(await mailedLink(w.t, w.origin, email, /Verify your email/, '/verify-email'));
    await shown(page.getByText('Email verified', { exact: true }));
    // The live token left the address bar (and the history) once read.
    expect(page.url()).toBe(`${w.origin}/verify-email`);

    await page.getByRole('link', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await signedInAs(page, email);
    // The API agrees: the address is verified.
    const me = await w.t.request({ method: 'GET', url: '/api/v1/users/me', headers: await apiLogin(w.t, email) });
    expect(json(me)).toMatchObject({ email, fullName: 'Ada Lovelace', emailVerified: expect.any(String) });
  });

  it('shows the API error next to the field it concerns', async () => {
    const { page } = await w.person();
    await page.goto('/sign-up');
    await page.getByLabel('Email', { exact: true }).fill(uniqueEmail('weak'));
    const password = page.getByLabel('Password', { exact: true });
    await password.fill('short');
    await page.getByRole('button', { name: 'Sign up', exact: true }).click();
    const alert = await shown(page.getByRole('alert').filter({ hasText: /password/i }));
    const alertId = await alert.getAttribute('id');
    expect(await password.getAttribute('aria-describedby')).toContain(alertId);
    expect(await password.getAttribute('aria-invalid')).toBe('true');
  });

  it('keeps the session over a reload (silent refresh through the cookie), in memory only, and "Sign out" ends it', async () => {
    const email = await verifiedAccount(w.t, 'reload');
    const { page, context } = await w.person();
    await signInWithPassword(page, email);
    await page.goto('/account');
    await page.reload();
    await signedInAs(page, email);
    await shown(page.getByRole('heading', { name: 'Account', exact: true }));

    // No token where scripts could read it: the refresh token is an HttpOnly cookie.
    expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([
      0,
      0,
      '',
    ]);
    const cookie = (await context.cookies()).find((c) => c.name === 'tenantry_refresh');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/v1/auth' });

    const sessions = async () => {
      const res = await w.t.request({
        method: 'GET',
        url: '/api/v1/users/me/sessions',
        headers: await apiLogin(w.t, email),
      });
      return (json(res).sessions as Array<{ userAgent: string | null }>).filter((s) => /Chrome/.test(s.userAgent ?? ''))
        .length;
    };
    expect(await sessions()).toBe(1);

    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await shown(page.getByRole('heading', { name: 'Sign in', exact: true }));
    expect((await context.cookies()).some((c) => c.name === 'tenantry_refresh')).toBe(false);
    await page.goto('/account');
    await page.waitForURL(/\/sign-in\?next=%2Faccount$/);
    await shown(page.getByRole('button', { name: 'Sign in', exact: true }));
    expect(await sessions()).toBe(0);
  });

  it('an access token refused with 401 is refreshed through the cookie once, and the call sent again', async () => {
    const email = await verifiedAccount(w.t, 'expired');
    const { page } = await w.person();
    await signInWithPassword(page, email);
    // The next call answers as for an expired access token.
    await page.route(
      '**/api/v1/users/me/sessions?*',
      (route) =>
        route.fulfill({
          status: 401,
          contentType: 'application/json',
          body: JSON.stringify({ success: false, error: { code: 'AUTHENTICATION_ERROR', message: 'Token expired' } }),
        }),
      { times: 1 },
    );
    const refreshed = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/refresh') && r.status() === 200);
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await refreshed;
    await shown(page.getByRole('region', { name: 'Sessions' }).getByText('This session'));
    // The device as people name it, not the raw User-Agent.
    await shown(page.getByRole('region', { name: 'Sessions' }).getByText(/^Chrome \d+ on Linux$/));
    await signedInAs(page, email);
  });

  it('resets the password from the mail: "Password changed", then the new one signs in', async () => {
    const email = await verifiedAccount(w.t, 'reset');
    const { page } = await w.person();
    await page.goto('/sign-in');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await shown(page.getByText('a link to set a new password is on its way'));

    await page.goto(await mailedLink(w.t, w.origin, email, /Reset your password/, '/reset-password'));
    // The token leaves the address bar at once; the page keeps it for the form.
    await page.waitForURL(`${w.origin}/reset-password`);
    await page.getByLabel('New password', { exact: true }).fill('Brand-New-Secret-7');
    await page.getByRole('button', { name: 'Set new password', exact: true }).click();
    await shown(page.getByText('Password changed', { exact: true }));

    await signInWithPassword(page, email, 'Brand-New-Secret-7');
    const old = await w.t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email, password: PASSWORD },
    });
    expect(old.statusCode).toBe(401);
  });

  it('changes the name and the password on /account; the session stays, the new password signs in', async () => {
    const email = await verifiedAccount(w.t, 'account');
    const { page } = await w.person();
    await signInWithPassword(page, email);
    await page.goto('/account');
    const profile = page.getByRole('region', { name: 'Profile' });
    const fullName = profile.getByLabel('Full name', { exact: true });
    await expect.poll(() => fullName.inputValue()).toBe('Test Person'); // loaded
    await fullName.fill('Augusta Ada King');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await shown(profile.getByText('Profile saved'));

    const password = page.getByRole('region', { name: 'Password' });
    await password.getByLabel('Current password', { exact: true }).fill('Not-The-Password-1');
    await password.getByLabel('New password', { exact: true }).fill('Another-Secret-8');
    await password.getByRole('button', { name: 'Change password' }).click();
    const wrong = password.getByLabel('Current password', { exact: true });
    await shown(password.getByRole('alert'));
    expect(await wrong.getAttribute('aria-invalid')).toBe('true');
    await wrong.fill(PASSWORD);
    await password.getByRole('button', { name: 'Change password' }).click();
    await shown(password.getByText(/^Password changed/));

    await page.reload();
    await signedInAs(page, email);
    const me = await w.t.request({
      method: 'GET',
      url: '/api/v1/users/me',
      headers: await apiLogin(w.t, email, 'Another-Secret-8'),
    });
    expect(json(me).fullName).toBe('Augusta Ada King');
  });

  it('a reload after the token left the address bar sends no token to the server, and says the link has none', async () => {
    const email = await verifiedAccount(w.t, 'reset-reload');
    const res = await w.t.request({ method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email } });
    expect(res.statusCode).toBe(200);
    const { page } = await w.person();
    const link = await mailedLink(w.t, w.origin, email, /Reset your password/, '/reset-password');
    const sent: string[] = [];
    page.on('request', (r) => sent.push(r.url()));
    await page.goto(link);
    await page.waitForURL(`${w.origin}/reset-password`);
    await page.reload();
    await page.getByLabel('New password', { exact: true }).fill('Brand-New-Secret-7');
    await page.getByRole('button', { name: 'Set new password', exact: true }).click();
    await shown(page.getByText('This link has no token', { exact: false }));
    // Only the first navigation carried it.
    const token = new URL(link).searchParams.get('token')!;
    expect(sent.filter((u) => u.includes(encodeURIComponent(token)) || u.includes(token))).toEqual([link]);
  });

  it('signs in with the link from "Email me a sign-in link"', async () => {
    const email = await verifiedAccount(w.t, 'magic');
    const { page } = await w.person();
    await page.goto('/sign-in');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in link', exact: true }).click();
    await shown(page.getByText('a sign-in link is on its way'));

    await page.goto(await mailedLink(w.t, w.origin, email, /Your sign-in link/, '/magic-link'));
    await signedInAs(page, email);
    await page.waitForURL(/\/orgs$/);
  });
});
