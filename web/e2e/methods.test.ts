// The sign-in page offers only what the service does: here passwords are turned off
// (AUTH_PASSWORD_ENABLED=false) and GitHub is not configured, so there is no Password field, no
// "Forgot your password?" and no GitHub button, and the mailed sign-in link is the way in.
import { describe, expect, it } from 'vitest';
import { useWebApp } from './app.js';
import { mailedLink, shown, signedInAs, uniqueEmail } from './flows.js';

const w = useWebApp({ AUTH_PASSWORD_ENABLED: 'false', AUTH_GITHUB_ENABLED: 'false' });

describe('sign-in methods as configured', () => {
  it('without passwords and GitHub: the form asks for the email only, and the sign-in link works', async () => {
    let { page } = await w.person();
    await page.goto('/sign-in');
    await shown(page.getByRole('link', { name: 'Continue with Google', exact: true }));
    expect(await page.getByRole('link', { name: 'Continue with GitHub' }).count()).toBe(0);
    expect(await page.getByLabel('Password', { exact: true }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Forgot your password?' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Sign in', exact: true }).count()).toBe(0);

    // Sign-up has no form; it points at the other ways in.
    await page.goto('/sign-up');
    await shown(page.getByText('This service does not use passwords'));
    expect(await page.getByRole('button', { name: 'Sign up' }).count()).toBe(0);

    // An account made with Google; then, in another browser, Enter in the email field sends the
    // sign-in link, and the link signs in.
    const email = uniqueEmail('nopassword');
    w.signInAtProviderAs({ sub: `np-${Date.now()}`, email, emailVerified: true });
    await page.getByRole('link', { name: 'Continue with Google', exact: true }).click();
    await signedInAs(page, email);
    ({ page } = await w.person());
    await page.goto('/sign-in');
    await shown(page.getByRole('link', { name: 'Continue with Google', exact: true })); // the methods are known
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Email', { exact: true }).press('Enter');
    await shown(page.getByText('a sign-in link is on its way'));
    await page.goto(await mailedLink(w.t, w.origin, email, /Your sign-in link/, '/magic-link'));
    await signedInAs(page, email);
    // The account page has no password to change.
    const config = page.waitForResponse((r) => r.url().endsWith('/app-config.json'));
    await page.goto('/account');
    await config;
    await shown(page.getByRole('region', { name: 'Profile' }));
    expect(await page.getByRole('region', { name: 'Password', exact: true }).count()).toBe(0);
  });
});
