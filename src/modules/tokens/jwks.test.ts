// Signing keys and the JWKS document (docs/tokens.md), through HTTP: HS256 stays as it was and
// publishes no key; under ES256, EdDSA and RS256 the first start creates one key, stored encrypted,
// published at both JWKS paths (cacheable), naming itself in every token's `kid`, and an outside
// verifier checks the tokens with nothing but the JWKS. Forged tokens (node:crypto by hand) are
// refused: alg none, HS256 "signed" with the public key (algorithm confusion), an unknown kid, a
// stranger's signature under a real kid, an HS256 token under JWT_SECRET. The forgery with the real
// private key is the control: only the attack differs.
import { createPublicKey } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, getMe, signHs256 } from '../../../test/fixtures/auth.js';
import { signedInUser } from '../../../test/factories.js';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import {
  accessClaims,
  type Alg,
  ALGS,
  hmacJwt,
  privateKeyOf,
  signJwt,
  storedKeys,
  strangerKey,
} from '../../../test/jwt-forge.js';
import { expectError } from '../../../test/expect.js';

const PATHS = ['/.well-known/jwks.json', '/api/v1/.well-known/jwks.json'];

async function jwksOf(t: TestApp) {
  const bodies: string[] = [];
  for (const url of PATHS) {
    const res = await t.request({ method: 'GET', url });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    bodies.push(res.body);
  }
  expect(bodies[1]).toBe(bodies[0]);
  return JSON.parse(bodies[0]!) as { keys: Array<Record<string, string>> };
}

