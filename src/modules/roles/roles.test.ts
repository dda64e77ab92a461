// The permission catalogue and custom roles (docs/api.md#custom-roles), through HTTP: GET /permissions,
// an organization's roles (built-ins first, unchangeable), making, changing and deleting a custom role
// with every rule, each refusal leaving everything as it was: org:delete and org:transfer (400), a
// permission outside the catalogue (400), one the caller lacks (403), a 41-character or malformed key
// (400), a built-in or taken key (409), a role held by a member or a pending invitation (409).
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditOf, createApiKey, eventsOf, invite, signedInUser, uniqueEmail } from '../../../test/factories.js';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { loadConfig } from '../../config.js';
import { ConfigError } from '../../config/types.js';
import { createCatalogue, PERMISSIONS, ROLE_PERMISSIONS } from '../../platform/permissions.js';
import {
  api,
  APP_PERMISSIONS,
  makeRole,
  memberWith,
  roleState,
  team,
  type Team,
} from '../../../test/fixtures/roles.js';
import type { ErrorCode } from '../../lib/errors.js';
import { expectError } from '../../../test/expect.js';

let x: Team;

useApp({ env: { APP_PERMISSIONS } });
beforeAll(async () => {
  x = await team(t);
});

const rolesUrl = () => `/organizations/${x.org.id}/roles`;
const catalogueOrder = () => [...PERMISSIONS, 'invoices:approve', 'reports:read'];

describe('the permission catalogue', () => {
  it('GET /permissions: the built-in permissions (roles:manage and sso:manage among them), then the product’s own', async () => {
    const res = await api(t, 'GET', '/permissions', x.viewer);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({
      permissions: [
        ...PERMISSIONS.map((key) => ({ key, builtIn: true })),
        { key: 'invoices:approve', builtIn: false },
        { key: 'reports:read', builtIn: false },
      ],
    });
    expect(PERMISSIONS).toEqual(expect.arrayContaining(['roles:manage', 'sso:manage']));
    expectError(await t.request({ method: 'GET', url: '/api/v1/permissions' }), 401, 'AUTHENTICATION_ERROR');
    const key = await createApiKey(t, x.org.id, x.owner, ['read:members']);
    expectError(await api(t, 'GET', '/permissions', key), 403, 'AUTHORIZATION_ERROR');
  });

  it('APP_PERMISSIONS: a malformed entry, a duplicate, more than 100, or a built-in name stops the start, naming it', () => {
    const env = (value: string) => ({
      NODE_ENV: 'test',
      DATA_DIR: '/tmp/tenantry-roles-config',
      JWT_SECRET: 'a'.repeat(16) + 'bcdefghijklmnopqrstuvwxyz',
      JWT_REFRESH_SECRET: 'z'.repeat(16) + 'yxwvutsrqponmlkjihgfedcba',
      ENCRYPTION_KEY: '00'.repeat(32),
      APP_PERMISSIONS: value,
    });
    for (const [value, named] of [
      ['invoices:approve,Invoices:Read', 'Invoices:Read'],
      ['invoices', 'invoices'],
      ['invoices:approve,,reports:read', 'empty'],
      ['a:b,a:b', 'a:b'],
      ['invoices:approve:twice', 'invoices:approve:twice'],
    ]) {
      expect(() => loadConfig(env(value!)), value).toThrow(ConfigError);
      expect(() => loadConfig(env(value!))).toThrow(new RegExp(`APP_PERMISSIONS.*${named}`));
    }
    const many = Array.from({ length: 101 }, (_, i) => `r${i}:read`).join(',');
    expect(() => loadConfig(env(many))).toThrow(/APP_PERMISSIONS lists 101 permissions; at most 100/);
    expect(loadConfig(env(Array.from({ length: 100 }, (_, i) => `r${i}:read`).join(','))).appPermissions).toHaveLength(
      100,
    );
    expect(() => createCatalogue(['invoices:approve', 'billing:manage'])).toThrow(
      /APP_PERMISSIONS lists "billing:manage", which is a built-in permission/,
    );
  });
});

