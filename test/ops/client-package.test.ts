// @tenantry/client installed as a team outside the repository installs it: from the packed tarball
// (`npm pack` in client/) and from the folder's path, each into a scratch project in the system's
// temporary directory, then imported by plain Node.js there and used against a running app:
// createClient signs in and reads /users/me, verifyAccessToken checks the token against the app's
// published keys. The scratch projects get their two dependencies (jose, openapi-fetch) from the npm
// registry, or npm's cache when it has them.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../harness.js';
import { signedInUser } from '../factories.js';
import { ROOT } from '../platform/process-helpers.js';

const CLIENT = path.join(ROOT, 'client');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-client-'));
let t: TestApp;
let baseUrl: string;
let user: { email: string; password: string; userId: string };

beforeAll(async () => {
  // verifyAccessToken checks `exp` against the real clock, and needs an asymmetric key (JWKS).
  t = await createTestApp({ env: { JWT_ALGORITHM: 'ES256' }, clock: new FakeClock(Date.now()) });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  user = await signedInUser(t, 'client-package');
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

const USE = `
import { createClient, verifyAccessToken } from '@tenantry/client';
import { verifyWebhookSignature } from '@tenantry/client/webhooks';
const { BASE_URL: baseUrl, EMAIL: email, PASSWORD: password } = process.env;
const api = createClient({ baseUrl });
const login = await api.POST('/api/v1/auth/login', { body: { email, password } });
if (!login.data) throw new Error('login: ' + JSON.stringify(login.error));
const me = await createClient({ baseUrl, accessToken: login.data.accessToken }).GET('/api/v1/users/me');
const claims = await verifyAccessToken(login.data.accessToken, { baseUrl });
console.log(JSON.stringify({ me: me.data, claims, webhooks: typeof verifyWebhookSignature }));
`;

function npm(cwd: string, args: string[]) {
  const run = spawnSync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd,
    encoding: 'utf8',
    timeout: 240_000,
  });
  if (run.status !== 0) throw new Error(`npm ${args.join(' ')} failed:\n${run.stdout}${run.stderr}`);
  return run.stdout;
}

function scratchProject(name: string): string {
  const dir = path.join(scratch, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }),
  );
  fs.writeFileSync(path.join(dir, 'use.mjs'), USE);
  return dir;
}

// Asynchronous: the app answering it runs in this process.
async function use(dir: string) {
  const { stdout: out } = await promisify(execFile)(process.execPath, ['use.mjs'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', BASE_URL: baseUrl, EMAIL: user.email, PASSWORD: user.password },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(out) as { me: { id: string; email: string }; claims: { sub: string }; webhooks: string };
}

describe('@tenantry/client outside the repository', () => {
  it('installs from the packed tarball, which ships the built dist/, and works', { timeout: 300_000 }, async () => {
    const packs = path.join(scratch, 'packs');
    fs.mkdirSync(packs);
    npm(CLIENT, ['pack', '--pack-destination', packs]);
    const [tarball] = fs.readdirSync(packs);
    expect(tarball).toMatch(/^tenantry-client-.+\.tgz$/);
    const files = execFileSync('tar', ['-tzf', path.join(packs, tarball!)], { encoding: 'utf8' }).split('\n');
    for (const f of ['index.js', 'index.d.ts', 'webhooks.js', 'webhooks.d.ts'])
      expect(files).toContain(`package/dist/${f}`);

    const dir = scratchProject('from-tarball');
    npm(dir, ['install', path.join(packs, tarball!)]);
    const got = await use(dir);
    expect(got.me).toMatchObject({ id: user.userId, email: user.email });
    expect(got.claims.sub).toBe(user.userId);
    expect(got.webhooks).toBe('function');
  });

  it(
    'installs from the folder (npm install /path/to/client), built on install, and works',
    { timeout: 300_000 },
    async () => {
      // As on a fresh clone: nothing built beforehand.
      fs.rmSync(path.join(CLIENT, 'dist'), { recursive: true, force: true });
      const dir = scratchProject('from-path');
      npm(dir, ['install', CLIENT]);
      expect(fs.existsSync(path.join(CLIENT, 'dist', 'index.js'))).toBe(true);
      const got = await use(dir);
      expect(got.me).toMatchObject({ id: user.userId, email: user.email });
      expect(got.claims.sub).toBe(user.userId);
    },
  );
});
