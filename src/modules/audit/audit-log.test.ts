// The audit log (DECISIONS §4): one entry per API-key request, failures included, committed before the
// response; group commit that loses nothing under parallel requests; and GET …/audit-logs with its
// permission, scope, envelope, order and filters.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { login, signedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { newId } from '../../lib/ids.js';
import { createAuditWriter } from '../../platform/audit/writer.js';

let t: TestApp;
let owner: Awaited<ReturnType<typeof signedInUser>>;
let member: Awaited<ReturnType<typeof signedInUser>>;
let orgId: string;
let otherOrgId: string;
beforeAll(async () => {
  t = await createTestApp();
  owner = await signedInUser(t, 'audit-owner');
  member = await signedInUser(t, 'audit-member');
  orgId = await createOrg('audit');
  otherOrgId = await createOrg('audit-other');
  const now = t.clock.now().toISOString();
  await t.deps.db.execute(sql`insert into memberships (organization_id, id, user_id, role, joined_at, updated_at)
    values (${orgId}, ${newId('mbr', t.clock.now().getTime())}, ${member.userId}, 'member', ${now}::timestamptz, ${now}::timestamptz)`);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

async function createOrg(name: string) {
  const res = await t.request({ method: 'POST', url: '/api/v1/organizations', headers: owner.auth, payload: { name, slug: `${name}-${Date.now().toString(36)}` } });
  expect(res.statusCode, res.body).toBe(201);
  const id = json(res).id as string;
  await t.deps.db.execute(sql`update organizations set plan = 'enterprise' where id = ${id}`);
  return id;
}

async function createKey(scopes: string[], org = orgId) {
  const res = await t.request({ method: 'POST', url: `/api/v1/organizations/${org}/api-keys`, headers: owner.auth, payload: { name: 'audited', scopes } });
  expect(res.statusCode, res.body).toBe(201);
  return { id: json(res).apiKey.id as string, plain: json(res).plainKey as string };
}

interface Entry {
  id: string;
  organizationId: string;
  actorType: string;
  actorId: string;
  action: string;
  method: string;
  path: string;
  statusCode: number;
  ipAddress: string | null;
  userAgent: string | null;
  createdAt: string;
}

async function entriesOf(keyId: string): Promise<Entry[]> {
  const rows = await queryRows<Record<string, unknown>>(
    t,
    sql`select id, organization_id, actor_type, actor_id, action, method, path, status_code, ip_address, user_agent, created_at
        from audit_logs where actor_id = ${keyId} order by created_at, id`,
  );
  return rows.map((r) => ({
    id: r.id as string,
    organizationId: r.organization_id as string,
    actorType: r.actor_type as string,
    actorId: r.actor_id as string,
    action: r.action as string,
    method: r.method as string,
    path: r.path as string,
    statusCode: Number(r.status_code),
    ipAddress: r.ip_address as string | null,
    userAgent: r.user_agent as string | null,
    createdAt: new Date(r.created_at as string).toISOString(),
  }));
}

const usageOf = async (keyId: string) => json(await t.request({ method: 'GET', url: `/api/v1/api-keys/${keyId}/usage`, headers: owner.auth })).usage.requests as number;
const listLogs = (query: string, headers: Record<string, string> = owner.auth, org = orgId) =>
  t.request({ method: 'GET', url: `/api/v1/organizations/${org}/audit-logs${query ? `?${query}` : ''}`, headers });

/** The counters of `org` recomputed from its entries, against the table: the rows that differ. */
async function counterDrift(org: string) {
  return queryRows(
    t,
    sql`with expected as (
          select a.organization_id, g.actor_type, g.actor_id, g.action, (a.created_at at time zone 'UTC')::date as day, count(*) as total
          from audit_logs a
          cross join lateral (values ('', '', ''), (a.actor_type, '', ''), (a.actor_type, a.actor_id, ''), ('', '', a.action),
            (a.actor_type, '', a.action), (a.actor_type, a.actor_id, a.action)) as g(actor_type, actor_id, action)
          where a.organization_id = ${org}
          group by 1, 2, 3, 4, 5
        )
        select coalesce(e.actor_type, c.actor_type) as actor_type, coalesce(e.actor_id, c.actor_id) as actor_id,
          coalesce(e.action, c.action) as action, coalesce(e.day, c.day)::text as day, e.total::int as expected, c.total::int as actual
        from expected e
        full join (select organization_id, actor_type, actor_id, action, day, sum(total) as total from audit_log_counters
          where organization_id = ${org} group by 1, 2, 3, 4, 5) c using (organization_id, actor_type, actor_id, action, day)
        where e.total is distinct from c.total`,
  );
}

describe('an entry per API-key request', () => {
  it('successes and failures alike, with actor, action, path, status, IP, user agent and time, committed before the response', async () => {
    const key = await createKey(['read:projects']);
    const headers = { 'x-api-key': key.plain, 'user-agent': 'audit-agent/1.0' };
    const projects = `/api/v1/organizations/${orgId}/projects`;
    const calls = [
      { req: { method: 'GET' as const, url: `${projects}?page=1&pageSize=5`, headers, remoteAddress: '203.0.113.7' }, status: 200, action: 'GET /api/v1/organizations/:orgId/projects', path: projects },
      { req: { method: 'POST' as const, url: projects, headers, payload: { name: 'nope' } }, status: 403, action: 'POST /api/v1/organizations/:orgId/projects', path: projects },
      { req: { method: 'GET' as const, url: `/api/v1/organizations/${otherOrgId}/projects`, headers }, status: 403, action: 'GET /api/v1/organizations/:orgId/projects', path: `/api/v1/organizations/${otherOrgId}/projects` },
      { req: { method: 'GET' as const, url: `${projects}/prj_00000000000000000000000000`, headers }, status: 404, action: 'GET /api/v1/organizations/:orgId/projects/:projectId', path: `${projects}/prj_00000000000000000000000000` },
      { req: { method: 'GET' as const, url: `${projects}?pageSize=0`, headers }, status: 400, action: 'GET /api/v1/organizations/:orgId/projects', path: projects },
      { req: { method: 'GET' as const, url: '/api/v1/users/me', headers }, status: 403, action: 'GET /api/v1/users/me', path: '/api/v1/users/me' },
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
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${key.id}`, headers: owner.auth })).statusCode).toBe(200);
    const refused = await t.request({ method: 'GET', url: projects, headers });
    expect(refused.statusCode).toBe(401);
    const entries = await entriesOf(key.id);
    expect(entries.map((e) => e.statusCode)).toEqual([200, 403, 403, 404, 400, 403, 401]);
    expect(await usageOf(key.id)).toBe(7);

    // An unknown key belongs to no organization: nothing to audit, and no error.
    const unknown = await t.request({ method: 'GET', url: projects, headers: { 'x-api-key': `svc_live_${'f'.repeat(32)}` } });
    expect(unknown.statusCode).toBe(401);
  });

  it('20 parallel requests: exactly 20 entries and usage.requests 20 (group commit loses nothing)', async () => {
    const key = await createKey(['read:projects']);
    const url = `/api/v1/organizations/${orgId}/projects`;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request(i % 4 === 3 ? { method: 'POST', url, headers: { 'x-api-key': key.plain }, payload: { name: `p${i}` } } : { method: 'GET', url, headers: { 'x-api-key': key.plain } }),
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
    const [before] = await queryRows<{ n: number }>(t, sql`select count(*)::int as n from audit_logs where organization_id in (${orgId}, ${otherOrgId})`);
    const plan = [...Array(12).fill(a), ...Array(9).fill(b), ...Array(7).fill(c)] as (typeof a)[];
    const results = await Promise.all(
      plan.map((k, i) => t.request({ method: 'GET', url: `/api/v1/organizations/${k === c ? otherOrgId : orgId}/${i % 2 ? 'projects' : 'members'}`, headers: { 'x-api-key': k.plain } })),
    );
    expect(results.every((r) => r.statusCode === 200 || r.statusCode === 403)).toBe(true);
    expect((await entriesOf(a.id)).length).toBe(12);
    expect((await entriesOf(b.id)).length).toBe(9);
    expect((await entriesOf(c.id)).length).toBe(7);
    expect([await usageOf(a.id), await usageOf(b.id), await usageOf(c.id)]).toEqual([12, 9, 7]);
    const [after] = await queryRows<{ n: number }>(t, sql`select count(*)::int as n from audit_logs where organization_id in (${orgId}, ${otherOrgId})`);
    expect(after!.n - before!.n).toBe(28);
    // The unfiltered totals follow, and so do the filtered ones (audit_log_counters).
    for (const org of [orgId, otherOrgId]) {
      const [{ n }] = (await queryRows<{ n: number }>(t, sql`select count(*)::int as n from audit_logs where organization_id = ${org}`)) as [{ n: number }];
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
    const made = await t.request({ method: 'POST', url: `/api/v1/organizations/${org}/projects`, headers: owner.auth, payload: { name: 'by user' } });
    expect(made.statusCode).toBe(201);
    t.clock.set(t0 + 2 * 60_000);
    expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${org}/projects`, headers: { 'x-api-key': key.plain } })).statusCode).toBe(200);
    t.clock.set(t0 + 3 * 60_000);
    expect((await t.request({ method: 'POST', url: `/api/v1/organizations/${org}/projects`, headers: { 'x-api-key': key.plain }, payload: { name: 'by key' } })).statusCode).toBe(201);
    t.clock.set(t0 + 4 * 60_000);
    expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${org}/members`, headers: { 'x-api-key': key.plain } })).statusCode).toBe(403);
    t.clock.set(t0 + 5 * 60_000);
    expect((await t.request({ method: 'PATCH', url: `/api/v1/organizations/${org}/projects/${json(made).id}`, headers: owner.auth, payload: { name: 'renamed' } })).statusCode).toBe(200);

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
      [`action=${encodeURIComponent('GET /api/v1/organizations/:orgId/projects')}`, (e) => e.action === 'GET /api/v1/organizations/:orgId/projects'],
      [`action=${encodeURIComponent('POST /api/v1/organizations/:orgId/projects')}`, (e) => e.action === 'POST /api/v1/organizations/:orgId/projects'],
      [`from=${encodeURIComponent(step(3))}`, (e) => e.createdAt >= step(3)],
      [`to=${encodeURIComponent(step(2))}`, (e) => e.createdAt <= step(2)],
      [`from=${encodeURIComponent(step(2))}&to=${encodeURIComponent(step(4))}`, (e) => e.createdAt >= step(2) && e.createdAt <= step(4)],
      [`actorType=api_key&from=${encodeURIComponent(step(3))}`, (e) => e.actorType === 'api_key' && e.createdAt >= step(3)],
      [`actorType=user&action=${encodeURIComponent('POST /api/v1/organizations/:orgId/projects')}`, (e) => e.actorType === 'user' && e.action === 'POST /api/v1/organizations/:orgId/projects'],
      ['actorId=key_00000000000000000000000000', () => false],
      [`from=${encodeURIComponent(step(6))}`, () => false],
    ];
    for (const [query, keep] of cases) {
      const res = await listLogs(query, owner.auth, org);
      expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
      const filtered = json(res);
      const expected = body.data.filter(keep).map((e: Entry) => e.id);
      expect(filtered.data.map((e: Entry) => e.id), query).toEqual(expected);
      expect(filtered.total, query).toBe(expected.length);
      expect(filtered.total, query).toBeLessThan(body.total);
      expect(filtered.hasMore).toBe(false);
    }
    const paged = json(await listLogs('actorType=api_key&pageSize=2', owner.auth, org));
    expect(paged).toMatchObject({ total: 3, pageSize: 2, hasMore: true });

    for (const bad of ['actorType=robot', 'from=yesterday', 'to=2026-13-01T00:00:00Z', 'pageSize=0', 'pageSize=101', 'page=0']) {
      const res = await listLogs(bad, owner.auth, org);
      expect(res.statusCode, `${bad}: ${res.body}`).toBe(400);
      expect(json(res).error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('when an audit entry cannot be written', () => {
  // Fault injection: the database refuses entries whose user agent says "poison".
  beforeAll(async () => {
    await t.deps.db.execute(sql`create or replace function refuse_poisoned_audit() returns trigger language plpgsql as $$
      begin
        if new.user_agent = 'poison' then raise exception 'audit store refused the entry'; end if;
        return new;
      end $$`);
    await t.deps.db.execute(sql`create trigger refuse_poisoned_audit before insert on audit_logs for each row execute function refuse_poisoned_audit()`);
  });
  afterAll(async () => {
    await t.deps.db.execute(sql`drop trigger if exists refuse_poisoned_audit on audit_logs`);
  });

  it('the request answers 500 in the error envelope, without internals, whatever it would have answered', async () => {
    const key = await createKey(['read:projects']);
    const poisoned = { 'x-api-key': key.plain, 'user-agent': 'poison' };
    for (const url of [`/api/v1/organizations/${orgId}/projects`, `/api/v1/organizations/${orgId}/projects/prj_00000000000000000000000000`, `/api/v1/organizations/${orgId}/members`]) {
      const res = await t.request({ method: 'GET', url, headers: poisoned });
      expect(res.statusCode, res.body).toBe(500);
      expect(json(res)).toEqual({ success: false, error: { code: 'INTERNAL_ERROR', message: expect.any(String), details: expect.stringMatching(/^Reference: /) } });
      expect(res.body).not.toMatch(/audit|insert|select|refused|poison/i);
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.body)));
    }
    expect(await entriesOf(key.id)).toEqual([]);
    // The key is fine for the next request.
    expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers: { 'x-api-key': key.plain } })).statusCode).toBe(200);
    expect(await usageOf(key.id)).toBe(1);
  });

  it('requests committed in the same batch as a refused entry are not failed with it', async () => {
    const key = await createKey(['read:projects']);
    const headers = { 'x-api-key': key.plain };
    const good = () => t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers });
    const warn = vi.spyOn(t.deps.logger, 'warn');
    for (let round = 0; round < 3; round++) {
      // The first requests start a commit each, one per slot of the writer (4); the ones behind them
      // wait and are batched together, the refused one among them.
      const poisoned = () => t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/projects`, headers: { ...headers, 'user-agent': 'poison' } });
      const results = await Promise.all([good(), good(), good(), good(), good(), good(), poisoned(), good(), good(), good(), good()]);
      expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200, 500, 200, 200, 200, 200]);
    }
    expect((await entriesOf(key.id)).map((e) => e.statusCode)).toEqual(Array(30).fill(200));
    expect(await usageOf(key.id)).toBe(30);
    // Batches did fail and fall back to one by one: the refused entries' counters went with their
    // batch, the entries committed one by one counted.
    expect(warn.mock.calls.filter(([, msg]) => msg === 'audit batch failed; committing its entries one by one').length).toBeGreaterThan(0);
    warn.mockRestore();
    expect(await counterDrift(orgId)).toEqual([]);
    expect(json(await listLogs(`actorId=${key.id}`)).total).toBe(30);
    expect(json(await listLogs(`actorId=${key.id}&action=${encodeURIComponent('GET /api/v1/organizations/:orgId/projects')}`)).total).toBe(30);
  });
});

