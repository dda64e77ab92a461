// The account's life from the account page, end to end in Chromium against the real API: an email
// change confirmed through the link mailed to the new address (/confirm-email: a click, signed in to
// the account that asked), the data export downloaded, and the account deleted.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useWebApp } from './app.js';
import { json } from '../../test/harness.js';
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

describe('the account page', () => {
  it('changes the email address through the link mailed to the new one: confirmed by a click, signed in to the account', async () => {
    const email = await verifiedAccount(w.t, 'move');
    const newEmail = uniqueEmail('moved');
    const { page } = await w.person();
    await signInWithPassword(page, email);
    await page.goto('/account');
    const section = page.getByRole('region', { name: 'Email address' });
    await section.getByLabel('New email address').fill(newEmail);
    await section.getByLabel('Your password').fill(PASSWORD);
    await section.getByRole('button', { name: 'Change email address', exact: true }).click();
    await shown(section.getByText(`A confirmation link is on its way to ${newEmail}`));
    const link = await mailedLink(w.t, w.origin, newEmail, /Confirm your new email address/, '/confirm-email');
    const emailNow = async () =>
      json(await w.t.request({ method: 'GET', url: '/api/v1/users/me', headers: await apiLogin(w.t, email) }))
        .email as string;

    // Opened where nobody is signed in (the new address's mailbox, on another device): opening it
    // changes nothing; the page asks to sign in to the account that asked.
    const { page: elsewhere } = await w.person();
    await elsewhere.goto(link);
    await shown(elsewhere.getByText('To confirm, sign in to the account that asked'));
    expect(await elsewhere.getByRole('button', { name: 'Confirm new email address' }).count()).toBe(0);
    expect(await emailNow()).toBe(email);
    // Signing in from there comes back to the link, which still waits for a click.
    await elsewhere.getByRole('link', { name: 'sign in', exact: true }).click();
    await elsewhere.getByLabel('Email', { exact: true }).fill(email);
    await elsewhere.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await elsewhere.getByRole('button', { name: 'Sign in', exact: true }).click();
    const confirm = await shown(elsewhere.getByRole('button', { name: 'Confirm new email address', exact: true }));
    await shown(elsewhere.getByText(`You are signed in as ${email}`));
    expect(await emailNow()).toBe(email);
    await confirm.click();
    await shown(elsewhere.getByText('Email address changed'));
    await signedInAs(elsewhere, newEmail);
    await w.t.mail.waitFor(email, /The email address of your account has changed/);
    // The first browser's session stays, and shows the new address once it reads the account again.
    await page.goto('/account');
    await signedInAs(page, newEmail);
  });

  it('downloads the export, then deletes the account', async () => {
    const email = await verifiedAccount(w.t, 'leaving');
    const { page } = await w.person();
    await signInWithPassword(page, email);
    await page.goto('/account');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download your data', exact: true }).click();
    const file = await (await download).path();
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { profile: { email: string }; sessions: unknown[] };
    expect(doc.profile.email).toBe(email);
    expect(doc.sessions.length).toBeGreaterThan(0);

    const section = page.getByRole('region', { name: 'Delete account' });
    await section.getByLabel('Your password').fill('Wrong-Password-1');
    await section.getByRole('button', { name: 'Delete my account', exact: true }).click();
    await shown(section.getByText('Password is incorrect'));
    await section.getByLabel('Your password').fill(PASSWORD);
    await section.getByRole('button', { name: 'Delete my account', exact: true }).click();
    await page.waitForURL(/\/sign-in\?deleted=1$/);
    await shown(page.getByRole('heading', { name: 'Sign in', exact: true }));
    // The page says what happened, rather than landing on a bare sign-in form.
    await shown(page.getByText('Your account was deleted, with everything it held.', { exact: false }));
    const login = await w.t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email, password: PASSWORD },
    });
    expect(login.statusCode).toBe(401);
  });
});
