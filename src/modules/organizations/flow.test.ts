import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';

useApp();

describe('organization happy path', () => {
  it('creates an organization, invites a member who accepts, and records events and audit entries', async () => {
    const owner = await signedInUser(t, 'owner');
    const invitee = await signedInUser(t, 'invitee');
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/organizations',
      headers: owner.auth,
      payload: { name: 'Acme', slug: `acme-${Date.now()}` },
    });
    expect(created.statusCode, created.body).toBe(201);
    const org = json(created);
    expect(org).toMatchObject({
      name: 'Acme',
      settings: {},
      createdBy: owner.userId,
      description: null,
      logoUrl: null,
    });

    const invite = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/invitations`,
      headers: owner.auth,
      payload: { email: invitee.email, role: 'member' },
    });
    expect(invite.statusCode, invite.body).toBe(201);
    const { invitation, inviteUrl } = json(invite);
    expect(invitation).toMatchObject({
      email: invitee.email,
      role: 'member',
      status: 'pending',
      invitedBy: { id: owner.userId },
    });
    const token = await t.mail.tokenFrom(invitee.email, /invited/i, '/invitations/accept');
    expect(inviteUrl).toBe(`http://app.test/invitations/accept?token=${token}`);

    const accepted = await t.request({
      method: 'POST',
      url: '/api/v1/invitations/accept',
      headers: invitee.auth,
      payload: { token },
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(json(accepted)).toMatchObject({
      userId: invitee.userId,
      organizationId: org.id,
      role: 'member',
      user: { email: invitee.email },
    });

    const members = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${org.id}/members`,
      headers: invitee.auth,
    });
    expect(json(members).total).toBe(2);

    const project = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/projects`,
      headers: invitee.auth,
      payload: { name: 'Site' },
    });
    expect(project.statusCode, project.body).toBe(201);

    const events = await queryRows<{ type: string }>(
      t,
      sql`select type from events where organization_id = ${org.id} order by created_at, id`,
    );
    expect(events.map((e) => e.type)).toEqual(['member.added', 'project.created']);
    const audit = await queryRows<{ action: string }>(
      t,
      sql`select action from audit_logs where organization_id = ${org.id} order by created_at, id`,
    );
    expect(audit.map((a) => a.action)).toEqual([
      'POST /api/v1/organizations',
      'POST /api/v1/organizations/:orgId/invitations',
      'POST /api/v1/invitations/accept',
      'POST /api/v1/organizations/:orgId/projects',
    ]);
  });
});
