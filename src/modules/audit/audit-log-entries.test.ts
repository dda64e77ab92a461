// The audit log (docs/decisions.md, API keys and audit): one entry per API-key request, failures
// included, committed before the response; group commit that loses nothing under parallel requests;
// and GET …/audit-logs with its permission, scope, envelope, order and filters.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from '../../../test/harness.js';
import {
  counterDrift,
  createKey,
  createOrg,
  entriesOf,
  type Entry,
  listLogs,
  member,
  orgId,
  otherOrgId,
  owner,
  t,
  usageOf,
  useAuditApp,
} from '../../../test/fixtures/audit.js';

useAuditApp();

describe('an entry per API-key request', () => {
  it('successes and failures alike, with actor, action, path, status, IP, user agent and time, committed before the response', async () => {
    const key = await createKey(['read:projects']);
    const headers = { 'x-api-key': key.plain, 'user-agent': 'audit-agent/1.0' };
    const projects = `/api/v1/organizations/${orgId}/projects`;
    const calls = [
      {
        req: { method: 'GET' as const, url: `${projects}?page=1&pageSize=5`, headers, remoteAddress: '203.0.113.7' },
        status: 200,
        action: 'GET /api/v1/organizations/:orgId/projects',
        path: projects,
      },
      {
        req: { method: 'POST' as const, url: projects, headers, payload: { name: 'nope' } },
        status: 403,
        action: 'POST /api/v1/organizations/:orgId/projects',
        path: projects,
      },
      {
        req: { method: 'GET' as const, url: `/api/v1/organizations/${otherOrgId}/projects`, headers },
        status: 403,
        action: 'GET /api/v1/organizations/:orgId/projects',
        path: `/api/v1/organizations/${otherOrgId}/projects`,
      },
      {
        req: { method: 'GET' as const, url: `${projects}/prj_00000000000000000000000000`, headers },
        status: 404,
        action: 'GET /api/v1/organizations/:orgId/projects/:projectId',
        path: `${projects}/prj_00000000000000000000000000`,
      },
      {
        req: { method: 'GET' as const, url: `${projects}?pageSize=0`, headers },
        status: 400,
        action: 'GET /api/v1/organizations/:orgId/projects',
        path: projects,
      },
      {
        req: { method: 'GET' as const, url: '/api/v1/users/me', headers },
        status: 403,
        action: 'GET /api/v1/users/me',
        path: '/api/v1/users/me',
      },
    ];
    for (const [i, c] of calls.entries()) {
      t.clock.advance(1000);
      const res = await t.request(c.req);
      expect(res.statusCode, res.body).toBe(c.status);
      // Read at once: the entry is there when the response is.
      const entries = await entriesOf(key.id);
      expect(entries).toHaveLength(i + 1);
      expect(entries[i]).toEqual({
        id: expect.stringMatching(/^aud_[0-9a-z]{26}$/),
        organizationId: orgId,
        actorType: 'api_key',
        actorId: key.id,
        action: c.action,
        method: c.req.method,
        path: c.path,
        statusCode: c.status,
        ipAddress: c.req.remoteAddress ?? '127.0.0.1',
        userAgent: 'audit-agent/1.0',
        createdAt: t.clock.now().toISOString(),
      });
    }

    // Revoked: still known, still audited.
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${key.id}`, headers: owner.auth })).statusCode,
    ).toBe(200);
    const refused = await t.request({ method: 'GET', url: projects, headers });
    expect(refused.statusCode).toBe(401);
    const entries = await entriesOf(key.id);
    expect(entries.map((e) => e.statusCode)).toEqual([200, 403, 403, 404, 400, 403, 401]);
    expect(await usageOf(key.id)).toBe(7);

    // An unknown key belongs to no organization: nothing to audit, and no error.
    const unknown = await t.request({
      method: 'GET',
      url: projects,
      headers: { 'x-api-key': `svc_live_${'f'.repeat(32)}` },
    });
    expect(unknown.statusCode).toBe(401);
  });

  it('20 parallel requests: exactly 20 entries and usage.requests 20 (group commit loses nothing)', async () => {
    const key = await createKey(['read:projects']);
    const url = `/api/v1/organizations/${orgId}/projects`;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request(
          i % 4 === 3
            ? { method: 'POST', url, headers: { 'x-api-key': key.plain }, payload: { name: `p${i}` } }
            : { method: 'GET', url, headers: { 'x-api-key': key.plain } },
        ),
      ),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([...Array(15).fill(200), ...Array(5).fill(403)]);
    const entries = await entriesOf(key.id);
    expect(entries).toHaveLength(20);
    expect(new Set(entries.map((e) => e.id)).size).toBe(20);
    expect(entries.filter((e) => e.statusCode === 403)).toHaveLength(5);
    expect(await usageOf(key.id)).toBe(20);
  });

  it('parallel requests of several keys and organizations: every one counted against its own key and organization', async () => {
    const a = await createKey(['read:projects']);
    const b = await createKey(['read:members']);
    const c = await createKey(['read:projects'], otherOrgId);
    const [before] = await queryRows<{ n: number }>(
      t,
      sql`select count(*)::int as n from audit_logs where organization_id in (${orgId}, ${otherOrgId})`,
    );
    const plan = [...Array(12).fill(a), ...Array(9).fill(b), ...Array(7).fill(c)] as (typeof a)[];
    const results = await Promise.all(
      plan.map((k, i) =>
        t.request({
          method: 'GET',
          url: `/api/v1/organizations/${k === c ? otherOrgId : orgId}/${i % 2 ? 'projects' : 'members'}`,
          headers: { 'x-api-key': k.plain },
        }),
      ),
    );
    expect(results.every((r) => r.statusCode === 200 || r.statusCode === 403)).toBe(true);
    expect((await entriesOf(a.id)).length).toBe(12);
    expect((await entriesOf(b.id)).length).toBe(9);
    expect((await entriesOf(c.id)).length).toBe(7);
    expect([await usageOf(a.id), await usageOf(b.id), await usageOf(c.id)]).toEqual([12, 9, 7]);
    const [after] = await queryRows<{ n: number }>(
      t,
      sql`select count(*)::int as n from audit_logs where organization_id in (${orgId}, ${otherOrgId})`,
    );
    expect(after!.n - before!.n).toBe(28);
    // The unfiltered totals follow, and so do the filtered ones (audit_log_counters).
    for (const org of [orgId, otherOrgId]) {
      const [{ n }] = (await queryRows<{ n: number }>(
        t,
        sql`select count(*)::int as n from audit_logs where organization_id = ${org}`,
      )) as [{ n: number }];
      expect(json(await listLogs('', owner.auth, org)).total).toBe(n);
      expect(await counterDrift(org)).toEqual([]);
    }
    expect(json(await listLogs(`actorId=${a.id}`)).total).toBe(12);
    expect(json(await listLogs(`actorId=${b.id}&actorType=api_key`)).total).toBe(9);
    expect(json(await listLogs(`actorId=${c.id}`, owner.auth, otherOrgId)).total).toBe(7);
    expect(json(await listLogs(`actorId=${c.id}`)).total).toBe(0);
  });
});

describe('GET /organizations/{orgId}/audit-logs', () => {
  it('needs audit-logs:read (owner yes, member no, non-member no) or the scope read:audit-logs', async () => {
    expect((await listLogs('')).statusCode).toBe(200);
    const asMember = await listLogs('', member.auth);
    expect(asMember.statusCode, asMember.body).toBe(403);
    expect(json(asMember).error.code).toBe('AUTHORIZATION_ERROR');
    // member is not a member of the other organization.
    expect((await listLogs('', member.auth, otherOrgId)).statusCode).toBe(403);
    expect((await listLogs('', owner.auth, 'org_00000000000000000000000000')).statusCode).toBe(404);
    expect((await listLogs('', {})).statusCode).toBe(401);

    const reader = await createKey(['read:audit-logs']);
    const other = await createKey(['read:projects', 'read:members', 'write:members']);
    const ok = await listLogs('', { 'x-api-key': reader.plain });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(json(ok).total).toBeGreaterThan(0);
    expect((await listLogs('', { 'x-api-key': other.plain })).statusCode).toBe(403);
    expect((await listLogs('', { 'x-api-key': reader.plain }, otherOrgId)).statusCode).toBe(403);
  });

  it('pagination envelope, newest first, and the filters actorType, actorId, action, from, to (each narrows; total is the filtered count)', async () => {
    const org = await createOrg('audit-list');
    const key = await createKey(['read:projects', 'write:projects'], org);
    const t0 = t.clock.now().getTime();
    const step = (n: number) => new Date(t0 + n * 60_000).toISOString();
    // t0+1m: user creates a project; t0+2m: key lists; t0+3m: key creates; t0+4m: key refused; t0+5m: user renames.
    t.clock.set(t0 + 60_000);
    const made = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org}/projects`,
      headers: owner.auth,
      payload: { name: 'by user' },
    });
    expect(made.statusCode).toBe(201);
    t.clock.set(t0 + 2 * 60_000);
    expect(
      (
        await t.request({
          method: 'GET',
          url: `/api/v1/organizations/${org}/projects`,
          headers: { 'x-api-key': key.plain },
        })
      ).statusCode,
    ).toBe(200);
    t.clock.set(t0 + 3 * 60_000);
    expect(
      (
        await t.request({
          method: 'POST',
          url: `/api/v1/organizations/${org}/projects`,
          headers: { 'x-api-key': key.plain },
          payload: { name: 'by key' },
        })
      ).statusCode,
    ).toBe(201);
    t.clock.set(t0 + 4 * 60_000);
    expect(
      (
        await t.request({
          method: 'GET',
          url: `/api/v1/organizations/${org}/members`,
          headers: { 'x-api-key': key.plain },
        })
      ).statusCode,
    ).toBe(403);
    t.clock.set(t0 + 5 * 60_000);
    expect(
      (
        await t.request({
          method: 'PATCH',
          url: `/api/v1/organizations/${org}/projects/${json(made).id}`,
          headers: owner.auth,
          payload: { name: 'renamed' },
        })
      ).statusCode,
    ).toBe(200);

    const all = await listLogs('', owner.auth, org);
    expect(all.statusCode, all.body).toBe(200);
    const body = json(all);
    expect(Object.keys(body).sort()).toEqual(['data', 'hasMore', 'page', 'pageSize', 'total']);
    // Also the creation of the organization and of the key, by the owner.
    const summary = body.data.map((e: Entry) => `${e.actorType} ${e.action} ${e.statusCode}`);
    expect(summary).toEqual([
      'user PATCH /api/v1/organizations/:orgId/projects/:projectId 200',
      'api_key GET /api/v1/organizations/:orgId/members 403',
      'api_key POST /api/v1/organizations/:orgId/projects 201',
      'api_key GET /api/v1/organizations/:orgId/projects 200',
      'user POST /api/v1/organizations/:orgId/projects 201',
      'user POST /api/v1/organizations/:orgId/api-keys 201',
      'user POST /api/v1/organizations 201',
    ]);
    expect(body).toMatchObject({ total: 7, page: 1, pageSize: 20, hasMore: false });
    const newest = body.data[0] as Entry;
    expect(newest).toEqual({
      id: expect.stringMatching(/^aud_/),
      organizationId: org,
      actorType: 'user',
      actorId: owner.userId,
      action: 'PATCH /api/v1/organizations/:orgId/projects/:projectId',
      method: 'PATCH',
      path: `/api/v1/organizations/${org}/projects/${json(made).id}`,
      statusCode: 200,
      ipAddress: '127.0.0.1',
      userAgent: expect.any(String),
      createdAt: step(5),
    });
    const times = body.data.map((e: Entry) => e.createdAt);
    expect([...times].sort().reverse()).toEqual(times);

    // Pages.
    const p1 = json(await listLogs('pageSize=3', owner.auth, org));
    const p3 = json(await listLogs('pageSize=3&page=3', owner.auth, org));
    expect(p1).toMatchObject({ total: 7, page: 1, pageSize: 3, hasMore: true });
    expect(p1.data.map((e: Entry) => e.id)).toEqual(body.data.slice(0, 3).map((e: Entry) => e.id));
    expect(p3).toMatchObject({ total: 7, page: 3, pageSize: 3, hasMore: false });
    expect(p3.data.map((e: Entry) => e.id)).toEqual(body.data.slice(6).map((e: Entry) => e.id));

    // Filters: each narrows, and total is the count of what matches.
    const cases: [string, (e: Entry) => boolean][] = [
      ['actorType=api_key', (e) => e.actorType === 'api_key'],
      ['actorType=user', (e) => e.actorType === 'user'],
      [`actorId=${key.id}`, (e) => e.actorId === key.id],
      [`actorId=${owner.userId}`, (e) => e.actorId === owner.userId],
      [
        `action=${encodeURIComponent('GET /api/v1/organizations/:orgId/projects')}`,
        (e) => e.action === 'GET /api/v1/organizations/:orgId/projects',
      ],
      [
        `action=${encodeURIComponent('POST /api/v1/organizations/:orgId/projects')}`,
        (e) => e.action === 'POST /api/v1/organizations/:orgId/projects',
      ],
      [`from=${encodeURIComponent(step(3))}`, (e) => e.createdAt >= step(3)],
      [`to=${encodeURIComponent(step(2))}`, (e) => e.createdAt <= step(2)],
      [
        `from=${encodeURIComponent(step(2))}&to=${encodeURIComponent(step(4))}`,
        (e) => e.createdAt >= step(2) && e.createdAt <= step(4),
      ],
      [
        `actorType=api_key&from=${encodeURIComponent(step(3))}`,
        (e) => e.actorType === 'api_key' && e.createdAt >= step(3),
      ],
      [
        `actorType=user&action=${encodeURIComponent('POST /api/v1/organizations/:orgId/projects')}`,
        (e) => e.actorType === 'user' && e.action === 'POST /api/v1/organizations/:orgId/projects',
      ],
      ['actorId=key_00000000000000000000000000', () => false],
      [`from=${encodeURIComponent(step(6))}`, () => false],
    ];
    for (const [query, keep] of cases) {
      const res = await listLogs(query, owner.auth, org);
      expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
      const filtered = json(res);
      const expected = body.data.filter(keep).map((e: Entry) => e.id);
      expect(
        filtered.data.map((e: Entry) => e.id),
        query,
      ).toEqual(expected);
      expect(filtered.total, query).toBe(expected.length);
      expect(filtered.total, query).toBeLessThan(body.total);
      expect(filtered.hasMore).toBe(false);
    }
    const paged = json(await listLogs('actorType=api_key&pageSize=2', owner.auth, org));
    expect(paged).toMatchObject({ total: 3, pageSize: 2, hasMore: true });

    for (const bad of [
      'actorType=robot',
      'from=yesterday',
      'to=2026-13-01T00:00:00Z',
      'pageSize=0',
      'pageSize=101',
      'page=0',
    ]) {
      const res = await listLogs(bad, owner.auth, org);
      expect(res.statusCode, `${bad}: ${res.body}`).toBe(400);
      expect(json(res).error.code).toBe('VALIDATION_ERROR');
    }
  });
});
