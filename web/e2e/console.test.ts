// The console in Chromium against the real API: an organization and its projects, an invitation
// mailed to a second person who accepts it, an API key shown once and listed, a webhook endpoint
// (a test delivery, its body, recovery, the secret rotated), and the upgrade through the built-in test checkout.
import { describe, expect, it } from 'vitest';
import { json } from '../../test/harness.js';
import { useWebApp } from './app.js';
import {
  apiLogin,
  createOrganization,
  mailedLink,
  shown,
  signedInAs,
  signInWithPassword,
  verifiedAccount,
} from './flows.js';

const w = useWebApp();

describe('the console', () => {
  it('creates, renames and deletes projects, then finds them in the audit log with its filters; switches organization and renames it', async () => {
    const email = await verifiedAccount(w.t, 'projects');
    const { page } = await w.person();
    await signInWithPassword(page, email);
    // A slug the API refuses: the form says the rule in words, not the API's pattern.
    await page.goto('/orgs');
    await page.getByLabel('Organization name', { exact: true }).fill('Analytical Engines');
    await page.getByLabel('Slug', { exact: true }).fill('Bad Slug');
    await page.getByRole('button', { name: 'Create organization', exact: true }).click();
    await shown(page.getByText('Use lowercase letters and digits, with single dashes between words'));
    expect(await page.getByText(/pattern/).count()).toBe(0);
    const orgId = await createOrganization(page, 'Analytical Engines', `engines-${Date.now().toString(36)}`);

    await page.getByLabel('Name', { exact: true }).fill('Difference Engine');
    await page.getByRole('button', { name: 'Create project', exact: true }).click();
    const projects = page.getByRole('list', { name: 'Projects' });
    await shown(projects.getByText('Difference Engine', { exact: true }));

    await page.getByRole('button', { name: 'Rename Difference Engine' }).click();
    await projects.getByLabel('Name', { exact: true }).fill('Difference Engine No. 2');
    await projects.getByRole('button', { name: 'Save', exact: true }).click();
    await shown(projects.getByText('Difference Engine No. 2', { exact: true }));

    const auth = await apiLogin(w.t, email);
    const listed = await w.t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers: auth });
    expect(json(listed).data.map((p: { name: string }) => p.name)).toEqual(['Difference Engine No. 2']);

    await page.getByRole('button', { name: 'Delete Difference Engine No. 2' }).click();
    await shown(page.getByText('No projects yet.'));
    const after = await w.t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers: auth });
    expect(json(after).total).toBe(0);

    // The audit log lists the changes, and its filters narrow it.
    await page.getByRole('link', { name: 'Audit log', exact: true }).click();
    const log = page.getByRole('table', { name: 'Audit log' });
    await shown(log.getByText(`/api/v1/organizations/${orgId}/projects`, { exact: false }));
    await page.getByLabel('Action', { exact: true }).fill('POST /api/v1/organizations/:orgId/projects');
    await page.getByRole('button', { name: 'Apply filters', exact: true }).click();
    await shown(page.getByRole('heading', { name: 'Entries (1)' }));
    expect(await log.getByRole('row').count()).toBe(2); // the header and the one creation
    await page.getByLabel('Actor type', { exact: true }).selectOption('api_key');
    await page.getByRole('button', { name: 'Apply filters', exact: true }).click();
    await shown(page.getByRole('heading', { name: 'Entries (0)' }));

    // A second organization, and the switcher back to the first (on the same tab).
    await createOrganization(page, 'Second Engines', `second-${Date.now().toString(36)}`);
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await page.getByLabel('Switch organization', { exact: true }).selectOption(orgId);
    await page.waitForURL(new RegExp(`/orgs/${orgId}/settings$`));
    await shown(page.getByRole('heading', { name: 'Analytical Engines', exact: true }));

    // Renamed in its settings: the heading follows.
    const settings = page.getByRole('form', { name: 'Organization settings' });
    await settings.getByLabel('Organization name', { exact: true }).fill('Analytical Engines Ltd');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await shown(settings.getByText('Settings saved'));
    await shown(page.getByRole('heading', { name: 'Analytical Engines Ltd', exact: true }));
  });

  it('invites a second person, who accepts from the mail: "Invitation accepted", and is listed as a member; the owner changes the role', async () => {
    const owner = await verifiedAccount(w.t, 'owner');
    const invitee = await verifiedAccount(w.t, 'invitee', 'Charles Babbage');
    const a = await w.person();
    await signInWithPassword(a.page, owner);
    const orgId = await createOrganization(a.page, 'Royal Society', `royal-${Date.now().toString(36)}`);

    await a.page.getByRole('link', { name: 'Members', exact: true }).click();
    await a.page.getByLabel('Email', { exact: true }).fill(invitee);
    await a.page.getByLabel('Role', { exact: true }).selectOption('admin');
    await a.page.getByRole('button', { name: 'Invite', exact: true }).click();
    await shown(a.page.getByRole('list', { name: 'Pending invitations' }).getByText(invitee));

    const b = await w.person();
    await b.page.goto(
      await mailedLink(w.t, w.origin, invitee, /You are invited to join Royal Society/, '/invitations/accept'),
    );
    // The token leaves the address bar once read; the page keeps it to come back to after signing in.
    await b.page.waitForURL(`${w.origin}/invitations/accept`);
    // What it offers, before signing in: the organization, who invited, the role.
    const offer = await shown(b.page.getByTestId('invitation-offer'));
    expect(await offer.textContent()).toContain(`Test Person invited ${invitee} to join Royal Society as Admin.`);
    await b.page.getByRole('link', { name: 'sign in', exact: true }).click();
    await b.page.getByLabel('Email', { exact: true }).fill(invitee);
    await b.page.getByLabel('Password', { exact: true }).fill('Correct-Horse-9');
    await b.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await signedInAs(b.page, invitee);
    await b.page.waitForURL(`${w.origin}/invitations/accept`);
    await b.page.getByRole('button', { name: 'Accept invitation', exact: true }).click();
    await shown(b.page.getByText('Invitation accepted', { exact: true }));

    await a.page.reload();
    await shown(a.page.getByRole('list', { name: 'Members' }).getByText('Charles Babbage'));
    const members = await w.t.request({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/members`,
      headers: await apiLogin(w.t, owner),
    });
    expect(
      json(members).members.map((m: { user: { email: string }; role: string }) => [m.user.email, m.role]),
    ).toContainEqual([invitee, 'admin']);

    // The owner changes the new member's role.
    await a.page.getByLabel(`Role of ${invitee}`, { exact: true }).selectOption('viewer');
    const ownerAuth = await apiLogin(w.t, owner);
    await expect
      .poll(async () => {
        const res = await w.t.request({
          method: 'GET',
          url: `/api/v1/organizations/${orgId}/members`,
          headers: ownerAuth,
        });
        return json(res).members.find((m: { user: { email: string } }) => m.user.email === invitee)?.role;
      })
      .toBe('viewer');
  });

  it('someone invited who has no account signs up from the invitation, verifies, and comes back to it', async () => {
    const owner = await verifiedAccount(w.t, 'newcomer-owner', 'Ada Owner');
    const ownerAuth = await apiLogin(w.t, owner);
    const org = await w.t.request({
      method: 'POST',
      url: '/api/v1/organizations',
      headers: ownerAuth,
      payload: { name: 'Analytical Engines', slug: `engines-${Date.now().toString(36)}` },
    });
    const orgId = json(org).id as string;
    const newcomer = `newcomer-${Date.now().toString(36)}@example.com`;
    const sent = await w.t.request({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/invitations`,
      headers: ownerAuth,
      payload: { email: newcomer, role: 'member' },
    });
    expect(sent.statusCode, sent.body).toBe(201);

    const { page } = await w.person();
    await page.goto(
      await mailedLink(w.t, w.origin, newcomer, /You are invited to join Analytical Engines/, '/invitations/accept'),
    );
    await shown(page.getByRole('heading', { name: 'Join Analytical Engines' }));
    await page.getByRole('link', { name: 'create an account', exact: true }).click();
    await page.getByLabel('Full name', { exact: true }).fill('Newcomer Person');
    await page.getByLabel('Email', { exact: true }).fill(newcomer);
    await page.getByLabel('Password', { exact: true }).fill('Correct-Horse-9');
    await page.getByRole('button', { name: 'Sign up', exact: true }).click();
    await shown(page.getByText('We sent a verification link'));
    // The verification link, as a mail client opens it: in a new tab of the same browser.
    const tab = await page.context().newPage();
    await tab.goto(await mailedLink(w.t, w.origin, newcomer, /Verify your email/, '/verify-email'));
    await shown(tab.getByText('Email verified', { exact: true }));
    await tab.getByRole('link', { name: 'Sign in', exact: true }).click();
    await tab.getByLabel('Email', { exact: true }).fill(newcomer);
    await tab.getByLabel('Password', { exact: true }).fill('Correct-Horse-9');
    await tab.getByRole('button', { name: 'Sign in', exact: true }).click();
    await signedInAs(tab, newcomer);
    // Back on the invitation, which names the organization; accepted from there.
    await tab.waitForURL(`${w.origin}/invitations/accept`);
    await shown(tab.getByRole('heading', { name: 'Join Analytical Engines' }));
    await tab.getByRole('button', { name: 'Accept invitation', exact: true }).click();
    await shown(tab.getByText('Invitation accepted', { exact: true }));
    const mine = await w.t.request({
      method: 'GET',
      url: '/api/v1/users/me/organizations',
      headers: await apiLogin(w.t, newcomer),
    });
    expect(json(mine).organizations.map((o: { id: string; role: string }) => [o.id, o.role])).toEqual([
      [orgId, 'member'],
    ]);
  });

  it('a pending invitation waits on the Organizations page, accepted there without the link', async () => {
    const owner = await verifiedAccount(w.t, 'waiting-owner', 'Ada Owner');
    const invitee = await verifiedAccount(w.t, 'waiting-invitee', 'Charles Waiting');
    const ownerAuth = await apiLogin(w.t, owner);
    const org = await w.t.request({
      method: 'POST',
      url: '/api/v1/organizations',
      headers: ownerAuth,
      payload: { name: 'Waiting Room', slug: `waiting-${Date.now().toString(36)}` },
    });
    const orgId = json(org).id as string;
    const sent = await w.t.request({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/invitations`,
      headers: ownerAuth,
      payload: { email: invitee, role: 'viewer' },
    });
    expect(sent.statusCode, sent.body).toBe(201);
    const { page } = await w.person();
    await signInWithPassword(page, invitee);
    await page.goto('/orgs');
    const pending = page.getByRole('list', { name: 'Invitations for you' });
    await shown(pending.getByText('Ada Owner invited you as Viewer', { exact: false }));
    await page.getByRole('button', { name: 'Accept the invitation to Waiting Room', exact: true }).click();
    await shown(page.getByText('You joined Waiting Room.'));
    await shown(page.getByRole('link', { name: /Waiting Room/ }));
  });

  it('the owner transfers ownership to a member in Settings and becomes an admin', async () => {
    const owner = await verifiedAccount(w.t, 'transfer-owner', 'Ada Owner');
    const heir = await verifiedAccount(w.t, 'transfer-heir', 'Grace Heir');
    const ownerAuth = await apiLogin(w.t, owner);
    const org = await w.t.request({
      method: 'POST',
      url: '/api/v1/organizations',
      headers: ownerAuth,
      payload: { name: 'Succession', slug: `succession-${Date.now().toString(36)}` },
    });
    const orgId = json(org).id as string;
    const sent = await w.t.request({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/invitations`,
      headers: ownerAuth,
      payload: { email: heir, role: 'member' },
    });
    const token = new URL(json(sent).inviteUrl as string).searchParams.get('token')!;
    const joined = await w.t.request({
      method: 'POST',
      url: '/api/v1/invitations/accept',
      headers: await apiLogin(w.t, heir),
      payload: { token },
    });
    expect(joined.statusCode, joined.body).toBe(200);

    const { page } = await w.person();
    await signInWithPassword(page, owner);
    await page.goto(`/orgs/${orgId}/settings`);
    const form = page.getByRole('form', { name: 'Transfer ownership' });
    await form.getByLabel('New owner', { exact: true }).selectOption({ label: `Grace Heir (${heir}, member)` });
    await form.getByRole('button', { name: 'Transfer ownership', exact: true }).click();
    await shown(page.getByText('Grace Heir now owns this organization; you are an admin.'));
    const members = await w.t.request({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/members`,
      headers: ownerAuth,
    });
    expect(
      json(members)
        .members.map((m: { user: { email: string }; role: string }) => [m.user.email, m.role])
        .sort(),
    ).toEqual(
      [
        [owner, 'admin'],
        [heir, 'owner'],
      ].sort(),
    );
    // An admin now: the owner's sections are gone.
    await shown(page.getByRole('button', { name: 'Leave organization', exact: true }));
    expect(await page.getByRole('button', { name: 'Delete organization', exact: true }).count()).toBe(0);
  });

  it('an invitation declined from the mail, without signing in', async () => {
    const owner = await verifiedAccount(w.t, 'decliner-owner');
    const a = await w.person();
    await signInWithPassword(a.page, owner);
    const orgId = await createOrganization(a.page, 'Difference Club', `club-${Date.now().toString(36)}`);
    const invitee = `declines-${Date.now().toString(36)}@example.com`;
    await a.page.getByRole('link', { name: 'Members', exact: true }).click();
    await a.page.getByLabel('Email', { exact: true }).fill(invitee);
    await a.page.getByRole('button', { name: 'Invite', exact: true }).click();
    await shown(a.page.getByRole('list', { name: 'Pending invitations' }).getByText(invitee));

    const b = await w.person();
    await b.page.goto(
      await mailedLink(w.t, w.origin, invitee, /You are invited to join Difference Club/, '/invitations/accept'),
    );
    await b.page.getByRole('button', { name: 'Decline', exact: true }).click();
    await shown(b.page.getByText('Invitation declined', { exact: true }));
    await a.page.reload();
    await shown(a.page.getByText('No pending invitations.'));
    const res = await w.t.request({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/invitations`,
      headers: await apiLogin(w.t, owner),
    });
    expect(json(res).data.map((i: { email: string; status: string }) => [i.email, i.status])).toEqual([
      [invitee, 'declined'],
    ]);
  });

  it('creates an API key (the key shown once, then listed with its usage) and adds a webhook endpoint', async () => {
    const email = await verifiedAccount(w.t, 'keys');
    const { page } = await w.person();
    await signInWithPassword(page, email);
    const orgId = await createOrganization(page, 'Key Holders', `keys-${Date.now().toString(36)}`);

    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await page.getByLabel('Name', { exact: true }).fill('ci');
    await page.getByLabel('Write projects').check();
    await page.getByLabel('Requests per minute', { exact: true }).fill('120');
    await page.getByRole('button', { name: 'Create API key', exact: true }).click();
    const plain = (await (await shown(page.getByTestId('plain-key'))).textContent())!.trim();
    expect(plain).toMatch(/^svc_live_[0-9a-f]{32}$/);
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: 'ci' });
    await shown(row.getByText(plain.slice(0, 17)));
    await shown(row.getByText('read:projects, write:projects'));
    await shown(row.getByText(/120\/min/));

    // The key works, and its use shows in the list.
    const used = await w.t.request({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/projects`,
      headers: { 'x-api-key': plain },
    });
    expect(used.statusCode).toBe(200);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.getByTestId('plain-key').count()).toBe(0);
    await page.getByRole('link', { name: 'Projects', exact: true }).click();
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await shown(page.getByRole('table', { name: 'API keys' }).getByText('1 requests'));

    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByLabel('URL', { exact: true }).fill(w.receiver.url);
    // The events it receives: two of the catalogue, and one of the product's own.
    for (const type of ['project.created', 'member.added'])
      await page.getByRole('checkbox', { name: type, exact: true }).check();
    await page.getByLabel('Your own event types', { exact: true }).fill('order.shipped');
    await page.getByRole('button', { name: 'Add endpoint', exact: true }).click();
    const secret = (await (await shown(page.getByTestId('signing-secret'))).textContent())!.trim();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    // Copied with one click: the clipboard holds the secret, and the button says so.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: w.origin });
    await page.getByRole('button', { name: 'Copy secret', exact: true }).click();
    await shown(page.getByRole('button', { name: 'Copied', exact: true }));
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await shown(page.getByText('project.created, member.added, order.shipped'));
    await page.getByRole('link', { name: w.receiver.url }).click();
    await page.getByRole('button', { name: 'Send test', exact: true }).click();
    const deliveries = page.getByRole('table', { name: 'Deliveries' });
    await shown(deliveries.getByText('test', { exact: true }));
    await expect.poll(() => w.receiver.received.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await shown(deliveries.getByText('delivered', { exact: true }));
    // The body sent, folded in its row.
    await deliveries.getByText('Body and answer').first().click();
    await shown(deliveries.getByText('"type": "test"'));
    // Nothing failed: queuing the failed deliveries again finds none.
    await page.getByLabel('Failed since', { exact: true }).fill('2020-01-01T00:00');
    await page.getByRole('button', { name: 'Queue again', exact: true }).click();
    await shown(page.getByText('0 deliveries queued again.'));

    // Rotating the secret shows the new one, once.
    await page.getByRole('link', { name: '← Endpoints' }).click();
    await page.getByRole('button', { name: `Rotate secret of ${w.receiver.url}` }).click();
    const rotate = page.getByRole('form', { name: `Rotate the secret of ${w.receiver.url}` });
    await rotate.getByLabel('Old secret keeps working', { exact: true }).selectOption('86400');
    await rotate.getByRole('button', { name: 'Rotate', exact: true }).click();
    await shown(page.getByText('the old one keeps working for a day'));
    const rotated = (await (await shown(page.getByTestId('signing-secret'))).textContent())!.trim();
    expect(rotated).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(rotated).not.toBe(secret);

    const hooks = await w.t.request({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/webhooks`,
      headers: await apiLogin(w.t, email),
    });
    expect(json(hooks).data.map((h: { url: string }) => h.url)).toEqual([w.receiver.url]);

    // With content in them, these pages still fit a phone's width (wide tables scroll in their box).
    await page.setViewportSize({ width: 390, height: 812 });
    const filled: Array<[string, string]> = [
      [`/orgs/${orgId}/api-keys`, 'read:projects, write:projects'],
      [`/orgs/${orgId}/webhooks`, w.receiver.url],
      [`/orgs/${orgId}/webhooks/${json(hooks).data[0].id as string}`, 'delivered'],
      [`/orgs/${orgId}/audit-log`, `/api/v1/organizations/${orgId}/webhooks`],
    ];
    for (const [path, content] of filled) {
      await page.goto(path);
      await shown(page.getByRole('main').getByText(content).first());
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth),
        path,
      ).toBe(false);
    }
  });

  it('upgrades through the built-in test checkout: the plan shows Pro, usage against its limits; the portal; cancel', async () => {
    const email = await verifiedAccount(w.t, 'billing');
    const { page } = await w.person();
    await signInWithPassword(page, email);
    const orgId = await createOrganization(page, 'Paying Customers', `paying-${Date.now().toString(36)}`);
    await page.getByRole('link', { name: 'Billing', exact: true }).click();
    await shown(page.getByTestId('plan-name').filter({ hasText: 'Free' }));
    // On Free there is nothing to manage yet: no portal button that would only reload the page.
    expect(await page.getByRole('button', { name: 'Manage billing', exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Upgrade', exact: true }).click();
    await page.waitForURL(/\/api\/v1\/billing\/test-checkout\//);
    await page.getByRole('button', { name: 'Pay and subscribe' }).click();
    await page.waitForURL(/\/billing\?checkout=done$/);
    await shown(page.getByTestId('plan-name').filter({ hasText: 'Pro' }));
    const billing = await w.t.request({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/billing`,
      headers: await apiLogin(w.t, email),
    });
    expect(json(billing).data.plan.name).toBe('Pro');
    // Usage against the new plan's limits.
    const usage = page.getByRole('region', { name: /^Usage in / });
    await shown(usage.getByText('0 of 100,000'));
    await shown(usage.getByText('1 of 25'));

    // The portal (the test provider's sends the browser straight back), then cancelling at period end.
    await page.getByRole('button', { name: 'Manage billing', exact: true }).click();
    await page.waitForURL(new RegExp(`/orgs/${orgId}/billing$`));
    await page.getByRole('button', { name: 'Cancel subscription', exact: true }).click();
    await shown(page.getByText(/^Ends /));
  });
});