describe('HS256 (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('publishes no key and creates none; tokens are HS256 without kid and carry sub and amr', async () => {
    expect(await jwksOf(t)).toEqual({ keys: [] });
    expect(await storedKeys(t)).toEqual([]);
    const user = await signedInUser(t, 'hs');
    const { header, payload } = decodeJwt(user.accessToken);
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toMatchObject({ userId: user.userId, sub: user.userId, amr: ['pwd'], iss: 'tenantry' });
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
  });

  it('refuses a token of an asymmetric key, even one naming a kid', async () => {
    const user = await signedInUser(t, 'hs-asym');
    const claims = accessClaims(t, {
      userId: user.userId,
      email: user.email,
      sessionId: decodeJwt(user.accessToken).payload.sessionId as string,
    });
    // Control: the same claims under JWT_SECRET pass.
    expect((await getMe(t, signHs256(claims, t.deps.config.jwtSecret))).statusCode).toBe(200);
    const forged = signJwt('ES256', strangerKey('ES256'), { alg: 'ES256', kid: 'jwk_x', typ: 'JWT' }, claims);
    expectError(await getMe(t, forged), 401, 'AUTHENTICATION_ERROR');
  });

  it('refuses a JWKS path with a method other than GET, and the error is not cacheable', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/.well-known/jwks.json', payload: {} });
    expect(res.statusCode).toBe(404);
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe.each(ALGS)('%s', (alg: Alg) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { JWT_ALGORITHM: alg } });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A signed-in user and access claims like its token's, to forge with. */
  async function session(label: string) {
    const user = await signedInUser(t, label);
    const sessionId = decodeJwt(user.accessToken).payload.sessionId as string;
    return { user, claims: accessClaims(t, { userId: user.userId, email: user.email, sessionId }) };
  }

  it('the first start created one key, stored encrypted under ENCRYPTION_KEY', async () => {
    const keys = await storedKeys(t);
    expect(keys).toHaveLength(1);
    const [k] = keys;
    expect(k!.algorithm).toBe(alg);
    expect(k!.retiresAt).toBeNull();
    expect(k!.activeFrom.getTime()).toBe(k!.createdAt.getTime());
    expect(k!.privateKeyEnc).not.toMatch(/PRIVATE KEY|BEGIN/);
    expect(k!.privateKeyEnc.startsWith('v1.')).toBe(true);
    // It opens with ENCRYPTION_KEY, and the private key matches the published public key.
    const publicJwk = createPublicKey(privateKeyOf(t, k!)).export({ format: 'jwk' });
    expect({ ...k!.publicJwk }).toMatchObject(publicJwk);
  });

  it('publishes the key at both paths, served as is from memory, cacheable for 5 minutes', async () => {
    const [k] = await storedKeys(t);
    const jwks = await jwksOf(t);
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({
      kid: k!.id,
      alg,
      use: 'sig',
      kty: { ES256: 'EC', EdDSA: 'OKP', RS256: 'RSA' }[alg],
    });
    // A public key only: no private member of any key type.
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwks.keys[0]).not.toHaveProperty(member);
  });

  it('signs access tokens with the key, naming it; another service verifies them with the JWKS alone', async () => {
    const { user } = await session('signed');
    const [k] = await storedKeys(t);
    const { header, payload } = decodeJwt(user.accessToken);
    expect(header).toEqual({ alg, kid: k!.id, typ: 'JWT' });
    const verified = await jwtVerify(user.accessToken, createLocalJWKSet(await jwksOf(t)), {
      issuer: 'tenantry',
      currentDate: t.clock.now(),
    });
    expect(verified.payload).toEqual(payload);
    expect(verified.payload).toMatchObject({ sub: user.userId, userId: user.userId, email: user.email, amr: ['pwd'] });
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
    // The refresh token stays HS256 under JWT_REFRESH_SECRET, and refreshing signs with the key again.
    expect(decodeJwt(user.refreshToken).header).toEqual({ alg: 'HS256', typ: 'JWT' });
    const refreshed = await t.request({
      method: 'POST',
      url: '/api/v1/auth/refresh',
      payload: { refreshToken: user.refreshToken },
    });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(decodeJwt(json(refreshed).accessToken as string).header).toEqual({ alg, kid: k!.id, typ: 'JWT' });
  });

  it('accepts a token made by hand with the stored private key (the control of the forgeries below)', async () => {
    const { claims } = await session('control');
    const [k] = await storedKeys(t);
    const res = await getMe(t, signJwt(alg, privateKeyOf(t, k!), { alg, kid: k!.id, typ: 'JWT' }, claims));
    expect(res.statusCode, res.body).toBe(200);
  });

  it("refuses alg none, with or without the key's kid and with or without a signature: 401", async () => {
    const { claims } = await session('none');
    const [k] = await storedKeys(t);
    const real = signJwt(alg, privateKeyOf(t, k!), { alg, kid: k!.id, typ: 'JWT' }, claims);
    const signature = real.split('.')[2]!;
    for (const none of ['none', 'None', 'NONE']) {
      for (const header of [
        { alg: none, kid: k!.id, typ: 'JWT' },
        { alg: none, typ: 'JWT' },
      ]) {
        const unsigned = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${real.split('.')[1]}.`;
        expectError(await getMe(t, unsigned), 401, 'AUTHENTICATION_ERROR');
        expectError(await getMe(t, `${unsigned}${signature}`), 401, 'AUTHENTICATION_ERROR');
      }
    }
  });

  it('refuses HS256 signed with the public key as the secret (algorithm confusion): 401', async () => {
    const { claims } = await session('confusion');
    const [k] = await storedKeys(t);
    const pub = createPublicKey(privateKeyOf(t, k!));
    const secrets = [
      pub.export({ type: 'spki', format: 'pem' }) as string,
      pub.export({ type: 'spki', format: 'der' }),
      JSON.stringify(k!.publicJwk),
      JSON.stringify(await jwksOf(t)),
      ...(alg === 'RS256' ? [pub.export({ type: 'pkcs1', format: 'pem' }) as string] : []),
    ];
    for (const secret of secrets) {
      for (const header of [
        { alg: 'HS256', kid: k!.id, typ: 'JWT' },
        { alg: 'HS256', typ: 'JWT' },
      ]) {
        expectError(await getMe(t, hmacJwt(header, claims, secret)), 401, 'AUTHENTICATION_ERROR');
      }
    }
    // Nor does JWT_SECRET sign access tokens any more.
    expectError(await getMe(t, signHs256(claims, t.deps.config.jwtSecret)), 401, 'AUTHENTICATION_ERROR');
    expectError(
      await getMe(t, hmacJwt({ alg: 'HS256', kid: k!.id, typ: 'JWT' }, claims, t.deps.config.jwtSecret)),
      401,
      'AUTHENTICATION_ERROR',
    );
  });

  it("refuses an unknown kid, a stranger's signature under the real kid, and another algorithm in the header: 401", async () => {
    const { claims } = await session('kid');
    const [k] = await storedKeys(t);
    const stranger = strangerKey(alg);
    expectError(
      await getMe(t, signJwt(alg, stranger, { alg, kid: 'jwk_01jq3bn9zs0a7awy2w2vc6bte1', typ: 'JWT' }, claims)),
      401,
      'AUTHENTICATION_ERROR',
    );
    expectError(await getMe(t, signJwt(alg, stranger, { alg, typ: 'JWT' }, claims)), 401, 'AUTHENTICATION_ERROR');
    expectError(
      await getMe(t, signJwt(alg, stranger, { alg, kid: k!.id, typ: 'JWT' }, claims)),
      401,
      'AUTHENTICATION_ERROR',
    );
    // The real key's signature, but the header claims another asymmetric algorithm.
    const other = ALGS.find((a) => a !== alg)!;
    expectError(
      await getMe(t, signJwt(alg, privateKeyOf(t, k!), { alg: other, kid: k!.id, typ: 'JWT' }, claims)),
      401,
      'AUTHENTICATION_ERROR',
    );
    // The real key, another issuer; and an expired token.
    expectError(
      await getMe(
        t,
        signJwt(alg, privateKeyOf(t, k!), { alg, kid: k!.id, typ: 'JWT' }, { ...claims, iss: 'someone-else' }),
      ),
      401,
      'AUTHENTICATION_ERROR',
    );
    const iat = (claims.iat as number) - 900;
    expectError(
      await getMe(
        t,
        signJwt(alg, privateKeyOf(t, k!), { alg, kid: k!.id, typ: 'JWT' }, { ...claims, iat, exp: iat + 900 }),
      ),
      401,
      'AUTHENTICATION_ERROR',
    );
  });

  it('refuses a token edited after signing, even once the original was accepted (the verified-token cache is by exact text)', async () => {
    const { user } = await session('edited');
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
    const [h, p, s] = user.accessToken.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
    const edited = `${h}.${Buffer.from(JSON.stringify({ ...payload, email: 'eve@example.com' })).toString('base64url')}.${s}`;
    expectError(await getMe(t, edited), 401, 'AUTHENTICATION_ERROR');
    // The accepted token still expires on the app's clock.
    t.clock.advance(15 * 60 * 1000);
    expectError(await getMe(t, user.accessToken), 401, 'AUTHENTICATION_ERROR');
  });
});
