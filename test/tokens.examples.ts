// docs/tokens.md's examples, run as written against a local instance listening on a port: the Node
// (jose), Python (PyJWT) and Go (standard library) programs are cut out of the page, and each must
// print the claims of a real access token, under ES256, EdDSA and RS256, and refuse (exit 1) a token
// edited after signing, alg none, HS256 signed with the public key or with JWT_SECRET, an unknown
// kid, a stranger's signature under the real kid and an expired token. And @tenantry/client's
// verifyAccessToken, the same way. Python and Go come from Debian (python3-jwt, golang-go; .ci/run
// installs them when missing, then runs `npm run test:examples`); a machine without them fails here.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidAccessTokenError, verifyAccessToken } from '../client/src/index.js';
import { FakeClock } from '../src/lib/clock.js';
import { decodeJwt, signHs256 } from './fixtures/auth.js';
import { addMember, createOrg, PASSWORD, signedInUser } from './factories.js';
import { createTestApp, json, type TestApp } from './harness.js';
import { type Alg, ALGS, hmacJwt, privateKeyOf, signJwt, storedKeys, strangerKey } from './jwt-forge.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const PYTHON = process.env.TENANTRY_TEST_PYTHON ?? (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const GO = process.env.TENANTRY_TEST_GO ?? 'go';

/** The code blocks of docs/tokens.md whose first line names a file (`// verify.mjs`, `# verify.py`). */
function examples(): Record<string, string> {
  const page = fs.readFileSync(path.join(ROOT, 'docs/tokens.md'), 'utf8');
  const out: Record<string, string> = {};
  for (const [, code] of page.matchAll(/```\w+\n([\s\S]*?)```/g)) {
    const name = /^(?:\/\/|#) (verify\.\w+)/.exec(code!)?.[1];
    if (name) out[name] = code!;
  }
  return out;
}

let nodeDir: string;
let otherDir: string;
/** Each example as a command line: the program, then its arguments before the token. */
const programs: Record<'node' | 'python' | 'go', [string, string[]]> = {} as never;

beforeAll(async () => {
  const code = examples();
  expect(Object.keys(code).sort()).toEqual(['verify.go', 'verify.mjs', 'verify.py']);
  // The Node example imports jose: it runs from under the repository's node_modules.
  nodeDir = fs.mkdtempSync(path.join(ROOT, 'node_modules', '.tokens-examples-'));
  otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-tokens-examples-'));
  for (const [name, text] of Object.entries(code))
    fs.writeFileSync(path.join(name.endsWith('.mjs') ? nodeDir : otherDir, name), text);
  programs.node = [process.execPath, [path.join(nodeDir, 'verify.mjs')]];
  programs.python = [PYTHON, [path.join(otherDir, 'verify.py')]];
  const binary = path.join(otherDir, 'verify-go');
  await run(GO, ['build', '-o', binary, path.join(otherDir, 'verify.go')], {
    env: {
      ...process.env,
      GOCACHE: path.join(os.tmpdir(), 'tenantry-go-cache'),
      GOPATH: path.join(otherDir, 'gopath'),
      GOFLAGS: '',
    },
  });
  programs.go = [binary, []];
}, 120_000);
afterAll(() => {
  fs.rmSync(nodeDir, { recursive: true, force: true });
  fs.rmSync(otherDir, { recursive: true, force: true });
});

async function verifyWith(which: keyof typeof programs, baseUrl: string, token: string) {
  const [file, args] = programs[which];
  try {
    const { stdout } = await run(file, [...args, token], {
      env: { ...process.env, TENANTRY_URL: baseUrl },
      timeout: 30_000,
    });
    return { code: 0, claims: JSON.parse(stdout) as Record<string, unknown>, stderr: '' };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, claims: null, stderr: e.stderr ?? String(err) };
  }
}

