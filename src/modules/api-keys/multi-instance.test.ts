// Keys across instances (docs/api.md#api-key-routes, docs/api.md#rate-limits). With Redis (TEST_REDIS_URL) and PostgreSQL
// (TEST_DATABASE_URL) two app instances share one database and one Redis prefix: a key used on B (so
// B has it cached) and revoked on A is refused on B's very next request; rate-limit counters are
// shared; both instances' audit entries add up. Without them there is one instance (the service's
// documented limit) and the same scenarios run on it.
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { createTestApp, json, onPostgres, onRedis, queryRows, type TestApp } from '../../../test/harness.js';

const twoInstances = onRedis && onPostgres;

let a: TestApp;
let b: TestApp;
let owner: Awaited<ReturnType<typeof signedInUser>>;
let orgId: string;
let otherOrgId: string;
beforeAll(async () => {
  a = await createTestApp();
  b = twoInstances ? await createTestApp({ database: a.database, clock: a.clock, redisPrefix: a.deps.redisPrefix }) : a;
  owner = await signedInUser(a, 'multi');
  orgId = await createOrg('multi');
  otherOrgId = await createOrg('multi-other');
}, 120_000);
afterAll(async () => {
  // The second instance first: it borrows the first one's database.
  if (b && b !== a) await b.close();
  await a?.close();
});

async function createOrg(name: string) {
  const res = await a.request({
    method: 'POST',
    url: '/api/v1/organizations',
    headers: owner.auth,
    payload: { name, slug: `${name}-${Date.now().toString(36)}` },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = json(res).id as string;
  await a.deps.db.execute(sql`update organizations set plan = 'enterprise' where id = ${id}`);
  return id;
}

async function createKey(org = orgId, extra: Record<string, unknown> = {}) {
  const res = await a.request({
    method: 'POST',
    url: `/api/v1/organizations/${org}/api-keys`,
    headers: owner.auth,
    payload: { name: 'multi', scopes: ['read:projects'], ...extra },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { id: json(res).apiKey.id as string, plain: json(res).plainKey as string };
}

const useOn = (app: TestApp, key: string, org = orgId, bearer = false) =>
  app.request({
    method: 'GET',
    url: `/api/v1/organizations/${org}/projects`,
    headers: bearer ? { authorization: `Bearer ${key}` } : { 'x-api-key': key },
  });

function expectInactive(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(401);
  expect(json(res).error).toMatchObject({ code: 'AUTHENTICATION_ERROR', message: 'API key is inactive' });
}

const usageOf = async (keyId: string) =>
  json(await a.request({ method: 'GET', url: `/api/v1/api-keys/${keyId}/usage`, headers: owner.auth })).usage
    .requests as number;

describe(
  twoInstances ? 'two instances sharing PostgreSQL and Redis' : 'one instance (no Redis or no PostgreSQL)',
  () => {
    it('is two instances exactly when Redis and PostgreSQL are configured', () => {
      expect(b !== a).toBe(twoInstances);
      if (twoInstances) expect(b.deps.redisPrefix).toBe(a.deps.redisPrefix);
    });

    it('a key used on B (cached there) and revoked on A is refused on B’s very next request, on both revoke paths and both headers', async () => {
      const paths = [
        (id: string) => `/api/v1/api-keys/${id}`,
        (id: string) => `/api/v1/organizations/${orgId}/api-keys/${id}`,
      ];
      for (const [i, path] of paths.entries()) {
        const key = await createKey();
        const bearer = i === 1;
        for (let n = 0; n < 3; n++) expect((await useOn(b, key.plain, orgId, bearer)).statusCode).toBe(200);
        const revoked = await a.request({ method: 'DELETE', url: path(key.id), headers: owner.auth });
        expect(revoked.statusCode, revoked.body).toBe(200);
        expectInactive(await useOn(b, key.plain, orgId, bearer));
        expectInactive(await useOn(b, key.plain, orgId, !bearer));
        expectInactive(await useOn(a, key.plain, orgId, bearer));
        // Still refused later (the refusal is not a one-off).
        expectInactive(await useOn(b, key.plain, orgId, bearer));
        expect(await usageOf(key.id)).toBe(7);
      }
    });

    it('revoke while requests are in flight: no request errs, and every request sent after the revocation answered is refused', async () => {
      const key = await createKey();
      for (const app of [a, b]) expect((await useOn(app, key.plain)).statusCode).toBe(200);
      const inFlight = Array.from({ length: 16 }, (_, i) => useOn(i % 2 ? a : b, key.plain));
      const revoked = await a.request({ method: 'DELETE', url: `/api/v1/api-keys/${key.id}`, headers: owner.auth });
      expect(revoked.statusCode, revoked.body).toBe(200);
      const after = await Promise.all(Array.from({ length: 16 }, (_, i) => useOn(i % 2 ? b : a, key.plain)));
      for (const res of after) expectInactive(res);
      for (const res of await Promise.all(inFlight)) expect([200, 401], res.body).toContain(res.statusCode);
      expect(await usageOf(key.id)).toBe(2 + 16 + 16);
      const [{ n }] = (await queryRows<{ n: number }>(
        a,
        sql`select count(*)::int as n from audit_logs where actor_id = ${key.id}`,
      )) as [{ n: number }];
      expect(n).toBe(34);
    });

    it('the per-key rate limit counts requests on every instance', async () => {
      const key = await createKey(orgId, { rateLimit: 4 });
      expect((await useOn(a, key.plain)).statusCode).toBe(200);
      expect((await useOn(b, key.plain)).statusCode).toBe(200);
      expect((await useOn(a, key.plain)).statusCode).toBe(200);
      const fourth = await useOn(b, key.plain);
      expect(fourth.statusCode).toBe(200);
      expect(fourth.headers['x-ratelimit-remaining']).toBe('0');
      for (const app of [a, b]) {
        const res = await useOn(app, key.plain);
        expect(res.statusCode, res.body).toBe(429);
        expect(json(res).error.code).toBe('RATE_LIMIT_EXCEEDED');
        expect(res.headers['x-ratelimit-limit']).toBe('4');
      }
    });

    it('parallel requests of several keys of two organizations on both instances: all served, every one audited and counted', async () => {
      const keys = [
        await createKey(orgId),
        await createKey(otherOrgId),
        await createKey(orgId),
        await createKey(otherOrgId),
      ];
      const orgOf = (k: number) => (k % 2 === 0 ? orgId : otherOrgId);
      const rounds = 3;
      const perRound = 40;
      for (let r = 0; r < rounds; r++) {
        const results = await Promise.all(
          Array.from({ length: perRound }, (_, i) => {
            // Keys and organizations in an order that differs between the instances.
            const k = i % 2 === 0 ? (i >> 1) % 4 : 3 - ((i >> 1) % 4);
            return useOn(i % 2 ? a : b, keys[k]!.plain, orgOf(k));
          }),
        );
        expect(
          results.map((res) => res.statusCode),
          results.find((res) => res.statusCode !== 200)?.body,
        ).toEqual(Array(perRound).fill(200));
      }
      const counts = await Promise.all(keys.map((k) => usageOf(k.id)));
      expect(counts.reduce((s, n) => s + n, 0)).toBe(rounds * perRound);
      for (const [i, k] of keys.entries()) {
        const [{ n }] = (await queryRows<{ n: number }>(
          a,
          sql`select count(*)::int as n from audit_logs where actor_id = ${k.id}`,
        )) as [{ n: number }];
        expect(n).toBe(counts[i]);
      }
    });
  },
);
