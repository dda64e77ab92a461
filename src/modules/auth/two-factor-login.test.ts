// Two-factor authentication (docs/decisions.md, two-factor): login with a TOTP or backup code, replay
// and lockout, rerunning setup while enabled, and disable.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { PASSWORD } from '../../../test/factories.js';
import { getMe } from '../../../test/fixtures/auth.js';
import { totpCode, wrongCode } from '../../../test/totp.js';
import {
  account,
  enabledAccount,
  loginWith,
  MINUTE,
  nextStep,
  now,
  post,
  rowsOf,
  setup,
  sha256,
  t,
  useTwoFactorApp,
  WRONG_PASSWORD,
} from '../../../test/fixtures/two-factor.js';
import { backupCodes } from '../../db/tables/auth.js';
import { expectError } from '../../../test/expect.js';

/** A backup code's stored form as this product keys it (an HMAC under a key derived from ENCRYPTION_KEY). */
function keyedHash(userId: string, code: string): string {
  const codeKey = createHmac('sha256', t.deps.config.encryptionKey).update('tenantry backup codes v1').digest();
  return createHmac('sha256', codeKey).update(`${userId}:${code}`).digest('hex');
}

useTwoFactorApp();

describe('login with two-factor enabled', () => {
  it('asks for the code after a right password: 401 Two-factor code required, requiresTwoFactor: true', async () => {
    const user = await enabledAccount('login-ask');
    const res = await loginWith(user.email, PASSWORD);
    expect(res.statusCode, res.body).toBe(401);
    expect(json(res)).toEqual({
      success: false,
      error: { code: 'AUTHENTICATION_ERROR', message: 'Two-factor code required', details: expect.any(String) },
      requiresTwoFactor: true,
    });
    // A wrong password says nothing about two-factor.
    const wrong = await loginWith(user.email, WRONG_PASSWORD);
    expect(expectError(wrong, 401, 'AUTHENTICATION_ERROR').message).toBe('Invalid email or password');
    expect(json(wrong)).not.toHaveProperty('requiresTwoFactor');
  });

  it('signs in with a valid TOTP code; the same code again is refused (replay)', async () => {
    const user = await enabledAccount('login-totp');
    const code = totpCode(user.secret, now());
    const first = await loginWith(user.email, PASSWORD, code);
    expect(first.statusCode, first.body).toBe(200);
    expect(json(first).user.twoFactorEnabled).toBe(true);

    expectError(await loginWith(user.email, PASSWORD, code), 401, 'AUTHENTICATION_ERROR');
    // Still inside the code's window, 20 s later.
    t.clock.advance(20 * 1000);
    expectError(await loginWith(user.email, PASSWORD, code), 401, 'AUTHENTICATION_ERROR');

    nextStep();
    const next = await loginWith(user.email, PASSWORD, totpCode(user.secret, now()));
    expect(next.statusCode, next.body).toBe(200);
  });

  it('of parallel logins with one TOTP code, exactly one succeeds; likewise with one backup code', async () => {
    const user = await enabledAccount('login-race');
    const code = totpCode(user.secret, now());
    const totp = await Promise.all(Array.from({ length: 4 }, () => loginWith(user.email, PASSWORD, code)));
    expect(totp.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401]);
    // The three replays above count as failures; another account has its whole budget of checks.
    const other = await enabledAccount('login-race-backup');
    const backup = await Promise.all(
      Array.from({ length: 4 }, () => loginWith(other.email, PASSWORD, other.backupCodes[0])),
    );
    expect(backup.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401]);
  });

  it('refuses the code that enabled two-factor (it was accepted once already)', async () => {
    const user = await account('login-verify-code');
    const s = await setup(user.accessToken);
    const code = totpCode(s.secret, now());
    expect((await post('/auth/two-factor/verify', { code }, user.accessToken)).statusCode).toBe(200);
    expectError(await loginWith(user.email, PASSWORD, code), 401, 'AUTHENTICATION_ERROR');
  });

  it('accepts codes of the adjacent steps at login and refuses codes two steps away', async () => {
    const user = await enabledAccount('login-window');
    // Two steps past the one used to verify, so the previous step's code was never used.
    nextStep();
    expectError(await loginWith(user.email, PASSWORD, totpCode(user.secret, now(), 2)), 401, 'AUTHENTICATION_ERROR');
    expectError(await loginWith(user.email, PASSWORD, totpCode(user.secret, now(), -2)), 401, 'AUTHENTICATION_ERROR');
    const prev = await loginWith(user.email, PASSWORD, totpCode(user.secret, now(), -1));
    expect(prev.statusCode, prev.body).toBe(200);
    const ahead = await loginWith(user.email, PASSWORD, totpCode(user.secret, now(), 1));
    expect(ahead.statusCode, ahead.body).toBe(200);
  });

  it('a wrong code is 401 and counts toward the lockout: 5 wrong codes lock even the right password and code', async () => {
    const user = await enabledAccount('login-lock');
    const bad = wrongCode(user.secret, now());
    for (let i = 0; i < 5; i++) {
      const res = await loginWith(user.email, PASSWORD, bad);
      expect(res.statusCode, `attempt ${i + 1}: ${res.body}`).toBe(401);
      expect(json(res).error.message).toBe('Invalid two-factor code');
    }
    const locked = await loginWith(user.email, PASSWORD, totpCode(user.secret, now()));
    expectError(locked, 423, 'ACCOUNT_LOCKED');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);

    t.clock.advance(15 * MINUTE);
    const after = await loginWith(user.email, PASSWORD, totpCode(user.secret, now()));
    expect(after.statusCode, after.body).toBe(200);
  });

  it('wrong passwords and wrong codes add up to the same lockout', async () => {
    const user = await enabledAccount('login-lock-mixed');
    for (let i = 0; i < 2; i++) expect((await loginWith(user.email, WRONG_PASSWORD)).statusCode).toBe(401);
    for (let i = 0; i < 3; i++)
      expect((await loginWith(user.email, PASSWORD, wrongCode(user.secret, now()))).statusCode).toBe(401);
    expectError(await loginWith(user.email, PASSWORD, totpCode(user.secret, now())), 423, 'ACCOUNT_LOCKED');
  });

  it('accepts a backup code once; a second use is 401; another code still works', async () => {
    const user = await enabledAccount('login-backup');
    const [first, second] = user.backupCodes;
    const ok = await loginWith(user.email, PASSWORD, first);
    expect(ok.statusCode, ok.body).toBe(200);
    expectError(await loginWith(user.email, PASSWORD, first), 401, 'AUTHENTICATION_ERROR');
    expect((await loginWith(user.email, PASSWORD, second)).statusCode).toBe(200);

    const rows = await rowsOf(user.userId);
    expect(rows.backupCodes.filter((r) => r.usedAt !== null)).toHaveLength(2);
  });

  it('accepts a backup code typed in capitals, or with blanks around it', async () => {
    const user = await enabledAccount('login-backup-typed');
    // A code with a letter in it, so that typing it in capitals changes it.
    const lettered = user.backupCodes.filter((c) => /[a-f]/.test(c));
    expect(lettered.length).toBeGreaterThanOrEqual(2);
    expect((await loginWith(user.email, PASSWORD, lettered[0]!.toUpperCase())).statusCode).toBe(200);
    expect((await loginWith(user.email, PASSWORD, ` ${lettered[1]} `)).statusCode).toBe(200);
  });

  it('codes issued in an earlier form (xxxxx-xxxxx keyed, 8 hex plain SHA-256) keep working until the next setup replaces them', async () => {
    const user = await enabledAccount('login-backup-earlier');
    // The rows an earlier version stored for this account: a base32 code keyed as today, and a hex
    // code under plain SHA-256 (the form before keyed hashes).
    const base32 = '7f3kq-2m9xd';
    const legacyHex = 'c0ffee42';
    const at = now();
    await t.deps.db.insert(backupCodes).values([
      {
        id: `tok_earlier_b32_${user.userId}`,
        userId: user.userId,
        codeHash: keyedHash(user.userId, base32.replace('-', '')),
        createdAt: at,
      },
      { id: `tok_earlier_hex_${user.userId}`, userId: user.userId, codeHash: sha256(legacyHex), createdAt: at },
    ]);
    // Typed in capitals, without the dash: read as before.
    expect((await loginWith(user.email, PASSWORD, base32.toUpperCase())).statusCode).toBe(200);
    expectError(await loginWith(user.email, PASSWORD, base32), 401, 'AUTHENTICATION_ERROR');
    expect((await loginWith(user.email, PASSWORD, legacyHex.toUpperCase())).statusCode).toBe(200);
    expectError(await loginWith(user.email, PASSWORD, legacyHex), 401, 'AUTHENTICATION_ERROR');

    // A fresh earlier-form pair; the next setup replaces every code, these included.
    const other = '9h4kt-w2m8q';
    const otherHex = 'deadbe11';
    await t.deps.db.insert(backupCodes).values([
      {
        id: `tok_earlier_b32b_${user.userId}`,
        userId: user.userId,
        codeHash: keyedHash(user.userId, other.replace('-', '')),
        createdAt: at,
      },
      { id: `tok_earlier_hexb_${user.userId}`, userId: user.userId, codeHash: sha256(otherHex), createdAt: at },
    ]);
    const fresh = await setup(user.accessToken, PASSWORD, user.backupCodes[0]);
    for (const code of fresh.backupCodes) expect(code).toMatch(/^[0-9a-f]{8}$/);
    expectError(await loginWith(user.email, PASSWORD, other), 401, 'AUTHENTICATION_ERROR');
    expectError(await loginWith(user.email, PASSWORD, otherHex), 401, 'AUTHENTICATION_ERROR');
    expect((await loginWith(user.email, PASSWORD, fresh.backupCodes[0])).statusCode).toBe(200);
  });

  it('a backup code of another account does not work', async () => {
    const a = await enabledAccount('login-backup-a');
    const b = await enabledAccount('login-backup-b');
    expectError(await loginWith(a.email, PASSWORD, b.backupCodes[0]), 401, 'AUTHENTICATION_ERROR');
  });
});

