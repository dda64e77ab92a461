// Races settled by the database (ARCHITECTURE.md): real parallel requests. On PGlite requests are
// serialized, so these matter on PostgreSQL (TEST_DATABASE_URL); they must hold on both.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  createOrg,
  eventsOf,
  invite,
  rowsOf,
  setPlan,
  signedInUser,
  uniqueEmail,
  uniqueSlug,
  type SignedInUser,
} from '../../../test/factories.js';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';

let owner: SignedInUser;
let admin: SignedInUser;
let admin2: SignedInUser;
let target: SignedInUser;
let other: SignedInUser;

useApp();
beforeAll(async () => {
  [owner, admin, admin2, target, other] = [
    await signedInUser(t, 'owner'),
    await signedInUser(t, 'admin'),
    await signedInUser(t, 'admin2'),
    await signedInUser(t, 'target'),
    await signedInUser(t, 'other'),
  ];
});

const ROUNDS = 3;

function api(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  caller: { auth: Record<string, string> },
  payload?: unknown,
) {
  return t.request({
    method,
    url: `/api/v1${url}`,
    headers: caller.auth,
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
}

const statuses = (results: Array<{ statusCode: number }>) => results.map((r) => r.statusCode).sort((a, b) => a - b);

async function count(query: ReturnType<typeof sql>) {
  return Number(rowsOf(await t.deps.db.execute(query))[0]!.n);
}

const owners = (orgId: string) =>
  count(sql`select count(*) as n from memberships where organization_id = ${orgId} and role = 'owner'`);

describe('races', () => {
  it('parallel creation with one slug: one 201, the others 409', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const slug = uniqueSlug('race');
      const users = [owner, admin, admin2, target, other];
      const results = await Promise.all(users.map((u) => api('POST', '/organizations', u, { name: 'Racer', slug })));
      expect(statuses(results), results.map((r) => r.body).join('\n')).toEqual([201, 409, 409, 409, 409]);
      expect(await count(sql`select count(*) as n from organizations where slug = ${slug}`)).toBe(1);
    }
  });

  it('member limit under parallel invitations: owner alone on Free, 5 at once → two 201, three 402', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const org = await createOrg(t, owner);
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          api('POST', `/organizations/${org.id}/invitations`, owner, { email: uniqueEmail(`par${i}`), role: 'member' }),
        ),
      );
      expect(statuses(results), results.map((r) => r.body).join('\n')).toEqual([201, 201, 402, 402, 402]);
      for (const r of results.filter((x) => x.statusCode === 402))
        expect(json(r).error.code).toBe('PLAN_LIMIT_EXCEEDED');
      expect(
        await count(
          sql`select count(*) as n from invitations where organization_id = ${org.id} and status = 'pending'`,
        ),
      ).toBe(2);
    }
  });

  it('parallel invitations to one email: one 201, the others 409', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const org = await createOrg(t, owner);
      await setPlan(t, org.id, 'pro');
      const email = uniqueEmail('same');
      const results = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          api('POST', `/organizations/${org.id}/invitations`, owner, {
            email: i % 2 ? email.toUpperCase() : email,
            role: 'viewer',
          }),
        ),
      );
      expect(statuses(results), results.map((r) => r.body).join('\n')).toEqual([201, 409, 409, 409]);
      expect(await count(sql`select count(*) as n from invitations where organization_id = ${org.id}`)).toBe(1);
    }
  });

  it('two concurrent accepts of one token: one 200, one 4xx, exactly one membership and one member.added', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const org = await createOrg(t, owner);
      const { token } = await invite(t, org.id, owner, target.email, 'member');
      const results = await Promise.all([0, 1, 2].map(() => api('POST', '/invitations/accept', target, { token })));
      const codes = statuses(results);
      expect(codes[0], results.map((r) => r.body).join('\n')).toBe(200);
      for (const c of codes.slice(1)) expect(c).toBeGreaterThanOrEqual(400);
      for (const c of codes.slice(1)) expect(c).toBeLessThan(500);
      expect(
        await count(
          sql`select count(*) as n from memberships where organization_id = ${org.id} and user_id = ${target.userId}`,
        ),
      ).toBe(1);
      expect((await eventsOf(t, org.id)).filter((e) => e.type === 'member.added')).toHaveLength(1);
    }
  });

  it('accept racing revoke: either the member joined or the invitation is revoked, never both', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const org = await createOrg(t, owner);
      const { token, invitation } = await invite(t, org.id, owner, target.email, 'member');
      const [accepted, revoked] = await Promise.all([
        api('POST', '/invitations/accept', target, { token }),
        api('DELETE', `/organizations/${org.id}/invitations/${invitation.id}`, owner),
      ]);
      expect(
        [accepted.statusCode, revoked.statusCode].filter((s) => s === 200),
        `${accepted.body}\n${revoked.body}`,
      ).toHaveLength(1);
      const [row] = rowsOf(
        await t.deps.db.execute(
          sql`select status from invitations where organization_id = ${org.id} and id = ${invitation.id}`,
        ),
      );
      const joined = await count(
        sql`select count(*) as n from memberships where organization_id = ${org.id} and user_id = ${target.userId}`,
      );
      expect(row!.status).toBe(joined ? 'accepted' : 'revoked');
    }
  });

  it('parallel removals of one member: one 200, the others 404, one member.removed', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const org = await createOrg(t, owner);
      await setPlan(t, org.id, 'pro');
      await addMember(t, org.id, owner, admin, 'admin');
      await addMember(t, org.id, owner, admin2, 'admin');
      const m = await addMember(t, org.id, owner, target, 'member');
      const results = await Promise.all([
        api('DELETE', `/organizations/${org.id}/members/${m.id}`, admin),
        api('DELETE', `/organizations/${org.id}/members/${m.id}`, admin2),
        api('DELETE', `/organizations/${org.id}/members/${m.id}`, owner),
        api('POST', `/organizations/${org.id}/leave`, target),
      ]);
      const codes = statuses(results);
      expect(
        codes.filter((c) => c === 200),
        results.map((r) => r.body).join('\n'),
      ).toHaveLength(1);
      for (const c of codes.filter((x) => x !== 200)) expect([403, 404]).toContain(c);
      expect((await eventsOf(t, org.id)).filter((e) => e.type === 'member.removed')).toHaveLength(1);
    }
  });

  it('transfer racing a role change, a removal or another transfer: always exactly one owner', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const org = await createOrg(t, owner);
      await setPlan(t, org.id, 'pro');
      await addMember(t, org.id, owner, admin, 'admin');
      const m = await addMember(t, org.id, owner, target, 'member');
      const o = await addMember(t, org.id, owner, other, 'member');
      const results = await Promise.all([
        api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: m.id }),
        api('POST', `/organizations/${org.id}/transfer-ownership`, owner, { memberId: o.id }),
        api('PATCH', `/organizations/${org.id}/members/${m.id}`, admin, { role: 'viewer' }),
        api('DELETE', `/organizations/${org.id}/members/${o.id}`, admin),
        api('POST', `/organizations/${org.id}/leave`, target),
      ]);
      for (const r of results) expect(r.statusCode, r.body).toBeLessThan(500);
      // At most one transfer wins (both may lose when their targets left or were removed first).
      expect(
        statuses(results.slice(0, 2)).filter((s) => s === 200).length,
        results.map((r) => r.body).join('\n'),
      ).toBeLessThanOrEqual(1);
      expect(await owners(org.id)).toBe(1);
      // The owner is a member still holding the organization: someone can delete it.
      const [row] = rowsOf(
        await t.deps.db.execute(
          sql`select user_id from memberships where organization_id = ${org.id} and role = 'owner'`,
        ),
      );
      expect([owner.userId, target.userId, other.userId]).toContain(row!.user_id);
    }
  });

  it('parallel settings patches merge: none is lost', async () => {
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    await addMember(t, org.id, owner, admin, 'admin');
    const patches = [
      { branding: { primaryColor: '#111111' } },
      { branding: { accentColor: '#222222' } },
      { features: { webhooks: true } },
      { features: { apiAccess: true } },
      { billing: { email: 'billing@example.com' } },
      { billing: { taxId: 'DE123' } },
    ];
    const results = await Promise.all(
      patches.map((settings, i) => api('PATCH', `/organizations/${org.id}`, i % 2 ? admin : owner, { settings })),
    );
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    const final = json(await api('GET', `/organizations/${org.id}`, owner));
    expect(final.settings).toEqual({
      branding: { primaryColor: '#111111', accentColor: '#222222' },
      features: { webhooks: true, apiAccess: true },
      billing: { email: 'billing@example.com', taxId: 'DE123' },
    });
  });
});
