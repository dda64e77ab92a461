// Two-factor secrets and backup codes across a change of ENCRYPTION_KEY: an account enables
// two-factor on an app whose key is A; the app restarted on the same database with another key list
// then signs it in. A secret no listed key opens fails the sign-in clearly, naming ENCRYPTION_KEY;
// listing the old key after the new one ("B,A") keeps the secret and the backup codes working.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { PASSWORD } from '../../../test/factories.js';
import { twoFactorUser } from '../../../test/fixtures/auth.js';
import { totpCode } from '../../../test/totp.js';
import { expectError } from '../../../test/expect.js';

const A = randomBytes(32).toString('hex');
const B = randomBytes(32).toString('hex');

let underA: TestApp;
let onlyB: TestApp;
let bThenA: TestApp;
beforeAll(async () => {
  underA = await createTestApp({ env: { ENCRYPTION_KEY: A } });
  onlyB = await createTestApp({ database: underA.database, clock: underA.clock, env: { ENCRYPTION_KEY: B } });
  bThenA = await createTestApp({
    database: underA.database,
    clock: underA.clock,
    env: { ENCRYPTION_KEY: `${B},${A}` },
  });
});
afterAll(async () => {
  await bThenA?.close();
  await onlyB?.close();
  await underA?.close();
});

const twoFactorUnderA = (label: string) => twoFactorUser(underA, label);

const login = (app: TestApp, email: string, twoFactorCode: string) =>
  app.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: PASSWORD, twoFactorCode } });

describe('two-factor across a change of ENCRYPTION_KEY', () => {
  it('with only a new key, a TOTP sign-in fails clearly, naming ENCRYPTION_KEY, and counts as no failure', async () => {
    const user = await twoFactorUnderA('enc-only-b');
    const res = await login(onlyB, user.email, totpCode(user.secret, onlyB.clock.now()));
    const error = expectError(res, 500, 'INTERNAL_ERROR');
    expect(error.details).toContain('ENCRYPTION_KEY');
    // The failure was the service's, not the user's: five more tries do not lock the account.
    for (let i = 0; i < 5; i++)
      expect((await login(onlyB, user.email, totpCode(user.secret, onlyB.clock.now()))).statusCode).toBe(500);
    underA.clock.advance(30_000);
    expect((await login(bThenA, user.email, totpCode(user.secret, bThenA.clock.now()))).statusCode).toBe(200);
  });

  it('with the new key first and the old one after it, the secret and the backup codes still sign in', async () => {
    const user = await twoFactorUnderA('enc-b-then-a');
    expect((await login(bThenA, user.email, totpCode(user.secret, bThenA.clock.now()))).statusCode).toBe(200);
    expect((await login(bThenA, user.email, user.backupCodes[0]!)).statusCode).toBe(200);
    // Backup codes are keyed: under a key that is not listed they match nothing.
    expectError(await login(onlyB, user.email, user.backupCodes[1]!), 401, 'AUTHENTICATION_ERROR');
  });
});