describe.each(ALGS)('%s', (alg: Alg) => {
  let t: TestApp;
  let baseUrl: string;
  let token: string;
  let forgeries: Record<string, string>;

  beforeAll(async () => {
    // The examples check `exp` against the real clock: the app runs on it.
    t = await createTestApp({
      env: { JWT_ALGORITHM: alg, APP_PERMISSIONS: 'invoices:approve' },
      clock: new FakeClock(Date.now()),
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const owner = await signedInUser(t, 'examples-owner');
    const org = await createOrg(t, owner);
    const user = await signedInUser(t, 'examples');
    await addMember(t, org.id, owner, user, 'admin');
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: user.email, password: PASSWORD, organizationId: org.id },
    });
    expect(res.statusCode, res.body).toBe(200);
    token = json(res).accessToken as string;

    const [k] = await storedKeys(t);
    const claims = decodeJwt(token).payload;
    const [h, p, s] = token.split('.');
    const pem = (await import('node:crypto'))
      .createPublicKey(privateKeyOf(t, k!))
      .export({ type: 'spki', format: 'pem' }) as string;
    const expired = { ...claims, iat: (claims.iat as number) - 3600, exp: (claims.iat as number) - 2700 };
    forgeries = {
      edited: `${h}.${Buffer.from(JSON.stringify({ ...claims, org_role: 'owner' })).toString('base64url')}.${s}`,
      'alg none': `${Buffer.from(JSON.stringify({ alg: 'none', kid: k!.id, typ: 'JWT' })).toString('base64url')}.${p}.`,
      'HS256 with the public key': hmacJwt({ alg: 'HS256', kid: k!.id, typ: 'JWT' }, claims, pem),
      'HS256 with JWT_SECRET': signHs256(claims, t.deps.config.jwtSecret),
      'unknown kid': signJwt(alg, strangerKey(alg), { alg, kid: 'jwk_unknown', typ: 'JWT' }, claims),
      "a stranger's signature under the real kid": signJwt(
        alg,
        strangerKey(alg),
        { alg, kid: k!.id, typ: 'JWT' },
        claims,
      ),
      expired: signJwt(alg, privateKeyOf(t, k!), { alg, kid: k!.id, typ: 'JWT' }, expired),
      'another issuer': signJwt(
        alg,
        privateKeyOf(t, k!),
        { alg, kid: k!.id, typ: 'JWT' },
        { ...claims, iss: 'someone-else' },
      ),
    };
    // Control: the forgery with the real key and fresh claims is accepted by the service itself.
    const control = signJwt(alg, privateKeyOf(t, k!), { alg, kid: k!.id, typ: 'JWT' }, claims);
    expect(
      (await t.request({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: `Bearer ${control}` } }))
        .statusCode,
    ).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  for (const which of ['node', 'python', 'go'] as const) {
    it(`the ${which} example prints the claims of a real token and refuses every forgery`, async () => {
      const ok = await verifyWith(which, baseUrl, token);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.claims).toEqual(decodeJwt(token).payload);
      expect(ok.claims).toMatchObject({
        iss: 'tenantry',
        org_role: 'admin',
        org_permissions: expect.arrayContaining(['invoices:approve']),
      });
      for (const [name, forged] of Object.entries(forgeries)) {
        const refused = await verifyWith(which, baseUrl, forged);
        expect(refused.code, `${which}, ${name}: ${JSON.stringify(refused.claims)}`).toBe(1);
        expect(refused.stderr).toMatch(/refused/);
      }
    }, 60_000);
  }

  it('@tenantry/client verifyAccessToken answers the claims, and refuses every forgery with InvalidAccessTokenError', async () => {
    const claims = await verifyAccessToken(token, { baseUrl });
    expect(claims).toEqual(decodeJwt(token).payload);
    expect(claims.org_permissions).toContain('invoices:approve');
    for (const [name, forged] of Object.entries(forgeries)) {
      await expect(verifyAccessToken(forged, { baseUrl: `${baseUrl}/` }), name).rejects.toBeInstanceOf(
        InvalidAccessTokenError,
      );
    }
    // The key set is fetched once and kept: a JWKS server in front of the app counts the fetches.
    let fetches = 0;
    const front = http.createServer((req, res) => {
      fetches++;
      void t
        .request({ method: 'GET', url: req.url ?? '/' })
        .then((r) => res.writeHead(r.statusCode, { 'content-type': 'application/json' }).end(r.body));
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
      for (let i = 0; i < 3; i++) expect((await verifyAccessToken(token, { baseUrl: frontUrl })).sub).toBe(claims.sub);
      expect(fetches).toBe(1);
    } finally {
      await new Promise((resolve) => front.close(resolve));
    }
  });
});
