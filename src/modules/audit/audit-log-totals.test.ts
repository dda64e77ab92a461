// The audit log (docs/decisions.md, API keys and audit): an entry that cannot be written fails its own
// request only; the totals stay exact under every filter, under concurrent batches, and go with a
// deleted organization.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { login } from '../../../test/factories.js';
import { json, queryRows } from '../../../test/harness.js';
import { createAuditWriter } from '../../platform/audit/writer.js';
import {
  counterDrift,
  createKey,
  createOrg,
  entriesOf,
  type Entry,
  listLogs,
  orgId,
  owner,
  t,
  usageOf,
  useAuditApp,
} from '../../../test/fixtures/audit.js';

useAuditApp();

describe('when an audit entry cannot be written', () => {
  // Fault injection: the database refuses entries whose user agent says "poison".
  beforeAll(async () => {
    await t.deps.db
      .execute(sql`create or replace function refuse_poisoned_audit() returns trigger language plpgsql as $$
      begin
        if new.user_agent = 'poison' then raise exception 'audit store refused the entry'; end if;
        return new;
      end $$`);
    await t.deps.db.execute(
      sql`create trigger refuse_poisoned_audit before insert on audit_logs for each row execute function refuse_poisoned_audit()`,
    );
  });
  afterAll(async () => {
    await t.deps.db.execute(sql`drop trigger if exists refuse_poisoned_audit on audit_logs`);
  });

  it('the request answers 500 in the error envelope, without internals, whatever it would have answered', async () => {
    const key = await createKey(['read:projects']);
    const poisoned = { 'x-api-key': key.plain, 'user-agent': 'poison' };
    for (const url of [
      `/api/v1/organizations/${orgId}/projects`,
      `/api/v1/organizations/${orgId}/projects/prj_00000000000000000000000000`,
      `/api/v1/organizations/${orgId}/members`,
    ]) {
      const res = await t.request({ method: 'GET', url, headers: poisoned });
      expect(res.statusCode, res.body).toBe(500);
      expect(json(res)).toEqual({
        success: false,
        error: { code: 'INTERNAL_ERROR', message: expect.any(String), details: expect.stringMatching(/^Reference: /) },
      });
      expect(res.body).not.toMatch(/audit|insert|select|refused|poison/i);
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.body)));
    }
    expect(await entriesOf(key.id)).toEqual([]);
    // The key is fine for the next request.
    expect(
      (
        await t.request({
          method: 'GET',
          url: `/api/v1/organizations/${orgId}/projects`,
          headers: { 'x-api-key': key.plain },
        })
      ).statusCode,
    ).toBe(200);
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
      const poisoned = () =>
        t.request({
          method: 'GET',
          url: `/api/v1/organizations/${orgId}/projects`,
          headers: { ...headers, 'user-agent': 'poison' },
        });
      const results = await Promise.all([
        good(),
        good(),
        good(),
        good(),
        good(),
        good(),
        poisoned(),
        good(),
        good(),
        good(),
        good(),
      ]);
      expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200, 500, 200, 200, 200, 200]);
    }
    expect((await entriesOf(key.id)).map((e) => e.statusCode)).toEqual(Array(30).fill(200));
    expect(await usageOf(key.id)).toBe(30);
    // Batches did fail and fall back to one by one: the refused entries' counters went with their
    // batch, the entries committed one by one counted.
    expect(
      warn.mock.calls.filter(([, msg]) => msg === 'audit batch failed; committing its entries one by one').length,
    ).toBeGreaterThan(0);
    warn.mockRestore();
    expect(await counterDrift(orgId)).toEqual([]);
    expect(json(await listLogs(`actorId=${key.id}`)).total).toBe(30);
    expect(
      json(
        await listLogs(`actorId=${key.id}&action=${encodeURIComponent('GET /api/v1/organizations/:orgId/projects')}`),
      ).total,
    ).toBe(30);
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
    expect(
      body.data.map((e: Entry) => e.id),
      query,
    ).toEqual(ids);
    // The second page of 2 agrees with the total too.
    const p2 = json(await listLogs(new URLSearchParams({ ...f, pageSize: '2', page: '2' }).toString(), auth, org));
    expect(p2.total, query).toBe(ids.length);
    expect(p2.hasMore, query).toBe(ids.length > 4);
    expect(
      p2.data.map((e: Entry) => e.id),
      query,
    ).toEqual(ids.slice(2, 4));
    return ids.length;
  }

  const relogin = async () => {
    const tokens = await login(t, owner.email);
    // In place: `owner` is the helpers' binding, which every helper reads.
    Object.assign(owner, tokens, { auth: { authorization: `Bearer ${tokens.accessToken}` } });
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
          t.request({
            method: 'POST',
            url: `/api/v1/organizations/${a}/projects`,
            headers: key(a1),
            payload: { name: `k${day}` },
          }),
          t.request({ method: 'GET', url: `/api/v1/organizations/${a}/projects`, headers: key(a2) }),
          t.request({ method: 'GET', url: `/api/v1/organizations/${a}/members`, headers: key(a2) }),
          t.request({
            method: 'POST',
            url: `/api/v1/organizations/${a}/projects`,
            headers: key(a2),
            payload: { name: 'no' },
          }),
          t.request({
            method: 'POST',
            url: `/api/v1/organizations/${a}/projects`,
            headers: owner.auth,
            payload: { name: `u${day}` },
          }),
          t.request({ method: 'GET', url: `/api/v1/organizations/${b}/projects`, headers: key(b1) }),
          t.request({ method: 'GET', url: `/api/v1/organizations/${b}/members`, headers: key(b1) }),
          t.request({
            method: 'POST',
            url: `/api/v1/organizations/${b}/projects`,
            headers: owner.auth,
            payload: { name: `u${day}` },
          }),
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
      if (n % 16 === 5)
        return t.request({
          method: 'POST',
          url: `/api/v1/organizations/${n % 2 ? a : b}/projects`,
          headers: owner.auth,
          payload: { name: `race${n}` },
        });
      if (n === 80) return t.request({ method: 'DELETE', url: `/api/v1/api-keys/${keys[0]!.id}`, headers: owner.auth });
      return t.request({
        method: n % 3 ? 'GET' : 'POST',
        url: `/api/v1/organizations/${orgOf(i)}/projects`,
        headers: { 'x-api-key': keys[i]!.plain },
        payload: n % 3 ? undefined : { name: `k${n}` },
      });
    });
    // A second writer, as another instance's, commits its own batches on the same rows meanwhile.
    const other = createAuditWriter(t.deps.db, t.deps.logger);
    const otherWrites = Array.from({ length: 160 }, (_, n) => {
      const i = (n * 3) % keys.length;
      const path = `/api/v1/organizations/${orgOf(i)}/projects`;
      const entry = {
        organizationId: orgOf(i),
        keyId: keys[i]!.id,
        action: `GET /api/v1/organizations/:orgId/projects`,
        method: 'GET',
        path,
        statusCode: 200,
      };
      return new Promise<void>((resolve) => setTimeout(resolve, n % 5)).then(() =>
        other.write({ ...entry, ipAddress: '192.0.2.1', userAgent: 'other-instance', createdAt: t.clock.now() }),
      );
    });
    const [results] = await Promise.all([Promise.all(calls), Promise.all(otherWrites)]);
    await other.close();
    expect(results.filter((r) => r.statusCode >= 500).map((r) => r.body)).toEqual([]);
    expect(
      warn.mock.calls.filter(([, msg]) => msg === 'audit batch failed; committing its entries one by one'),
    ).toEqual([]);
    warn.mockRestore();
    expect(await counterDrift(a)).toEqual([]);
    expect(await counterDrift(b)).toEqual([]);
    for (const k of keys) {
      const [{ n }] = (await queryRows<{ n: number }>(
        t,
        sql`select count(*)::int as n from audit_logs where actor_id = ${k.id}`,
      )) as [{ n: number }];
      expect(await usageOf(k.id)).toBe(n);
    }
  });

  it('deleting an organization deletes its entries and counters with it', async () => {
    const org = await createOrg('totals-deleted');
    const k = await createKey(['read:projects'], org);
    expect(
      (
        await t.request({
          method: 'GET',
          url: `/api/v1/organizations/${org}/projects`,
          headers: { 'x-api-key': k.plain },
        })
      ).statusCode,
    ).toBe(200);
    const count = async () =>
      (
        await queryRows<{ entries: number; counters: number }>(
          t,
          sql`select (select count(*) from audit_logs where organization_id = ${org})::int as entries,
                   (select count(*) from audit_log_counters where organization_id = ${org})::int as counters`,
        )
      )[0]!;
    expect(await count()).toEqual({ entries: 3, counters: expect.any(Number) });
    expect((await count()).counters).toBeGreaterThan(0);
    const res = await t.request({ method: 'DELETE', url: `/api/v1/organizations/${org}`, headers: owner.auth });
    expect(res.statusCode, res.body).toBe(200);
    expect(await count()).toEqual({ entries: 0, counters: 0 });
  });
});
