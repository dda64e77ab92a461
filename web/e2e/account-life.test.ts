// The account's life from the account page, end to end in Chromium against the real API: an email
// change confirmed through the link mailed to the new address (/confirm-email), the data export
// downloaded, and the account deleted.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useWebApp } from './app.js';
import { mailedLink, PASSWORD, shown, signedInAs, signInWithPassword, uniqueEmail, verifiedAccount } from './flows.js';

const w = useWebApp();

describe('the account page', () => {
  it('changes the email address through the link mailed to the new one', async () => {
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
    await page.goto(link);
    await shown(page.getByText('Email address changed'));
    await signedInAs(page, newEmail);
    await w.t.mail.waitFor(email, /The email address of your account has changed/);
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
    await page.waitForURL(/\/sign-in$/);
    await shown(page.getByRole('heading', { name: 'Sign in', exact: true }));
    const login = await w.t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: PASSWORD } });
    expect(login.statusCode).toBe(401);
  });
});
