// Checks that the shared security table is complete: a route that refuses anonymous callers but has
// no row fails here. The table itself runs against every protected route in security-table-N.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import { awaitingRows, expectAuthenticationError, pathPattern, protectedRoutes } from './security.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('the table itself', () => {
  const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

  async function documentedOperations() {
    const doc = t.app.swagger() as { paths: Record<string, Record<string, unknown>> };
    const ops: Array<{ method: string; path: string }> = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) if (item[m]) ops.push({ method: m.toUpperCase(), path });
    }
    return ops;
  }

  it('has a row (or an awaiting entry) for every documented route that refuses an anonymous caller', async () => {
    const ops = await documentedOperations();
    expect(ops.length).toBeGreaterThan(10);
    const missing: string[] = [];
    const both: string[] = [];
    const protectedOps = new Set<string>();
    for (const op of ops) {
      const res = await t.request({ method: op.method as 'GET', url: op.path.replace(/\{[^}]+\}/g, 'x') });
      if (res.statusCode !== 401) continue;
      const key = `${op.method} ${op.path}`;
      protectedOps.add(key);
      expectAuthenticationError(res, key);
      const hasRow = protectedRoutes.some((r) => r.method === op.method && pathPattern(op.path).test(r.url));
      const awaiting = awaitingRows.includes(key);
      if (!hasRow && !awaiting) missing.push(key);
      if (hasRow && awaiting) both.push(key);
    }
    expect(missing, 'protected routes without a row in test/security.ts').toEqual([]);
    expect(both, 'routes with a row: remove them from awaitingRows').toEqual([]);
    expect(
      awaitingRows.filter((key) => !protectedOps.has(key)),
      'awaitingRows entries that are not (or no longer) protected routes',
    ).toEqual([]);
  });

  it('names only documented routes, each once', async () => {
    const ops = await documentedOperations();
    for (const row of protectedRoutes) {
      const matches = ops.filter((op) => op.method === row.method && pathPattern(op.path).test(row.url));
      expect(matches, `${row.method} ${row.url}`).toHaveLength(1);
    }
    const keys = protectedRoutes.map((r) => `${r.method} ${r.url}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(awaitingRows).size).toBe(awaitingRows.length);
  });
});
