// GET /users/me/export (docs/api.md#account-export): everything about the person, and no secret.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { json, queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { createOrg, signedInUser } from '../../../test/factories.js';
import { bearer } from '../../../test/fixtures/auth.js';
import { totpCode } from '../../../test/totp.js';
import { SoftAuthenticator } from '../../../test/webauthn.js';
import { expectError } from '../../../test/expect.js';

useApp();

const post = (url: string, payload: Record<string, unknown> | undefined, accessToken: string) =>
  t.request({ method: 'POST', url: `/api/v1${url}`, headers: bearer(accessToken), ...(payload ? { payload } : {}) });

describe('the account export', () => {
  it('holds the profile, sessions, memberships, social links, passkeys and audit entries, and no secret', async () => {
    const user = await signedInUser(t, 'export');
    const org = await createOrg(t, user, { name: 'Export Org' });
    // A passkey, two-factor (a TOTP secret and backup codes exist), a social link.
    const options = json(await post('/auth/passkeys/registration/options', undefined, user.accessToken));
    const registered = await post(
      '/auth/passkeys/registration/verify',
      { response: new SoftAuthenticator().create(options as never), name: 'Laptop' },
      user.accessToken,
    );
    expect(registered.statusCode, registered.body).toBe(201);
    const setup = await post('/auth/two-factor/setup', { password: user.password }, user.accessToken);
    const secret = json(setup).secret as string;
    const backupCodes = json(setup).backupCodes as string[];
    expect(
      (await post('/auth/two-factor/verify', { code: totpCode(secret, t.clock.now()) }, user.accessToken)).statusCode,
    ).toBe(200);
    await t.deps.db.execute(
      sql`insert into oauth_accounts (id, user_id, provider, provider_account_id, email, created_at) values ('oac_export', ${user.userId}, 'github', '4242', ${user.email}, now())`,
    );

    const res = await t.request({ method: 'GET', url: '/api/v1/users/me/export', headers: user.auth });
    expect(res.statusCode, res.body).toBe(200);
    const doc = json(res);
    expect(Object.keys(doc).sort()).toEqual([
      'auditEntries',
      'exportedAt',
      'memberships',
      'passkeys',
      'profile',
      'sessions',
      'socialLinks',
    ]);
    expect(doc.profile).toMatchObject({ id: user.userId, email: user.email, twoFactorEnabled: true });
    expect(doc.sessions).toHaveLength(1);
    expect(doc.sessions[0]).toMatchObject({ revokedAt: null, expiresAt: expect.any(String) });
    expect(doc.memberships).toEqual([
      expect.objectContaining({ organizationId: org.id, organizationName: 'Export Org', role: 'owner' }),
    ]);
    expect(doc.socialLinks).toEqual([
      expect.objectContaining({ provider: 'github', providerAccountId: '4242', email: user.email }),
    ]);
    expect(doc.passkeys).toEqual([
      expect.objectContaining({ name: 'Laptop', transports: ['internal'], lastUsedAt: null }),
    ]);
    expect(doc.auditEntries).toEqual([
      expect.objectContaining({ organizationId: org.id, action: 'POST /api/v1/organizations', statusCode: 201 }),
    ]);

    // No secret, by name or by value.
    const text = res.body;
    for (const field of [
      'passwordHash',
      'password_hash',
      'secret',
      'Secret',
      'tokenHash',
      'refreshTokenHash',
      'previousTokenHash',
      'codeHash',
      'publicKey',
      'credentialId',
      'counter',
    ]) {
      expect(text, field).not.toContain(field);
    }
    const [row] = await queryRows<{ password_hash: string }>(
      t,
      sql`select password_hash from users where id = ${user.userId}`,
    );
    const [session] = await queryRows<{ refresh_token_hash: string }>(
      t,
      sql`select refresh_token_hash from sessions where user_id = ${user.userId}`,
    );
    const [pk] = await queryRows<{ public_key: string; credential_id: string }>(
      t,
      sql`select public_key, credential_id from passkeys where user_id = ${user.userId}`,
    );
    const [tf] = await queryRows<{ secret_enc: string }>(
      t,
      sql`select secret_enc from two_factor where user_id = ${user.userId}`,
    );
    for (const value of [
      row!.password_hash,
      session!.refresh_token_hash,
      pk!.public_key,
      pk!.credential_id,
      tf!.secret_enc,
      secret,
      user.refreshToken,
      ...backupCodes,
    ]) {
      expect(text).not.toContain(value);
    }
  });

  it("holds only the caller's data", async () => {
    const a = await signedInUser(t, 'export-a');
    const b = await signedInUser(t, 'export-b');
    await createOrg(t, b);
    const doc = json(await t.request({ method: 'GET', url: '/api/v1/users/me/export', headers: a.auth }));
    expect(doc.memberships).toEqual([]);
    expect(doc.auditEntries).toEqual([]);
    expect(doc.sessions.every((s: { id: string }) => typeof s.id === 'string')).toBe(true);
    expect(JSON.stringify(doc)).not.toContain(b.email);
  });

  it('refuses an anonymous caller (401)', async () => {
    expectError(await t.request({ method: 'GET', url: '/api/v1/users/me/export' }), 401, 'AUTHENTICATION_ERROR');
  });
});
