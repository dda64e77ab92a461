// Key rotation across instances (docs/tokens.md#rotation), through HTTP and the admin command: two
// instances on one database and one clock. `rotate-signing-key` publishes the new key at once (every
// instance shows it within a minute), signs with it from --delay-s later on every instance, keeps the
// retired key verifying and published until its last token has expired, then refuses it (a token
// made with it afterwards, say with a leaked private key, is refused though well signed) and deletes
// it at the next rotation. A key rotated without delay elsewhere is learnt on the first token naming
// it, at most once a second. Instances starting together on an empty table create one key.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, getMe } from '../../../test/fixtures/auth.js';
import { login, signedInUser } from '../../../test/factories.js';
import { createTestApp, json, queryRows, type TestApp } from '../../../test/harness.js';
import { accessClaims, privateKeyOf, signJwt, storedKeys } from '../../../test/jwt-forge.js';
import { parseArgs, UsageError } from '../../admin/args.js';
import { runCommand } from '../../admin/run.js';
import type { Io } from '../../admin/users.js';
import { expectError } from '../../../test/expect.js';

const ES256 = { JWT_ALGORITHM: 'ES256' };
const MIN = 60_000;
const apps: TestApp[] = [];
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  a = await createTestApp({ env: ES256 });
  b = await createTestApp({ env: ES256, database: a.database, clock: a.clock });
  apps.push(a, b);
});
afterAll(async () => {
  for (const app of apps.reverse()) await app.close();
});

async function admin(app: TestApp, argv: string[]) {
  const parsed = parseArgs(argv);
  if (parsed.command === 'help') throw new Error('help');
  const lines: string[] = [];
  const io: Io = { interactive: false, out: (l) => lines.push(l), secret: async () => '' };
  const code = await runCommand(app.deps, parsed.command, parsed.flags, io);
  return { code, lines };
}

const kidsOf = async (app: TestApp) => {
  const res = await app.request({ method: 'GET', url: '/.well-known/jwks.json' });
  expect(res.statusCode).toBe(200);
  return (json(res).keys as Array<{ kid: string }>).map((k) => k.kid).sort();
};
const kidOf = (token: string) => decodeJwt(token).header.kid as string;