// The list's totals come from audit_log_counters (one row per organization, UTC day and filter
// combination), kept in the statement of every audit insert; with from/to, whole days come from the
// counters and the partial days at the ends are counted. Every total must equal a count(*).
describe('exact totals under every filter combination', () => {
  const GET_PROJECTS = 'GET /api/v1/organizations/:orgId/projects';
  const POST_PROJECTS = 'POST /api/v1/organizations/:orgId/projects';
  const GET_MEMBERS = 'GET /api/v1/organizations/:orgId/members';

  interface Filter {
    actorType?: string;
    actorId?: string;
    action?: string;
    from?: string;
    to?: string;
  }

  /** What the list must answer: the organization's entries from audit_logs, filtered here. */
  async function expectedIds(org: string, f: Filter) {
    const rows = await queryRows<{ id: string; actor_type: string; actor_id: string; action: string; ms: string }>(
      t,
      sql`select id, actor_type, actor_id, action, (extract(epoch from created_at) * 1000)::bigint::text as ms
          from audit_logs where organization_id = ${org} order by created_at desc, id desc`,
    );
    return rows
      .filter(
        (r) =>
          (!f.actorType || r.actor_type === f.actorType) &&
          (!f.actorId || r.actor_id === f.actorId) &&
          (!f.action || r.action === f.action) &&
          (!f.from || Number(r.ms) >= Date.parse(f.from)) &&
          (!f.to || Number(r.ms) <= Date.parse(f.to)),
      )
      .map((r) => r.id);
  }

  async function expectExact(org: string, f: Filter, auth = owner.auth) {
    const query = new URLSearchParams({ pageSize: '100', ...f }).toString();
    const res = await listLogs(query, auth, org);
    expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
    const body = json(res);
    const ids = await expectedIds(org, f);
    expect(ids.length, `${query}: more entries than one page`).toBeLessThanOrEqual(100);
    expect(body.total, query).toBe(ids.length);
    expect(body.data.map((e: Entry) => e.id), query).toEqual(ids);
    // The second page of 2 agrees with the total too.
    const p2 = json(await listLogs(new URLSearchParams({ ...f, pageSize: '2', page: '2' }).toString(), auth, org));
    expect(p2.total, query).toBe(ids.length);
    expect(p2.hasMore, query).toBe(ids.length > 4);
    expect(p2.data.map((e: Entry) => e.id), query).toEqual(ids.slice(2, 4));
    return ids.length;
  }

  const relogin = async () => {
    const tokens = await login(t, owner.email);
    owner = { ...owner, ...tokens, auth: { authorization: `Bearer ${tokens.accessToken}` } };
  };

  it('key requests and user changes over several days, in two organizations, batched together: every total equals the count', async () => {
    const a = await createOrg('totals-a');
    const b = await createOrg('totals-b');
    const a1 = await createKey(['read:projects', 'write:projects'], a);
    const a2 = await createKey(['read:projects', 'read:members'], a);
    const b1 = await createKey(['read:projects'], b);
    const key = (k: { plain: string }) => ({ 'x-api-key': k.plain });
    // Four UTC days, each at midnight exactly, mid-morning and its last millisecond.
    const day0 = Math.ceil((t.clock.now().getTime() + 1) / 86_400_000) * 86_400_000;
    const at = (day: number, ms: number) => new Date(day0 + day * 86_400_000 + ms).toISOString();
    const MORNING = 6.5 * 3_600_000;
    const LAST = 86_400_000 - 1;
    for (let day = 0; day < 4; day++) {
      for (const ms of [0, MORNING, LAST]) {
        t.clock.set(Date.parse(at(day, ms)));
        await relogin();
        const results = await Promise.all([
          t.request({ method: 'GET', url: `/api/v1/organizations/${a}/projects`, headers: key(a1) }),
          t.request({ method: 'POST', url: `/api/v1/organizations/${a}/projects`, headers: key(a1), payload: { name: `k${day}` } }),
          t.request({ method: 'GET', url: `/api/v1/organizations/${a}/projects`, headers: key(a2) }),
          t.request({ method: 'GET', url: `/api/v1/organizations/${a}/members`, headers: key(a2) }),
          t.request({ method: 'POST', url: `/api/v1/organizations/${a}/projects`, headers: key(a2), payload: { name: 'no' } }),
          t.request({ method: 'POST', url: `/api/v1/organizations/${a}/projects`, headers: owner.auth, payload: { name: `u${day}` } }),
          t.request({ method: 'GET', url: `/api/v1/organizations/${b}/projects`, headers: key(b1) }),
          t.request({ method: 'GET', url: `/api/v1/organizations/${b}/members`, headers: key(b1) }),
          t.request({ method: 'POST', url: `/api/v1/organizations/${b}/projects`, headers: owner.auth, payload: { name: `u${day}` } }),
        ]);
        expect(results.map((r) => r.statusCode)).toEqual([200, 201, 200, 200, 403, 201, 200, 403, 201]);
      }
    }
    expect(await counterDrift(a)).toEqual([]);
    expect(await counterDrift(b)).toEqual([]);

    const filters: Filter[] = [
      {},
      { actorType: 'api_key' },
      { actorType: 'user' },
      { actorId: a1.id },
      { actorId: owner.userId },
      { action: GET_PROJECTS },
      { actorType: 'api_key', action: POST_PROJECTS },
      { actorType: 'user', action: POST_PROJECTS },
      { actorId: a2.id, action: GET_MEMBERS },
      { actorType: 'api_key', actorId: a1.id },
      { actorType: 'user', actorId: a1.id },
      { actorType: 'api_key', actorId: a2.id, action: POST_PROJECTS },
      { actorId: b1.id },
    ];
    const ranges: Filter[] = [
      {},
      { from: at(1, 0) },
      { from: at(1, 1) },
      { to: at(2, MORNING) },
      { to: at(2, 0) },
      { from: at(0, MORNING + 1), to: at(2, LAST) },
      { from: at(0, MORNING), to: at(3, MORNING - 1) },
      { from: at(1, 0), to: at(1, LAST) },
      { from: at(1, MORNING), to: at(1, MORNING) },
      { from: at(1, MORNING), to: at(2, MORNING) },
      { from: at(3, 0), to: at(1, 0) },
      { from: '0000-01-01T00:00:00Z', to: '9999-12-31T23:59:59.999Z' },
      { to: '0000-06-01T00:00:00Z' },
      { from: '9999-12-31T12:00:00Z' },
    ];
    let seen = 0;
    for (const org of [a, b]) {
      for (const f of filters) {
        for (const r of ranges) seen += await expectExact(org, { ...f, ...r });
      }
    }
    // Not vacuous: organization a alone has 12 moments × 6 entries, plus its creation and two keys'.
    expect(await expectExact(a, {})).toBe(12 * 6 + 3);
    expect(await expectExact(b, {})).toBe(12 * 3 + 2);
    expect(await expectExact(a, { actorId: a1.id, from: at(1, 0), to: at(2, LAST) })).toBe(2 * 3 * 2);
    expect(seen).toBeGreaterThan(1000);
  });

  it('concurrent batches (two writers, as two instances), user changes and a revocation on the same rows: no deadlock, no failed batch, counters exact', async () => {
    const a = await createOrg('totals-race-a');
    const b = await createOrg('totals-race-b');
    const keys = [
      ...(await Promise.all([0, 1, 2].map(() => createKey(['read:projects', 'write:projects'], a)))),
      ...(await Promise.all([0, 1].map(() => createKey(['read:projects'], b)))),
    ];
    const orgOf = (i: number) => (i < 3 ? a : b);
    const warn = vi.spyOn(t.deps.logger, 'warn');
    const calls = Array.from({ length: 160 }, (_, n) => {
      const i = (n * 7) % keys.length;
      if (n % 16 === 5) return t.request({ method: 'POST', url: `/api/v1/organizations/${n % 2 ? a : b}/projects`, headers: owner.auth, payload: { name: `race${n}` } });
      if (n === 80) return t.request({ method: 'DELETE', url: `/api/v1/api-keys/${keys[0]!.id}`, headers: owner.auth });
      return t.request({ method: n % 3 ? 'GET' : 'POST', url: `/api/v1/organizations/${orgOf(i)}/projects`, headers: { 'x-api-key': keys[i]!.plain }, payload: n % 3 ? undefined : { name: `k${n}` } });
    });
    // A second writer, as another instance's, commits its own batches on the same rows meanwhile.
    const other = createAuditWriter(t.deps.db, t.deps.logger);
    const otherWrites = Array.from({ length: 160 }, (_, n) => {
      const i = (n * 3) % keys.length;
      const path = `/api/v1/organizations/${orgOf(i)}/projects`;
      const entry = { organizationId: orgOf(i), keyId: keys[i]!.id, action: `GET /api/v1/organizations/:orgId/projects`, method: 'GET', path, statusCode: 200 };
      return new Promise<void>((resolve) => setTimeout(resolve, n % 5)).then(() =>
        other.write({ ...entry, ipAddress: '192.0.2.1', userAgent: 'other-instance', createdAt: t.clock.now() }),
      );
    });
    const [results] = await Promise.all([Promise.all(calls), Promise.all(otherWrites)]);
    await other.close();
    expect(results.filter((r) => r.statusCode >= 500).map((r) => r.body)).toEqual([]);
    expect(warn.mock.calls.filter(([, msg]) => msg === 'audit batch failed; committing its entries one by one')).toEqual([]);
    warn.mockRestore();
    expect(await counterDrift(a)).toEqual([]);
    expect(await counterDrift(b)).toEqual([]);
    for (const k of keys) {
      const [{ n }] = (await queryRows<{ n: number }>(t, sql`select count(*)::int as n from audit_logs where actor_id = ${k.id}`)) as [{ n: number }];
      expect(await usageOf(k.id)).toBe(n);
    }
  });

  it('deleting an organization deletes its entries and counters with it', async () => {
    const org = await createOrg('totals-deleted');
    const k = await createKey(['read:projects'], org);
    expect((await t.request({ method: 'GET', url: `/api/v1/organizations/${org}/projects`, headers: { 'x-api-key': k.plain } })).statusCode).toBe(200);
    const count = async () =>
      (await queryRows<{ entries: number; counters: number }>(
        t,
        sql`select (select count(*) from audit_logs where organization_id = ${org})::int as entries,
                   (select count(*) from audit_log_counters where organization_id = ${org})::int as counters`,
      ))[0]!;
    expect(await count()).toEqual({ entries: 3, counters: expect.any(Number) });
    expect((await count()).counters).toBeGreaterThan(0);
    const res = await t.request({ method: 'DELETE', url: `/api/v1/organizations/${org}`, headers: owner.auth });
    expect(res.statusCode, res.body).toBe(200);
    expect(await count()).toEqual({ entries: 0, counters: 0 });
  });
});
