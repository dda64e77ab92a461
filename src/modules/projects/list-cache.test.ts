// GET …/projects reads its pages through an in-process cache (src/modules/projects/list-cache.ts).
// Every project write must be seen at once, on every instance: with Redis (TEST_REDIS_URL) the list
// is read on instance B (so B holds its pages cached), the projects are changed on instance A on the
// same database, and B's very next read must show the change. Without Redis there is one instance
// (the service's documented limit) and the same scenarios run on it.
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrg, setPlan, signedInUser, type SignedInUser } from '../../../test/factories.js';
import { json, onRedis, type TestApp } from '../../../test/harness.js';
import { a, b, useTwoInstances } from '../../../test/fixtures/instances.js';

useTwoInstances();

let owner: SignedInUser;
let orgId: string;
let otherOrgId: string;
let key: Record<string, string>;

beforeAll(async () => {
  owner = await signedInUser(a, 'list-cache');
  orgId = (await createOrg(a, owner)).id;
  otherOrgId = (await createOrg(a, owner)).id;
  await setPlan(a, orgId, 'pro');
  const res = await a.request({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/api-keys`,
    headers: owner.auth,
    payload: { name: 'reader', scopes: ['read:projects'] },
  });
  expect(res.statusCode, res.body).toBe(201);
  key = { 'x-api-key': json(res).plainKey as string };
}, 60_000);

/** A page of the list on an instance, read twice (with a key, then as the owner), so later answers come from its cache. */
async function listOn(app: TestApp, query = '', org = orgId) {
  let body: Record<string, unknown> = {};
  for (const headers of org === orgId ? [key, owner.auth] : [owner.auth, owner.auth]) {
    const res = await app.request({ method: 'GET', url: `/api/v1/organizations/${org}/projects${query}`, headers });
    expect(res.statusCode, res.body).toBe(200);
    body = json(res);
  }
  return body as { data: Array<{ id: string; name: string }>; total: number; hasMore: boolean };
}

async function onA(method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) {
  const res = await a.request({
    method,
    url: `/api/v1/organizations/${orgId}/projects${url}`,
    headers: owner.auth,
    ...(payload ? { payload } : {}),
  });
  expect(res.statusCode, res.body).toBe(method === 'POST' ? 201 : 200);
  return json(res);
}

describe(`the project list cache (${onRedis ? 'two instances sharing Redis' : 'one instance'})`, () => {
  it('shows a project created, renamed and deleted elsewhere on the very next read', async () => {
    expect((await listOn(b)).total).toBe(0);

    const created = await onA('POST', '', { name: 'First' });
    let list = await listOn(b);
    expect(list.total).toBe(1);
    expect(list.data.map((p) => p.name)).toEqual(['First']);

    await onA('PATCH', `/${created.id as string}`, { name: 'Renamed' });
    list = await listOn(b);
    expect(list.data.map((p) => p.name)).toEqual(['Renamed']);

    await onA('DELETE', `/${created.id as string}`);
    list = await listOn(b);
    expect(list.total).toBe(0);
    expect(list.data).toEqual([]);
  });

  it('moves every cached page of the organization on, and no other organization', async () => {
    for (const name of ['P1', 'P2', 'P3']) await onA('POST', '', { name });
    const other = await a.request({
      method: 'POST',
      url: `/api/v1/organizations/${otherOrgId}/projects`,
      headers: owner.auth,
      payload: { name: 'Elsewhere' },
    });
    expect(other.statusCode, other.body).toBe(201);
    expect((await listOn(b, '?page=2&pageSize=2')).data.map((p) => p.name)).toEqual(['P1']);
    expect((await listOn(b, '?page=1&pageSize=2')).data.map((p) => p.name)).toEqual(['P3', 'P2']);
    expect((await listOn(b, '', otherOrgId)).data.map((p) => p.name)).toEqual(['Elsewhere']);

    await onA('POST', '', { name: 'P4' });
    const page1 = await listOn(b, '?page=1&pageSize=2');
    expect(page1.data.map((p) => p.name)).toEqual(['P4', 'P3']);
    expect(page1.total).toBe(4);
    const page2 = await listOn(b, '?page=2&pageSize=2');
    expect(page2.data.map((p) => p.name)).toEqual(['P2', 'P1']);
    expect(page2.hasMore).toBe(false);
    expect((await listOn(b, '', otherOrgId)).total).toBe(1);
  });

  it('a refused write changes nothing and the list stays as it was', async () => {
    const before = await listOn(b);
    const res = await a.request({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/projects`,
      headers: owner.auth,
      payload: { name: '   ' },
    });
    expect(res.statusCode).toBe(400);
    expect(await listOn(b)).toEqual(before);
  });
});
