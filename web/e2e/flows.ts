// Steps the browser tests share: the link of a real mail, signing in through the pages, and accounts
// made through the API when a test is about something else. playwright-core has no assertion
// library: a locator's waitFor() is the auto-waiting check that something is (or is no longer) shown.
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { json, type TestApp } from '../../test/harness.js';

export const PASSWORD = 'Correct-Horse-9';
let counter = 0;
export const uniqueEmail = (label: string) => `${label}-${Date.now().toString(36)}-${++counter}@example.com`;

/** Waits until the locator is visible (Playwright's auto-waiting), and returns it. */
export async function shown(locator: Locator): Promise<Locator> {
  await locator.first().waitFor({ state: 'visible' });
  return locator;
}

/** The whole link of the newest mail to `to` whose subject matches; it must point at `origin`. */
export async function mailedLink(
  t: TestApp,
  origin: string,
  to: string,
  subject: RegExp,
  path: string,
): Promise<string> {
  await t.mail.waitFor(to, subject, 15_000);
  const mails = t.mail.mails.filter((m) => m.to.includes(to.toLowerCase()) && subject.test(m.subject));
  const text = mails[mails.length - 1]!.decoded;
  const m = new RegExp(`(https?://[^\\s"<>]+?${path.replace(/\//g, '\\/')}\\?token=[A-Za-z0-9_%-]+)`).exec(text);
  if (!m) throw new Error(`No ${path} link in the mail to ${to}`);
  expect(new URL(m[1]!).origin).toBe(origin);
  return m[1]!;
}

/** The email the console shows once signed in. */
export const signedInAs = (page: Page, email: string) =>
  shown(page.getByTestId('signed-in-email').filter({ hasText: email }));

export async function signInWithPassword(page: Page, email: string, password = PASSWORD) {
  await page.goto('/sign-in');
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await signedInAs(page, email);
}

/** A verified account, made through the API with the link from the mail. */
export async function verifiedAccount(t: TestApp, label: string, fullName = 'Test Person', email = uniqueEmail(label)) {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email, password: PASSWORD, fullName },
  });
  expect(res.statusCode, res.body).toBe(201);
  const token = await t.mail.tokenFrom(email, /Verify your email/, '/verify-email');
  const verified = await t.request({ method: 'POST', url: '/api/v1/auth/verify-email', payload: { token } });
  expect(verified.statusCode, verified.body).toBe(200);
  return email;
}

/** An access token through the API (not the browser), to check from outside what the pages did. */
export async function apiLogin(t: TestApp, email: string, password = PASSWORD): Promise<{ authorization: string }> {
  const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
  expect(res.statusCode, res.body).toBe(200);
  return { authorization: `Bearer ${json(res).accessToken as string}` };
}

/** An organization made through the console's form; its id, from the address it lands on. */
export async function createOrganization(page: Page, name: string, slug: string): Promise<string> {
  await page.goto('/orgs');
  await page.getByLabel('Organization name', { exact: true }).fill(name);
  await page.getByLabel('Slug', { exact: true }).fill(slug);
  await page.getByRole('button', { name: 'Create organization', exact: true }).click();
  await page.waitForURL(/\/orgs\/org_[a-z0-9]+\/projects$/);
  await shown(page.getByRole('heading', { name, exact: true }));
  return /\/orgs\/(org_[a-z0-9]+)\//.exec(page.url())![1]!;
}