describe('rerunning setup while enabled', () => {
  it('keeps the old secret until the new one is verified; replaces the backup codes at once', async () => {
    const user = await enabledAccount('rerun');
    const old = { secret: user.secret, backupCodes: user.backupCodes };
    // Rerunning setup needs a current code: the last backup code here, so the TOTP step stays free.
    const fresh = await setup(user.accessToken, PASSWORD, old.backupCodes[9]);
    expect(fresh.secret).not.toBe(old.secret);
    expect(fresh.backupCodes.some((c) => old.backupCodes.includes(c))).toBe(false);
    expect(json(await getMe(t, user.accessToken)).twoFactorEnabled).toBe(true);

    // Still enabled: a code is still required.
    expect(json(await loginWith(user.email, PASSWORD)).requiresTwoFactor).toBe(true);
    // The old secret still signs in.
    const withOld = await loginWith(user.email, PASSWORD, totpCode(old.secret, now()));
    expect(withOld.statusCode, withOld.body).toBe(200);
    // The new, unverified secret does not.
    nextStep();
    expectError(await loginWith(user.email, PASSWORD, totpCode(fresh.secret, now())), 401, 'AUTHENTICATION_ERROR');
    // The old backup codes stopped working at once; the new ones work.
    expectError(await loginWith(user.email, PASSWORD, old.backupCodes[0]), 401, 'AUTHENTICATION_ERROR');
    expect((await loginWith(user.email, PASSWORD, fresh.backupCodes[0])).statusCode).toBe(200);

    // Verifying the new secret swaps it in: from then on only its codes sign in.
    const verify = await post('/auth/two-factor/verify', { code: totpCode(fresh.secret, now()) }, user.accessToken);
    expect(verify.statusCode, verify.body).toBe(200);
    nextStep();
    expectError(await loginWith(user.email, PASSWORD, totpCode(old.secret, now())), 401, 'AUTHENTICATION_ERROR');
    const withNew = await loginWith(user.email, PASSWORD, totpCode(fresh.secret, now()));
    expect(withNew.statusCode, withNew.body).toBe(200);
  });

  it('a wrong code for the new secret keeps the old one in force', async () => {
    const user = await enabledAccount('rerun-wrong');
    const fresh = await setup(user.accessToken, PASSWORD, user.backupCodes[0]);
    expectError(
      await post('/auth/two-factor/verify', { code: totpCode(user.secret, now()) }, user.accessToken),
      400,
      'VALIDATION_ERROR',
    );
    expect((await loginWith(user.email, PASSWORD, totpCode(user.secret, now()))).statusCode).toBe(200);
    nextStep();
    expectError(await loginWith(user.email, PASSWORD, totpCode(fresh.secret, now())), 401, 'AUTHENTICATION_ERROR');
  });
});