describe('rotation with a delay, seen from two instances', () => {
  it('publishes at once, signs from the delay on, keeps the retired key until its tokens expire, then refuses and deletes it', async () => {
    const [k1] = await storedKeys(a);
    expect(await storedKeys(b)).toHaveLength(1); // the second start made no key of its own
    const user = await signedInUser(a, 'rotating');
    const early = user.accessToken;
    expect(kidOf(early)).toBe(k1!.id);
    expect((await getMe(b, early)).statusCode).toBe(200);

    const rotated = await admin(a, ['rotate-signing-key', '--delay-s', '600']);
    expect(rotated.code).toBe(0);
    const keys = await storedKeys(a);
    expect(keys).toHaveLength(2);
    const k2 = keys[1]!;
    const rotatedAt = a.clock.now().getTime();
    expect(k2.activeFrom.getTime()).toBe(rotatedAt + 600_000);
    expect(keys[0]!.retiresAt?.getTime()).toBe(rotatedAt + 600_000);
    expect(rotated.lines.join('\n')).toContain(k2.id);
    expect(rotated.lines.join('\n')).toContain(
      `key ${k1!.id} signs until ${new Date(rotatedAt + 600_000).toISOString()}`,
    );

    // Within a minute every instance publishes the new key; the old one still signs.
    a.clock.advance(MIN);
    expect(await kidsOf(a)).toEqual([k1!.id, k2.id].sort());
    expect(await kidsOf(b)).toEqual([k1!.id, k2.id].sort());
    expect(kidOf((await login(a, user.email)).accessToken)).toBe(k1!.id);
    expect(kidOf((await login(b, user.email)).accessToken)).toBe(k1!.id);

    // From the delay on, both instances sign with the new key; each verifies the other's tokens.
    a.clock.advance(9 * MIN);
    const fromA = (await login(a, user.email)).accessToken;
    const fromB = (await login(b, user.email)).accessToken;
    expect([kidOf(fromA), kidOf(fromB)]).toEqual([k2.id, k2.id]);
    expect((await getMe(b, fromA)).statusCode).toBe(200);
    expect((await getMe(a, fromB)).statusCode).toBe(200);
    // The first token, signed by the retired key 10 minutes ago, still verifies: it has 5 minutes left.
    expect((await getMe(b, early)).statusCode).toBe(200);
    expect(await kidsOf(b)).toEqual([k1!.id, k2.id].sort());

    // A forgery with the retired key, fresh claims: accepted while the key's tokens may still live…
    const claims = () =>
      accessClaims(a, {
        userId: user.userId,
        email: user.email,
        sessionId: decodeJwt(fromA).payload.sessionId as string,
      });
    const withK1 = () =>
      signJwt('ES256', privateKeyOf(a, keys[0]!), { alg: 'ES256', kid: k1!.id, typ: 'JWT' }, claims());
    expect((await getMe(b, withK1())).statusCode).toBe(200);
    // …and refused once the last token it could have signed has expired (15 minutes, plus the minute
    // an instance may take to learn of the rotation): retired and expired, however well signed.
    a.clock.advance(16 * MIN);
    for (const app of [a, b]) {
      expectError(await getMe(app, withK1()), 401, 'AUTHENTICATION_ERROR');
      expect(await kidsOf(app)).toEqual([k2.id]);
    }
    // Control: the same forgery with the current key passes.
    const withK2 = signJwt('ES256', privateKeyOf(a, k2), { alg: 'ES256', kid: k2.id, typ: 'JWT' }, claims());
    expect((await getMe(b, withK2)).statusCode).toBe(200);

    // The next rotation deletes the spent key: its private key is gone from the database.
    const again = await admin(b, ['rotate-signing-key']);
    expect(again.code).toBe(0);
    expect(again.lines.join('\n')).toContain(`deleted 1 key(s) whose tokens have all expired: ${k1!.id}`);
    expect((await storedKeys(a)).map((k) => k.id)).not.toContain(k1!.id);
  });
});

describe('rotation without a delay', () => {
  it('another instance learns the new key from the first token naming it, at most once a second', async () => {
    const user = await signedInUser(a, 'no-delay');
    // b reads the keys now; a read them earlier, so its next signature reads them again.
    a.clock.advance(MIN);
    await kidsOf(b);
    expect((await admin(a, ['rotate-signing-key', '--delay-s', '0'])).code).toBe(0);
    const k3 = (await storedKeys(a)).at(-1)!;
    const token = (await login(a, user.email)).accessToken;
    expect(kidOf(token)).toBe(k3.id);
    // b's view is fresh and lacks k3: the unknown kid makes it read the keys again.
    expect((await getMe(b, token)).statusCode).toBe(200);

    // A third instance (starting now) signs with a key b has not read; b just read the keys, so within
    // the same second it refuses rather than reading again…
    expect((await admin(a, ['rotate-signing-key', '--delay-s', '0'])).code).toBe(0);
    const c = await createTestApp({ env: ES256, database: a.database, clock: a.clock });
    apps.push(c);
    const k4 = (await storedKeys(a)).at(-1)!;
    const fromC = (await login(c, user.email)).accessToken;
    expect(kidOf(fromC)).toBe(k4.id);
    expectError(await getMe(b, fromC), 401, 'AUTHENTICATION_ERROR');
    // …and a second later it reads them and accepts.
    a.clock.advance(1000);
    expect((await getMe(b, fromC)).statusCode).toBe(200);
  });

  it('warns that services caching the JWKS may refuse the new key for a while', async () => {
    const out = await admin(a, ['rotate-signing-key', '--delay-s', '30']);
    expect(out.code).toBe(0);
    expect(out.lines.join('\n')).toMatch(/--delay-s 30 is less than 360/);
  });
});

