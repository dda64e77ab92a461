// Two-factor authentication (docs/decisions.md, two-factor): setup and verify, with the window of
// accepted steps and the storage of the secret and backup codes.
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { PASSWORD } from '../../../test/factories.js';
import { getMe } from '../../../test/fixtures/auth.js';
import { base32Decode, totpCode, wrongCode } from '../../../test/totp.js';
import {
  account,
  loginWith,
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
import { expectError } from '../../../test/expect.js';

useTwoFactorApp();

describe('two-factor setup', () => {
  it('needs a signed-in user and the right password (401 otherwise)', async () => {
    const user = await account('setup-pw');
    expect(
      expectError(
        await post('/auth/two-factor/setup', { password: WRONG_PASSWORD }, user.accessToken),
        401,
        'AUTHENTICATION_ERROR',
      ).message,
    ).not.toBe('Two-factor code required');
    expectError(await post('/auth/two-factor/setup', { password: PASSWORD }), 401, 'AUTHENTICATION_ERROR');
    expect(await rowsOf(user.userId)).toEqual({ twoFactor: [], backupCodes: [] });
  });

  it('answers a 20-byte base32 secret, an otpauth URI and 10 distinct backup codes of 8 lowercase hexadecimal characters', async () => {
    const user = await account('setup-shape');
    const res = await post('/auth/two-factor/setup', { password: PASSWORD }, user.accessToken);
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['backupCodes', 'otpauthUrl', 'qrCode', 'secret']);
    // qrCode: the deprecated former name of otpauthUrl, still sent.
    expect(body.qrCode).toBe(body.otpauthUrl);

    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(body.secret)).toHaveLength(20);

    const uri = new URL(body.otpauthUrl);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toContain(user.email);
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      secret: body.secret,
      issuer: 'Tenantry',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });

    expect(body.backupCodes).toHaveLength(10);
    for (const code of body.backupCodes) expect(code).toMatch(/^[0-9a-f]{8}$/);
    expect(new Set(body.backupCodes).size).toBe(10);
  });

  it('stores the secret encrypted and the backup codes keyed, so a dump of the table yields none of them', async () => {
    const user = await account('setup-store');
    const s = await setup(user.accessToken);
    const rows = await rowsOf(user.userId);

    expect(rows.twoFactor).toHaveLength(1);
    const stored = JSON.stringify(rows.twoFactor);
    expect(rows.twoFactor[0]!.pendingSecretEnc).toEqual(expect.any(String));
    for (const form of [
      s.secret,
      s.secret.toLowerCase(),
      base32Decode(s.secret).toString('hex'),
      base32Decode(s.secret).toString('base64'),
    ]) {
      expect(stored).not.toContain(form);
    }

    expect(rows.backupCodes).toHaveLength(10);
    const storedCodes = JSON.stringify(rows.backupCodes);
    for (const code of s.backupCodes) {
      for (const form of [
        code,
        code.toUpperCase(),
        sha256(code),
        sha256(code.toUpperCase()),
        sha256(`${user.userId}:${code}`),
      ])
        expect(storedCodes).not.toContain(form);
    }
    expect(new Set(rows.backupCodes.map((r) => r.codeHash)).size).toBe(10);
    expect(rows.backupCodes.every((r) => r.usedAt === null)).toBe(true);
  });

  it('leaves two-factor off until a code is verified', async () => {
    const user = await account('setup-pending');
    await setup(user.accessToken);
    expect(json(await getMe(t, user.accessToken)).twoFactorEnabled).toBe(false);
    const res = await loginWith(user.email, PASSWORD);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user.twoFactorEnabled).toBe(false);
  });
});

describe('two-factor verify', () => {
  it('refuses a wrong code with 400 VALIDATION_ERROR and stays disabled', async () => {
    const user = await account('verify-wrong');
    const s = await setup(user.accessToken);
    expectError(
      await post('/auth/two-factor/verify', { code: wrongCode(s.secret, now()) }, user.accessToken),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await post('/auth/two-factor/verify', { code: 'abcdef' }, user.accessToken), 400, 'VALIDATION_ERROR');
    expect(json(await getMe(t, user.accessToken)).twoFactorEnabled).toBe(false);
  });

  it('refuses a code when no setup is pending', async () => {
    const user = await account('verify-none');
    expectError(await post('/auth/two-factor/verify', { code: '123456' }, user.accessToken), 400, 'VALIDATION_ERROR');
  });

  it('accepts the code of the previous step (window -1)', async () => {
    const user = await account('verify-prev');
    const s = await setup(user.accessToken);
    const res = await post('/auth/two-factor/verify', { code: totpCode(s.secret, now(), -1) }, user.accessToken);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('accepts the code of the next step (window +1)', async () => {
    const user = await account('verify-next');
    const s = await setup(user.accessToken);
    const res = await post('/auth/two-factor/verify', { code: totpCode(s.secret, now(), 1) }, user.accessToken);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses codes two steps away (-2 and +2)', async () => {
    const user = await account('verify-far');
    const s = await setup(user.accessToken);
    expectError(
      await post('/auth/two-factor/verify', { code: totpCode(s.secret, now(), -2) }, user.accessToken),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await post('/auth/two-factor/verify', { code: totpCode(s.secret, now(), 2) }, user.accessToken),
      400,
      'VALIDATION_ERROR',
    );
    expect(json(await getMe(t, user.accessToken)).twoFactorEnabled).toBe(false);
  });

  it('enables two-factor: 200 {twoFactorEnabled: true}, shown by GET /users/me and the login response', async () => {
    const user = await account('verify-ok');
    const s = await setup(user.accessToken);
    const res = await post('/auth/two-factor/verify', { code: totpCode(s.secret, now()) }, user.accessToken);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual({ twoFactorEnabled: true });
    expect(json(await getMe(t, user.accessToken)).twoFactorEnabled).toBe(true);

    nextStep();
    const login = await loginWith(user.email, PASSWORD, totpCode(s.secret, now()));
    expect(login.statusCode, login.body).toBe(200);
    expect(json(login).user).toMatchObject({ id: user.userId, twoFactorEnabled: true });
  });
});
