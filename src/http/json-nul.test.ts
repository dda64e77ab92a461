// A NUL character (`\u0000`) in any string of a JSON body, value or key, at any depth, answers 400
// VALIDATION_ERROR on every route, and nothing is written: PostgreSQL text cannot hold it, so it
// used to reach the database and answer 500 (custom event data, a profile's name). The literal
// text `\u0000` (an escaped backslash before it) is ordinary text and passes.
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createOrg,
  PASSWORD,
  rowsOf,
  setPlan,
  signedInUser,
  uniqueEmail,
  type SignedInUser,
} from '../../test/factories.js';
import { json } from '../../test/harness.js';
import { t, useApp } from '../../test/fixtures/app.js';
import { footprint } from '../../test/fixtures/publish.js';

let owner: SignedInUser;
let orgId: string;
useApp();
beforeAll(async () => {
  owner = await signedInUser(t, 'nul');
  orgId = (await createOrg(t, owner)).id;
  await setPlan(t, orgId, 'enterprise');
});

/** Sends raw JSON text, so the escape reaches the server exactly as written here. */
const send = (method: 'POST' | 'PATCH', url: string, raw: string, auth = true) =>
  t.request({
    method,
    url,
    headers: { 'content-type': 'application/json', ...(auth ? owner.auth : {}) },
    payload: raw,
  });
const publishRaw = (data: string) =>
  send('POST', `/api/v1/organizations/${orgId}/events`, `{"type":"order.shipped","data":${data}}`);

function expectNulRefused(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
  expect(json(res)).toEqual({
    success: false,
    error: {
      code: 'VALIDATION_ERROR',
      message: 'Invalid request body',
      details: expect.stringMatching(/NUL character/),
    },
  });
}

const usersWithEmail = async (email: string) =>
  rowsOf(await t.deps.db.execute(sql`select id from users where lower(email) = ${email.toLowerCase()}`)).length;

describe('a \\u0000 in a JSON body', () => {
  it.each([
    ['a value', '{"note":"gift\\u0000wrap"}'],
    ['a value nested in arrays and objects', '{"lines":[{"sku":"A","tags":[["x","y\\u0000"]]}]}'],
    ['a key', '{"meta":{"k\\u0000ey":1}}'],
    ['a string made of it alone', '{"note":"\\u0000"}'],
    ['after an escaped quote and backslash', '{"note":"say \\"hi\\" \\\\\\u0000"}'],
  ])('custom event data with it in %s answers 400 and stores nothing', async (_where, data) => {
    const before = await footprint(t, orgId);
    expectNulRefused(await publishRaw(data));
    expect(await footprint(t, orgId)).toEqual(before);
  });

  it('registering with it in the name answers 400 and creates no account', async () => {
    const email = uniqueEmail('nul-register');
    expectNulRefused(
      await send(
        'POST',
        '/api/v1/auth/register',
        JSON.stringify({ email, password: PASSWORD, fullName: 'Ann\u0000Lee' }),
        false,
      ),
    );
    expect(await usersWithEmail(email)).toBe(0);
  });

  it('a profile update with it answers 400 and changes nothing', async () => {
    const before = json(await t.request({ method: 'GET', url: '/api/v1/users/me', headers: owner.auth })).data;
    expectNulRefused(await send('PATCH', '/api/v1/users/me', '{"fullName":"Ann\\u0000"}'));
    expect(json(await t.request({ method: 'GET', url: '/api/v1/users/me', headers: owner.auth })).data).toEqual(before);
  });

  it('a key the schema does not know is refused for the NUL as well, before the schema looks', async () => {
    expectNulRefused(
      await send('POST', '/api/v1/auth/login', '{"email":"a@example.com","password":"x","\\u0000":1}', false),
    );
  });
});

describe('what is not a NUL passes', () => {
  it('the literal text \\u0000 (backslash escaped) is stored and published', async () => {
    const before = await footprint(t, orgId);
    // JSON `"\\u0000"` is the six characters \u0000.
    const res = await publishRaw('{"note":"C:\\\\u0000","k\\\\u0000":"\\\\\\\\u0000"}');
    expect(res.statusCode, res.body).toBe(201);
    expect((await footprint(t, orgId)).events).toBe(before.events + 1);
  });

  it('other escapes of control characters pass', async () => {
    const res = await publishRaw('{"note":"tab\\tline\\nbell\\u0007 \\u0001"}');
    expect(res.statusCode, res.body).toBe(201);
  });
});