describe('the command line and the other algorithms', () => {
  it('refuses a delay that is not a whole number of seconds, and changes nothing', async () => {
    const before = await storedKeys(a);
    for (const bad of ['-1', '1.5', 'ten', '2592001']) {
      await expect(admin(a, ['rotate-signing-key', '--delay-s', bad])).rejects.toThrow(UsageError);
    }
    expect(() => parseArgs(['rotate-signing-key', '--delay'])).toThrow(UsageError);
    expect(await storedKeys(a)).toEqual(before);
  });

  it('under HS256 there is no key to rotate: exit 1, nothing stored', async () => {
    const hs = await createTestApp();
    apps.push(hs);
    const out = await admin(hs, ['rotate-signing-key']);
    expect(out.code).toBe(1);
    expect(out.lines.join('\n')).toMatch(/HS256/);
    expect(await storedKeys(hs)).toEqual([]);
  });

  it('changing JWT_ALGORITHM retires the old keys at once: their tokens verify until they expire', async () => {
    const db = await createTestApp({ env: ES256 });
    apps.push(db);
    const user = await signedInUser(db, 'switch');
    const [es] = await storedKeys(db);
    const ed = await createTestApp({ env: { JWT_ALGORITHM: 'EdDSA' }, database: db.database, clock: db.clock });
    apps.push(ed);
    const keys = await storedKeys(ed);
    expect(keys.map((k) => k.algorithm)).toEqual(['ES256', 'EdDSA']);
    expect(keys[0]!.retiresAt?.getTime()).toBe(db.clock.now().getTime());
    expect(kidOf((await login(ed, user.email)).accessToken)).toBe(keys[1]!.id);
    expect((await getMe(ed, user.accessToken)).statusCode).toBe(200);
    expect((await kidsOf(ed)).sort()).toEqual([es!.id, keys[1]!.id].sort());
    db.clock.advance(16 * MIN);
    expectError(await getMe(ed, user.accessToken), 401, 'AUTHENTICATION_ERROR');
    expect(await kidsOf(ed)).toEqual([keys[1]!.id]);
  });
});

describe('first starts', () => {
  // Meaningful on PostgreSQL, where the starts run in parallel; PGlite's one connection serializes them.
  it('instances starting together on an empty key table create one key', async () => {
    const first = await createTestApp();
    apps.push(first);
    await first.deps.db.execute(sql`delete from signing_keys`);
    const started = await Promise.all(
      Array.from({ length: 4 }, () => createTestApp({ env: ES256, database: first.database, clock: first.clock })),
    );
    apps.push(...started);
    const rows = await queryRows(first, sql`select id from signing_keys`);
    expect(rows).toHaveLength(1);
    const user = await signedInUser(started[0]!, 'together');
    for (const s of started) expect((await getMe(s, user.accessToken)).statusCode).toBe(200);
  });

  it('rotate-encryption-key re-encrypts the signing keys: an instance with only the new ENCRYPTION_KEY signs', async () => {
    const OLD = '11'.repeat(32);
    const NEW = '22'.repeat(32);
    const old = await createTestApp({ env: { ...ES256, ENCRYPTION_KEY: OLD } });
    apps.push(old);
    const user = await signedInUser(old, 'reencrypt');
    const both = await createTestApp({
      env: { ...ES256, ENCRYPTION_KEY: `${NEW},${OLD}` },
      database: old.database,
      clock: old.clock,
    });
    apps.push(both);
    const out = await admin(both, ['rotate-encryption-key']);
    expect(out.code).toBe(0);
    expect(out.lines.join('\n')).toContain('access-token signing keys: 1 re-encrypted');
    const fresh = await createTestApp({
      env: { ...ES256, ENCRYPTION_KEY: NEW },
      database: old.database,
      clock: old.clock,
    });
    apps.push(fresh);
    const res = await fresh.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: user.email, password: user.password },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await getMe(old, json(res).accessToken as string)).statusCode).toBe(200);
  });

  it('an instance whose ENCRYPTION_KEY cannot open the signing key answers 500 naming ENCRYPTION_KEY, not a token', async () => {
    const other = await createTestApp({
      env: { ...ES256, ENCRYPTION_KEY: '33'.repeat(32) },
      database: a.database,
      clock: a.clock,
    });
    apps.push(other);
    const user = await signedInUser(a, 'unreadable');
    const res = await other.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: user.email, password: user.password },
    });
    const err = expectError(res, 500, 'INTERNAL_ERROR');
    expect(err.details).toMatch(/ENCRYPTION_KEY/);
  });
});