describe("an organization's roles", () => {
  it('lists the four built-ins first with their permissions (owners and admins hold the product’s), then custom roles, each with its holders', async () => {
    await makeRole(t, x.org.id, x.owner, 'support', ['org:read', 'members:read', 'reports:read'], 'Support agent');
    await memberWith(t, x, 'support', 'support-holder');
    const res = await api(t, 'GET', rolesUrl(), x.viewer);
    expect(res.statusCode, res.body).toBe(200);
    const roles = json(res).roles as Array<Record<string, unknown>>;
    expect(roles.map((r) => [r.key, r.builtIn, r.memberCount])).toEqual([
      ['owner', true, 1],
      ['admin', true, 1],
      ['member', true, 1],
      ['viewer', true, 1],
      ['support', false, 1],
    ]);
    const order = catalogueOrder();
    const inOrder = (set: Iterable<string>) => order.filter((p) => new Set(set).has(p));
    expect(roles[0]!.permissions).toEqual(inOrder([...ROLE_PERMISSIONS.owner, 'invoices:approve', 'reports:read']));
    expect(roles[1]!.permissions).toEqual(inOrder([...ROLE_PERMISSIONS.admin, 'invoices:approve', 'reports:read']));
    expect(roles[2]!.permissions).toEqual(inOrder(ROLE_PERMISSIONS.member));
    expect(roles[3]!.permissions).toEqual(inOrder(ROLE_PERMISSIONS.viewer));
    expect(roles[4]).toEqual({
      key: 'support',
      name: 'Support agent',
      description: null,
      permissions: ['org:read', 'members:read', 'reports:read'],
      builtIn: false,
      memberCount: 1,
    });
    // A key with read:members reads them; a stranger does not.
    const key = await createApiKey(t, x.org.id, x.owner, ['read:members']);
    expect((await api(t, 'GET', rolesUrl(), key)).statusCode).toBe(200);
    expectError(await api(t, 'GET', rolesUrl(), await signedInUser(t, 'stranger')), 403, 'AUTHORIZATION_ERROR');
    expectError(await api(t, 'GET', '/organizations/org_00000000000000000000000000/roles', x.owner), 404, 'NOT_FOUND');
  });

  it('makes a custom role: 201, stored, role.created sent, audited; admins may too', async () => {
    const before = { events: (await eventsOf(t, x.org.id)).length, audit: (await auditOf(t, x.org.id)).length };
    const res = await api(t, 'POST', rolesUrl(), x.admin, {
      key: 'billing-manager',
      name: ' Billing manager ',
      description: 'Pays the bills',
      permissions: ['billing:manage', 'org:read', 'billing:read', 'invoices:approve'],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(json(res)).toEqual({
      key: 'billing-manager',
      name: 'Billing manager',
      description: 'Pays the bills',
      permissions: ['org:read', 'billing:read', 'billing:manage', 'invoices:approve'],
      builtIn: false,
      memberCount: 0,
    });
    const events = await eventsOf(t, x.org.id);
    expect(events).toHaveLength(before.events + 1);
    expect(events.at(-1)).toMatchObject({
      type: 'role.created',
      data: {
        organizationId: x.org.id,
        key: 'billing-manager',
        name: 'Billing manager',
        permissions: ['org:read', 'billing:read', 'billing:manage', 'invoices:approve'],
      },
    });
    const audit = await auditOf(t, x.org.id);
    expect(audit).toHaveLength(before.audit + 1);
    expect(audit.at(-1)).toMatchObject({
      actorType: 'user',
      actorId: x.admin.userId,
      action: 'POST /api/v1/organizations/:orgId/roles',
      statusCode: 201,
    });
  });

  it('refuses every bad role and stores nothing: 400 for the owner’s permissions, unknown ones and bad keys, 403 beyond the caller, 409 for built-in or taken keys', async () => {
    await makeRole(t, x.org.id, x.owner, 'taken', ['org:read']);
    const limited = await makeRole(t, x.org.id, x.owner, 'role-admin', ['roles:manage', 'org:read', 'members:read']);
    const manager = await memberWith(t, x, limited.key as string, 'role-admin');
    const key = await createApiKey(t, x.org.id, x.owner, ['write:members']);
    const before = await roleState(t, x.org.id);
    const body = (over: Record<string, unknown>) => ({
      key: 'fresh',
      name: 'Fresh',
      permissions: ['org:read'],
      ...over,
    });
    const cases: Array<
      [by: Parameters<typeof api>[3], payload: unknown, status: number, code: ErrorCode, details?: RegExp]
    > = [
      [
        x.owner,
        body({ permissions: ['org:read', 'org:delete'] }),
        400,
        'VALIDATION_ERROR',
        /org:delete belongs to the owner alone/,
      ],
      [
        x.owner,
        body({ permissions: ['org:transfer'] }),
        400,
        'VALIDATION_ERROR',
        /org:transfer belongs to the owner alone/,
      ],
      [
        x.owner,
        body({ permissions: ['org:read', 'invoices:aprove'] }),
        400,
        'VALIDATION_ERROR',
        /"invoices:aprove" is not in the permission catalogue/,
      ],
      [x.owner, body({ permissions: ['org:read', 'org:read'] }), 400, 'VALIDATION_ERROR'],
      [x.owner, body({ key: 'a'.repeat(41) }), 400, 'VALIDATION_ERROR', /key/],
      [x.owner, body({ key: 'a' }), 400, 'VALIDATION_ERROR', /key/],
      [x.owner, body({ key: 'Billing' }), 400, 'VALIDATION_ERROR', /key/],
      [x.owner, body({ key: '1billing' }), 400, 'VALIDATION_ERROR', /key/],
      [x.owner, body({ key: 'billing_manager' }), 400, 'VALIDATION_ERROR', /key/],
      [x.owner, body({ name: '   ' }), 400, 'VALIDATION_ERROR', /name/],
      [x.owner, body({ extra: true }), 400, 'VALIDATION_ERROR', /extra/],
      [x.owner, body({ key: 'admin' }), 409, 'CONFLICT', /admin is a built-in role/],
      [x.owner, body({ key: 'owner' }), 409, 'CONFLICT', /built-in/],
      [x.owner, body({ key: 'taken' }), 409, 'CONFLICT', /taken/],
      // A role-maker cannot grant what its own role lacks.
      [
        manager,
        body({ permissions: ['org:read', 'billing:manage'] }),
        403,
        'AUTHORIZATION_ERROR',
        /You cannot grant billing:manage/,
      ],
      [manager, body({ permissions: ['invoices:approve'] }), 403, 'AUTHORIZATION_ERROR', /invoices:approve/],
      // Without roles:manage: members, viewers, keys.
      [x.member, body({}), 403, 'AUTHORIZATION_ERROR', /roles:manage/],
      [x.viewer, body({}), 403, 'AUTHORIZATION_ERROR'],
      [key, body({}), 403, 'AUTHORIZATION_ERROR'],
    ];
    for (const [by, payload, status, code, details] of cases)
      expectError(await api(t, 'POST', rolesUrl(), by, payload), status, code, details);
    // The key's refused request is audited, as every request of a key is; nothing else moved.
    const after = await roleState(t, x.org.id);
    expect({ ...after, audit: after.audit.filter((a) => a.actorType !== 'api_key') }).toEqual({
      ...before,
      audit: before.audit.filter((a) => a.actorType !== 'api_key'),
    });
    // Within its own permissions the role-maker succeeds (the control).
    expect(
      (await api(t, 'POST', rolesUrl(), manager, body({ key: 'reader', permissions: ['org:read', 'members:read'] })))
        .statusCode,
    ).toBe(201);
  });

  it('changes a custom role: name, description, permissions; role.updated with the previous permissions; built-ins and unknown keys refused', async () => {
    await makeRole(t, x.org.id, x.owner, 'auditor', ['org:read', 'audit-logs:read']);
    const res = await api(t, 'PATCH', `${rolesUrl()}/auditor`, x.owner, {
      name: 'Auditor',
      description: 'Reads the log',
      permissions: ['org:read', 'audit-logs:read', 'billing:read'],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toMatchObject({
      key: 'auditor',
      name: 'Auditor',
      description: 'Reads the log',
      permissions: ['org:read', 'billing:read', 'audit-logs:read'],
    });
    expect((await eventsOf(t, x.org.id)).at(-1)).toMatchObject({
      type: 'role.updated',
      data: {
        key: 'auditor',
        permissions: ['org:read', 'billing:read', 'audit-logs:read'],
        previousPermissions: ['org:read', 'audit-logs:read'],
      },
    });
    const cleared = await api(t, 'PATCH', `${rolesUrl()}/auditor`, x.owner, { description: null });
    expect(json(cleared).description).toBeNull();

    const before = await roleState(t, x.org.id);
    for (const key of ['owner', 'admin', 'member', 'viewer']) {
      expectError(
        await api(t, 'PATCH', `${rolesUrl()}/${key}`, x.owner, { name: 'Boss' }),
        400,
        'VALIDATION_ERROR',
        /built-in/,
      );
      expectError(await api(t, 'DELETE', `${rolesUrl()}/${key}`, x.owner), 400, 'VALIDATION_ERROR', /built-in/);
    }
    expectError(await api(t, 'PATCH', `${rolesUrl()}/nobody`, x.owner, { name: 'x' }), 404, 'NOT_FOUND');
    expectError(await api(t, 'DELETE', `${rolesUrl()}/nobody`, x.owner), 404, 'NOT_FOUND');
    expectError(await api(t, 'PATCH', `${rolesUrl()}/auditor`, x.owner, {}), 400, 'VALIDATION_ERROR');
    expectError(
      await api(t, 'PATCH', `${rolesUrl()}/auditor`, x.owner, { permissions: ['org:delete'] }),
      400,
      'VALIDATION_ERROR',
      /owner alone/,
    );
    expectError(
      await api(t, 'PATCH', `${rolesUrl()}/auditor`, x.owner, { permissions: ['nope:nope'] }),
      400,
      'VALIDATION_ERROR',
      /nope:nope/,
    );
    expectError(await api(t, 'PATCH', `${rolesUrl()}/auditor`, x.member, { name: 'x' }), 403, 'AUTHORIZATION_ERROR');
    expect(await roleState(t, x.org.id)).toEqual(before);
  });

  it('a role-maker cannot change or delete a role that grants more than its own role', async () => {
    await makeRole(t, x.org.id, x.owner, 'treasurer', ['org:read', 'billing:manage']);
    const maker = await memberWith(
      t,
      x,
      (await makeRole(t, x.org.id, x.owner, 'role-maker', ['roles:manage', 'org:read'])).key as string,
      'role-maker',
    );
    const before = await roleState(t, x.org.id);
    expectError(
      await api(t, 'PATCH', `${rolesUrl()}/treasurer`, maker, { name: 'Renamed' }),
      403,
      'AUTHORIZATION_ERROR',
      /billing:manage/,
    );
    expectError(
      await api(t, 'PATCH', `${rolesUrl()}/treasurer`, maker, { permissions: ['org:read'] }),
      403,
      'AUTHORIZATION_ERROR',
      /billing:manage/,
    );
    expectError(await api(t, 'DELETE', `${rolesUrl()}/treasurer`, maker), 403, 'AUTHORIZATION_ERROR', /billing:manage/);
    expect(await roleState(t, x.org.id)).toEqual(before);
  });

  it('deletes a custom role only once no member nor pending invitation holds it: 409 before, role.deleted after', async () => {
    await makeRole(t, x.org.id, x.owner, 'temp', ['org:read']);
    const holder = await memberWith(t, x, 'temp', 'temp-holder');
    const { invitation } = await invite(t, x.org.id, x.owner, uniqueEmail('temp-invitee'), 'temp' as never);
    expect(invitation.role).toBe('temp');
    const before = await roleState(t, x.org.id);
    expectError(
      await api(t, 'DELETE', `${rolesUrl()}/temp`, x.owner),
      409,
      'CONFLICT',
      /held by 1 member\(s\) and 1 pending invitation\(s\)/,
    );
    expect(await roleState(t, x.org.id)).toEqual(before);
    expect(
      (await api(t, 'PATCH', `/organizations/${x.org.id}/members/${holder.membershipId}`, x.owner, { role: 'viewer' }))
        .statusCode,
    ).toBe(200);
    expectError(
      await api(t, 'DELETE', `${rolesUrl()}/temp`, x.owner),
      409,
      'CONFLICT',
      /held by 0 member\(s\) and 1 pending invitation\(s\)/,
    );
    expect(
      (await api(t, 'DELETE', `/organizations/${x.org.id}/invitations/${invitation.id}`, x.owner)).statusCode,
    ).toBe(200);
    const res = await api(t, 'DELETE', `${rolesUrl()}/temp`, x.owner);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ message: 'Role deleted' });
    expect((await eventsOf(t, x.org.id)).at(-1)).toMatchObject({
      type: 'role.deleted',
      data: { key: 'temp', permissions: ['org:read'] },
    });
    expect(
      await queryRows(t, sql`select key from organization_roles where organization_id = ${x.org.id} and key = 'temp'`),
    ).toEqual([]);
    // Gone: it cannot be given any more.
    expectError(
      await api(t, 'PATCH', `/organizations/${x.org.id}/members/${holder.membershipId}`, x.owner, { role: 'temp' }),
      400,
      'VALIDATION_ERROR',
      /"temp" is not a role of this organization/,
    );
  });

  it('an organization holds at most 50 custom roles', async () => {
    const y = await team(t, 'many');
    for (let i = 0; i < 50; i++) await makeRole(t, y.org.id, y.owner, `role-${i}`, ['org:read']);
    expectError(
      await api(t, 'POST', `/organizations/${y.org.id}/roles`, y.owner, {
        key: 'one-more',
        name: 'x',
        permissions: [],
      }),
      409,
      'CONFLICT',
      /at most 50/,
    );
  });
});