describe('two-factor disable', () => {
  it('needs the right password (401) and a valid code (400)', async () => {
    const user = await enabledAccount('disable-checks');
    expectError(
      await post(
        '/auth/two-factor/disable',
        { password: WRONG_PASSWORD, code: totpCode(user.secret, now()) },
        user.accessToken,
      ),
      401,
      'AUTHENTICATION_ERROR',
    );
    expectError(
      await post(
        '/auth/two-factor/disable',
        { password: PASSWORD, code: wrongCode(user.secret, now()) },
        user.accessToken,
      ),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await post('/auth/two-factor/disable', { password: PASSWORD, code: totpCode(user.secret, now()) }),
      401,
      'AUTHENTICATION_ERROR',
    );
    expect(json(await getMe(t, user.accessToken)).twoFactorEnabled).toBe(true);
    expect((await rowsOf(user.userId)).backupCodes).toHaveLength(10);
  });

  it('turns two-factor off and removes the secret and backup codes', async () => {
    const user = await enabledAccount('disable-ok');
    const res = await post(
      '/auth/two-factor/disable',
      { password: PASSWORD, code: totpCode(user.secret, now()) },
      user.accessToken,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ twoFactorEnabled: false });
    expect(json(await getMe(t, user.accessToken)).twoFactorEnabled).toBe(false);
    expect(await rowsOf(user.userId)).toEqual({ twoFactor: [], backupCodes: [] });

    const login = await loginWith(user.email, PASSWORD);
    expect(login.statusCode, login.body).toBe(200);
    expect(json(login).user.twoFactorEnabled).toBe(false);
    // The old backup codes are gone with it: a login that sends one is not asked for anything.
    expect((await loginWith(user.email, PASSWORD, user.backupCodes[1])).statusCode).toBe(200);
  });

  it('accepts an unused backup code instead of a TOTP code', async () => {
    const user = await enabledAccount('disable-backup');
    const res = await post(
      '/auth/two-factor/disable',
      { password: PASSWORD, code: user.backupCodes[3] },
      user.accessToken,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect((await loginWith(user.email, PASSWORD)).statusCode).toBe(200);
  });
});
