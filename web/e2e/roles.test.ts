// Custom roles and the active organization in Chromium against the real API: the owner makes a role
// on the Roles page, gives it to a member on the Members page, sees who holds it and changes its
// permissions; the member's session then acts with it. And the organization switcher makes the
// organization active for the browser's session (its next tokens carry org_id), which the database
// and GET /auth/session confirm.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from '../../test/harness.js';
import { waitUntil } from '../../test/expect.js';
import { useWebApp } from './app.js';
import { apiLogin, createOrganization, shown, signInWithPassword, verifiedAccount } from './flows.js';

const w = useWebApp({ APP_PERMISSIONS: 'invoices:approve' });

/** The organization the browser's newest session of `email` acts in, as stored. */
async function activeOrganizationOf(email: string): Promise<string | null> {
  const [row] = await queryRows<{ org: string | null }>(
    w.t,
    sql`select s.active_organization_id as org from sessions s join users u on u.id = s.user_id
        where u.email = ${email} and s.revoked_at is null order by s.created_at desc limit 1`,
  );
  return row?.org ?? null;
}

async function waitFor<T>(read: () => Promise<T>, want: T, what: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = await read();
    if (got === want) return;
    if (Date.now() > deadline) throw new Error(`${what}: ${String(got)}, expected ${String(want)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('roles in the console', () => {
  it('creates a role, gives it to a member, shows who holds it, changes its permissions', async () => {
    const ownerEmail = await verifiedAccount(w.t, 'roles-owner', 'Ada Owner');
    const memberEmail = await verifiedAccount(w.t, 'roles-member', 'Charles Member');
    const { page } = await w.person();
    await signInWithPassword(page, ownerEmail);
    const orgId = await createOrganization(page, 'Role Works', `role-works-${Date.now().toString(36)}`);

    // The member joins through the API (invited as a viewer, accepted), so the page is about roles.
    const ownerAuth = await apiLogin(w.t, ownerEmail);
    const invited = await w.t.request({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/invitations`,
      headers: ownerAuth,
      payload: { email: memberEmail, role: 'viewer' },
    });
    expect(invited.statusCode, invited.body).toBe(201);
    const token = new URL(json(invited).inviteUrl as string).searchParams.get('token')!;
    const memberAuth = await apiLogin(w.t, memberEmail);
    expect(
      (
        await w.t.request({
          method: 'POST',
          url: '/api/v1/invitations/accept',
          headers: memberAuth,
          payload: { token },
        })
      ).statusCode,
    ).toBe(200);

    // The Roles page: the built-ins, and a new role with three permissions (one of the product's).
    await page.getByRole('link', { name: 'Roles', exact: true }).click();
    const roles = page.getByRole('list', { name: 'Roles' });
    await shown(roles.getByRole('listitem', { name: 'Owner' }));
    const form = page.getByRole('form', { name: 'New role' });
    await form.getByLabel('Role name', { exact: true }).fill('Billing manager');
    await form.getByLabel('Key', { exact: true }).fill('billing-manager');
    for (const p of ['org:read', 'billing:manage', 'invoices:approve'])
      await form.getByRole('checkbox', { name: p, exact: true }).check();
    // The owner's own permissions are not offered to a role.
    expect(await form.getByRole('checkbox', { name: 'org:delete', exact: true }).count()).toBe(0);
    await form.getByRole('button', { name: 'Create role', exact: true }).click();
    await shown(form.getByText('Role Billing manager created'));
    const billing = roles.getByRole('listitem', { name: 'Billing manager' });
    await shown(billing.getByText('org:read, billing:manage, invoices:approve', { exact: true }));
    await shown(billing.getByText('0 members'));

    // A key that is taken: the form says so next to the key.
    await form.getByLabel('Role name', { exact: true }).fill('Again');
    await form.getByLabel('Key', { exact: true }).fill('billing-manager');
    await form.getByRole('button', { name: 'Create role', exact: true }).click();
    await shown(form.getByText(/taken in this organization/));

    // The Members page offers it; giving it to the member shows them as its holder.
    await page.getByRole('link', { name: 'Members', exact: true }).click();
    const select = page.getByLabel(`Role of ${memberEmail}`, { exact: true });
    await select.locator('option', { hasText: 'Billing manager' }).waitFor({ state: 'attached' });
    await select.selectOption('billing-manager');
    await page.getByRole('link', { name: 'Roles', exact: true }).click();
    await shown(
      roles.getByRole('list', { name: 'Holders of Billing manager' }).getByText(memberEmail, { exact: true }),
    );
    await shown(billing.getByText('1 member'));
    const memberRole = await w.t.request({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/permissions/check`,
      headers: ownerAuth,
      payload: {
        userId: json(await w.t.request({ method: 'GET', url: '/api/v1/users/me', headers: memberAuth })).id,
        permissions: ['billing:manage'],
      },
    });
    expect(json(memberRole)).toMatchObject({ role: 'billing-manager', allowed: { 'billing:manage': true } });

    // Its permissions changed: billing:manage out, billing:read in; the member's next request sees it.
    await billing.getByRole('button', { name: 'Edit Billing manager' }).click();
    const edit = page.getByRole('form', { name: 'Permissions of Billing manager' });
    await edit.getByRole('checkbox', { name: 'billing:manage', exact: true }).uncheck();
    await edit.getByRole('checkbox', { name: 'billing:read', exact: true }).check();
    await edit.getByRole('button', { name: 'Save permissions', exact: true }).click();
    await shown(billing.getByText('org:read, billing:read, invoices:approve', { exact: true }));
    expect(
      (await w.t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/billing`, headers: memberAuth }))
        .statusCode,
    ).toBe(200);

    // Held: it cannot be deleted (the page says why).
    await billing.getByRole('button', { name: 'Delete Billing manager' }).click();
    await shown(page.getByText(/is held by 1 member/));
  });

  it("a custom role's holder sees the member controls its permissions allow, and only those", async () => {
    const ownerEmail = await verifiedAccount(w.t, 'lead-owner', 'Ada Owner');
    const leadEmail = await verifiedAccount(w.t, 'lead', 'Grace Lead');
    const viewerEmail = await verifiedAccount(w.t, 'lead-viewer', 'Vera Viewer');
    const ownerAuth = await apiLogin(w.t, ownerEmail);
    const call = async (method: 'POST' | 'PATCH', url: string, headers: { authorization: string }, payload: object) => {
      const res = await w.t.request({ method, url: `/api/v1${url}`, headers, payload });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return json(res);
    };
    const org = await call('POST', '/organizations', ownerAuth, {
      name: 'Lead Works',
      slug: `lead-works-${Date.now().toString(36)}`,
    });
    await call('POST', `/organizations/${org.id}/roles`, ownerAuth, {
      key: 'people-lead',
      name: 'People lead',
      // What a member holds, and what lets it change roles and invite: not what an admin holds.
      permissions: [
        'org:read',
        'members:read',
        'projects:read',
        'projects:write',
        'billing:read',
        'webhooks:read',
        'members:update',
        'invitations:create',
      ],
    });
    for (const [email, role] of [
      [leadEmail, 'people-lead'],
      [viewerEmail, 'viewer'],
    ] as const) {
      const sent = await call('POST', `/organizations/${org.id}/invitations`, ownerAuth, { email, role });
      const token = new URL(sent.inviteUrl as string).searchParams.get('token')!;
      await call('POST', '/invitations/accept', await apiLogin(w.t, email), { token });
    }

    const { page } = await w.person();
    await signInWithPassword(page, leadEmail);
    await page.goto(`/orgs/${org.id as string}/members`);
    // members:update: the viewer's role can be changed; invitations:create: the invite form.
    const select = page.getByLabel(`Role of ${viewerEmail}`, { exact: true });
    await select.locator('option', { hasText: 'Member' }).waitFor({ state: 'attached' });
    await shown(page.getByRole('form', { name: 'Invite a member' }));
    // Only the roles within its own permissions are offered (the API refuses the others).
    expect(await select.locator('option').allTextContents()).toEqual(['Member', 'Viewer', 'People lead']);
    // No members:remove: no Remove button.
    expect(await page.getByRole('button', { name: `Remove ${viewerEmail}`, exact: true }).count()).toBe(0);
    await select.selectOption('member');
    const roleOfViewer = async () => {
      const res = await w.t.request({
        method: 'GET',
        url: `/api/v1/organizations/${org.id as string}/members`,
        headers: ownerAuth,
      });
      return (json(res).members as Array<{ user: { email: string }; role: string }>).find(
        (m) => m.user.email === viewerEmail,
      )?.role;
    };
    await waitUntil('the viewer is a member', async () => (await roleOfViewer()) === 'member', 10_000);

    // The viewer's own page offers none of it.
    const viewer = await w.person();
    await signInWithPassword(viewer.page, viewerEmail);
    await viewer.page.goto(`/orgs/${org.id as string}/members`);
    await shown(viewer.page.getByRole('list', { name: 'Members' }).getByText(leadEmail));
    // Once the roles are read (what the controls depend on), nothing to manage is shown.
    await viewer.page.waitForLoadState('networkidle');
    expect(await viewer.page.getByRole('form', { name: 'Invite a member' }).count()).toBe(0);
    expect(await viewer.page.getByLabel(`Role of ${leadEmail}`, { exact: true }).count()).toBe(0);
  });

  it('the organization switcher makes the organization active for the session', async () => {
    const email = await verifiedAccount(w.t, 'switcher', 'Switching Person');
    const { page } = await w.person();
    await signInWithPassword(page, email);
    const first = await createOrganization(page, 'First Works', `first-works-${Date.now().toString(36)}`);
    // Opening an organization's console makes it active.
    await shown(page.getByTestId('active-organization'));
    await waitFor(() => activeOrganizationOf(email), first, 'active after opening the first');
    const second = await createOrganization(page, 'Second Works', `second-works-${Date.now().toString(36)}`);
    await waitFor(() => activeOrganizationOf(email), second, 'active after opening the second');

    await page.getByLabel('Switch organization', { exact: true }).selectOption(first);
    await page.waitForURL(new RegExp(`/orgs/${first}/projects$`));
    await shown(page.getByRole('heading', { name: 'First Works', exact: true }));
    await shown(page.getByTestId('active-organization'));
    await waitFor(() => activeOrganizationOf(email), first, 'active after switching back');

    // The browser's own token says so too: its session's live view, asked with the page's session.
    const view = await page.evaluate(async () => {
      const refreshed = await fetch('/api/v1/auth/refresh', {
        method: 'POST',
        headers: { 'x-session-mode': 'cookie' },
      });
      const { accessToken, organizationId } = (await refreshed.json()) as {
        accessToken: string;
        organizationId: string;
      };
      const claims = JSON.parse(atob(accessToken.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as {
        org_id?: string;
        org_role?: string;
      };
      const session = (await (
        await fetch('/api/v1/auth/session', { headers: { authorization: `Bearer ${accessToken}` } })
      ).json()) as { organizationId: string; role: string };
      return { organizationId, claims, session };
    });
    expect(view).toEqual({
      organizationId: first,
      claims: expect.objectContaining({ org_id: first, org_role: 'owner' }),
      session: expect.objectContaining({ organizationId: first, role: 'owner' }),
    });
  });
});
