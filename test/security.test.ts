// Checks that the shared security table is complete. Its rows are generated from the route table
// (test/security.ts), so this checks what generation cannot: that each row has what it needs (a
// control, a body), that no hand-kept entry names a row that is not there, and, against the OpenAPI
// document, that every operation is a row or named public. The table itself runs in
// security-table-N.test.ts.
import { describe, expect, it } from 'vitest';
import { t, useApp } from './fixtures/app.js';
import { BODIES, BODY_IDS, operations, QUERIES, strayEntries } from './route-table.js';
import { CONTROLS, expectAuthenticationError, pathPattern, PUBLIC_OPERATIONS, securityTable } from './security.js';

useApp();

describe('the table itself', () => {
  const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

  function documentedOperations() {
    const doc = t.app.swagger() as unknown as {
      paths: Record<string, Record<string, { operationId: string } | undefined>>;
    };
    const ops: Array<{ method: string; path: string; operationId: string }> = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) {
        const op = item[m];
        if (op) ops.push({ method: m.toUpperCase(), path, operationId: op.operationId });
      }
    }
    return ops;
  }

  it('every protected operation of the route table has what its row needs, and every hand-kept entry names a row', () => {
    const ops = operations(t);
    expect(ops.filter((op) => op.auth !== 'none').length).toBeGreaterThan(10);
    expect(securityTable(ops).problems).toEqual([]);
    // The route table's shared knowledge (test/route-table.ts) names operations of the table only.
    expect(
      [...strayEntries(BODIES, ops), ...strayEntries(BODY_IDS, ops), ...strayEntries(QUERIES, ops)],
      'stale entries in test/route-table.ts',
    ).toEqual([]);
    expect(Object.keys(CONTROLS).length).toBeGreaterThan(0);
  });

  it('has a row for every documented operation but the public ones', async () => {
    const rows = new Set(securityTable(operations(t)).rows.map((r) => r.operationId));
    const documented = documentedOperations();
    const refusesAnonymous = new Set<string>();
    for (const op of documented) {
      const res = await t.request({ method: op.method as 'GET', url: op.path.replace(/\{[^}]+\}/g, 'x') });
      if (res.statusCode !== 401) continue;
      refusesAnonymous.add(op.operationId);
      expectAuthenticationError(res, `${op.method} ${op.path}`);
    }
    // Each documented operation is a row or public, not both: a route whose guard was dropped loses
    // its row and fails here until it is named public.
    const what = (op: { method: string; path: string; operationId: string }) =>
      `${op.operationId} (${op.method} ${op.path})`;
    expect(
      documented.filter((op) => !rows.has(op.operationId) && !PUBLIC_OPERATIONS.includes(op.operationId)).map(what),
      'documented operations without a row: declare their guard in src/routes.ts, or name them in PUBLIC_OPERATIONS',
    ).toEqual([]);
    expect(
      documented.filter((op) => rows.has(op.operationId) && PUBLIC_OPERATIONS.includes(op.operationId)).map(what),
      'rows named public',
    ).toEqual([]);
    // The public operations answer an anonymous caller; every operation that refuses one has a row.
    expect(
      PUBLIC_OPERATIONS.filter((id) => !documented.some((op) => op.operationId === id)),
      'PUBLIC_OPERATIONS entries not documented',
    ).toEqual([]);
    expect(
      PUBLIC_OPERATIONS.filter((id) => refusesAnonymous.has(id)),
      'PUBLIC_OPERATIONS entries that refuse an anonymous caller',
    ).toEqual([]);
    expect([...refusesAnonymous].filter((id) => !rows.has(id))).toEqual([]);
  });

  it('names only documented operations, each once, at their documented path', () => {
    const rows = securityTable(operations(t)).rows;
    const documented = new Map(documentedOperations().map((op) => [op.operationId, op]));
    for (const row of rows) {
      const doc = documented.get(row.operationId);
      expect(doc, row.operationId).toBeDefined();
      expect(row.method, row.operationId).toBe(doc!.method);
      expect(row.url, row.operationId).toMatch(pathPattern(doc!.path));
    }
    const ids = rows.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
