// JSON nested deeper than 32 levels is refused with 400 VALIDATION_ERROR before it is parsed or
// validated, on every route: a body nested thousands of levels deep (in `scopes`, whose uniqueItems
// check hashes every item recursively) used to overflow the stack and answer 500.
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrg, setPlan, signedInUser, type SignedInUser } from '../../test/factories.js';
import { json } from '../../test/harness.js';
import { t, useApp } from '../../test/fixtures/app.js';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from './validation.js';

let owner: SignedInUser;
let orgId: string;
useApp();
beforeAll(async () => {
  owner = await signedInUser(t, 'depth');
  orgId = (await createOrg(t, owner)).id;
  // Room for the keys these tests create.
  await setPlan(t, orgId, 'enterprise');
});

/** `levels` arrays, one inside the other, around a string. */
const arrays = (levels: number) => `${'['.repeat(levels)}"read"${']'.repeat(levels)}`;
/** `levels` objects, one inside the other. */
const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

const send = (url: string, raw: string, headers: Record<string, string> = {}) =>
  t.request({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers, ...owner.auth },
    payload: raw,
  });
/** The body is an object (level 1) whose `scopes` holds `levels - 1` nested arrays. */
const createKey = (levels: number) =>
  send(`/api/v1/organizations/${orgId}/api-keys`, `{"name":"deep","scopes":${arrays(levels - 1)}}`);

function expectTooDeep(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
  const body = json(res);
  expect(body).toEqual({
    success: false,
    error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: expect.any(String) },
  });
  expect(body.error.details).toMatch(/nested deeper than 32 levels/);
}

/** Refused by the route's schema, not by the depth check. */
function expectSchemaError(res: LightMyRequestResponse, field: string) {
  expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
  const body = json(res);
  expect(body.error.code).toBe('VALIDATION_ERROR');
  expect(body.error.details).not.toMatch(/nested/);
  expect(body.error.details).toContain(field);
}

describe('nested arrays (scopes on API key creation)', () => {
  it('33 levels answers 400 naming the nesting', async () => {
    expectTooDeep(await createKey(33));
  });

  it('32 levels passes to the schema, which refuses scopes', async () => {
    expectSchemaError(await createKey(32), 'scopes');
  });

  it('10,000 and 100,000 levels answer 400, not 500', async () => {
    expectTooDeep(await createKey(10_000));
    expectTooDeep(await createKey(100_000));
  });

  it('on the flat alias too', async () => {
    expectTooDeep(
      await send('/api/v1/api-keys', `{"organizationId":"${orgId}","name":"deep","scopes":${arrays(10_000)}}`),
    );
  });
});

describe('nested objects', () => {
  it('33 levels answers 400 naming the nesting, 32 reaches the schema, 10,000 answers 400', async () => {
    expectTooDeep(await send('/api/v1/auth/register', objects(33)));
    expectSchemaError(await send('/api/v1/auth/register', objects(32)), 'a');
    expectTooDeep(await send('/api/v1/auth/register', objects(10_000)));
  });

  it('mixed objects and arrays count together', async () => {
    const mixed = `${'{"a":['.repeat(17)}1${']}'.repeat(17)}`; // 34 levels
    expectTooDeep(await send('/api/v1/auth/register', mixed));
  });

  it('on any route that takes a body: a PATCH, an unauthenticated auth route, a route behind a permission check', async () => {
    expectTooDeep(
      await t.request({
        method: 'PATCH',
        url: '/api/v1/users/me',
        headers: { 'content-type': 'application/json', ...owner.auth },
        payload: `{"preferences":${objects(40)}}`,
      }),
    );
    expectTooDeep(
      await t.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        headers: { 'content-type': 'application/json' },
        payload: objects(10_000),
      }),
    );
    expectTooDeep(
      await send(`/api/v1/organizations/${orgId}/webhooks`, `{"url":"https://example.com/h","events":${arrays(50)}}`),
    );
  });
});

describe('brackets inside strings do not count', () => {
  it('a name of 1,000 brackets is an ordinary string', async () => {
    const res = await send(
      `/api/v1/organizations/${orgId}/api-keys`,
      JSON.stringify({ name: '[{'.repeat(500).slice(0, 100), scopes: [] }),
    );
    expect(res.statusCode, res.body).toBe(201);
    const many = await send(
      '/api/v1/auth/register',
      JSON.stringify({ email: 'x@example.com', password: 'Correct-Horse-9', fullName: '[[[{{{'.repeat(200) }),
    );
    expectSchemaError(many, 'fullName');
  });

  it('escaped quotes do not end a string early, and an escaped backslash does not keep it open', async () => {
    // "\"[[[[…" : the brackets are still inside the string.
    const quoted = `{"name":${JSON.stringify(`"${'['.repeat(60)}`)},"scopes":[]}`;
    expect(quoted).toContain('\\"[[[[');
    expect((await send(`/api/v1/organizations/${orgId}/api-keys`, quoted)).statusCode).toBe(201);
    // "ends with a backslash\\" : the string ends there, and the nesting after it counts.
    const endsInBackslash = `{"name":${JSON.stringify('x\\')},"scopes":${arrays(40)}}`;
    expect(endsInBackslash).toContain('\\\\"');
    expectTooDeep(await send(`/api/v1/organizations/${orgId}/api-keys`, endsInBackslash));
  });
});

describe('jsonNestingExceeds', () => {
  it('counts containers outside strings', () => {
    expect(MAX_JSON_DEPTH).toBe(32);
    expect(jsonNestingExceeds(arrays(32), 32)).toBe(false);
    expect(jsonNestingExceeds(arrays(33), 32)).toBe(true);
    expect(jsonNestingExceeds(objects(32), 32)).toBe(false);
    expect(jsonNestingExceeds(objects(33), 32)).toBe(true);
    // Siblings do not add up: depth, not count.
    expect(jsonNestingExceeds(`[${'[1],'.repeat(1000)}[1]]`, 2)).toBe(false);
    expect(jsonNestingExceeds(JSON.stringify({ a: '['.repeat(100) }), 1)).toBe(false);
    expect(jsonNestingExceeds(JSON.stringify({ a: `\\"${'['.repeat(100)}` }), 1)).toBe(false);
    expect(jsonNestingExceeds(`{"a":"\\\\",${'['.repeat(5)}`, 3)).toBe(true);
    expect(jsonNestingExceeds(`{"a":"\\\\\\"[[[[[["}`, 3)).toBe(false);
    // Malformed text is left to JSON.parse: an unterminated string, unbalanced brackets.
    expect(jsonNestingExceeds('{"a":"[[[[[[', 3)).toBe(false);
    expect(jsonNestingExceeds(']]]]]][[', 3)).toBe(false);
    expect(jsonNestingExceeds('', 3)).toBe(false);
  });

  it('scans a deep body without recursion', () => {
    expect(jsonNestingExceeds('['.repeat(5_000_000), 32)).toBe(true);
  });
});
