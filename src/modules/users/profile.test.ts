// GET and PATCH /users/me (docs/api.md#profile).
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { signedInUser } from '../../../test/factories.js';

useApp();

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
type Auth = { authorization: string };

const getMe = (auth: Auth) => t.request({ method: 'GET', url: '/api/v1/users/me', headers: auth });
const patchMe = (auth: Auth, payload: unknown) =>
  t.request({ method: 'PATCH', url: '/api/v1/users/me', headers: auth, payload: payload as object });

async function me(auth: Auth) {
  const res = await getMe(auth);
  expect(res.statusCode, res.body).toBe(200);
  return json(res);
}

async function patchOk(auth: Auth, payload: unknown) {
  const res = await patchMe(auth, payload);
  expect(res.statusCode, res.body).toBe(200);
  return json(res);
}

/** 400 VALIDATION_ERROR whose details name `field`, and the account is exactly as before. */
async function expectRefused(auth: Auth, payload: unknown, field: string) {
  const before = await me(auth);
  const res = await patchMe(auth, payload);
  expect(res.statusCode, res.body).toBe(400);
  expect(json(res)).toEqual({
    success: false,
    error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: expect.stringContaining(field) },
  });
  expect(await me(auth)).toEqual(before);
}

describe('GET /users/me', () => {
  it('returns exactly the user resource (docs/api.md#user-resource), with ISO timestamps in milliseconds', async () => {
    const registeredAt = t.clock.now().toISOString();
    const u = await signedInUser(t, 'shape');
    const body = await me(u.auth);
    expect(Object.keys(body).sort()).toEqual(
      [
        'avatarUrl',
        'createdAt',
        'email',
        'emailVerified',
        'fullName',
        'id',
        'isActive',
        'preferences',
        'twoFactorEnabled',
        'updatedAt',
      ].sort(),
    );
    expect(body).toEqual({
      id: u.userId,
      email: u.email,
      emailVerified: expect.stringMatching(ISO_MS),
      fullName: 'Test User',
      avatarUrl: null,
      preferences: { theme: 'system', language: 'en', timezone: 'UTC', notifications: { email: true, push: false } },
      twoFactorEnabled: false,
      isActive: true,
      createdAt: registeredAt,
      updatedAt: expect.stringMatching(ISO_MS),
    });
    expect(Object.keys(body.preferences).sort()).toEqual(['language', 'notifications', 'theme', 'timezone']);
    expect(Object.keys(body.preferences.notifications).sort()).toEqual(['email', 'push']);
  });

  it('never returns the password hash, the failed-login counter or the lock time', async () => {
    const u = await signedInUser(t, 'secret');
    const res = await getMe(u.auth);
    expect(res.statusCode).toBe(200);
    for (const leaked of [
      'passwordHash',
      'password_hash',
      'password',
      '$argon2',
      'failedLoginAttempts',
      'failed_login_attempts',
      'lockedUntil',
      'locked_until',
    ]) {
      expect(res.body).not.toContain(leaked);
    }
    const patched = await patchMe(u.auth, { fullName: 'Still Secret' });
    expect(patched.statusCode).toBe(200);
    for (const leaked of ['passwordHash', '$argon2', 'failedLoginAttempts', 'lockedUntil'])
      expect(patched.body).not.toContain(leaked);
  });
});

describe('PATCH /users/me', () => {
  it('sets fullName within 1-100 characters and refuses 0 and 101', async () => {
    const u = await signedInUser(t, 'name');
    expect((await patchOk(u.auth, { fullName: 'A' })).fullName).toBe('A');
    expect((await patchOk(u.auth, { fullName: 'é'.repeat(100) })).fullName).toBe('é'.repeat(100));
    await expectRefused(u.auth, { fullName: '' }, 'fullName');
    await expectRefused(u.auth, { fullName: 'x'.repeat(101) }, 'fullName');
    await expectRefused(u.auth, { fullName: 42 }, 'fullName');
    expect((await me(u.auth)).fullName).toBe('é'.repeat(100));
  });

  it('sets avatarUrl, removes it with null, and refuses a value that is not an http(s) URL', async () => {
    const u = await signedInUser(t, 'avatar');
    const url = 'https://cdn.example.com/avatars/1.png';
    expect((await patchOk(u.auth, { avatarUrl: url })).avatarUrl).toBe(url);
    expect((await me(u.auth)).avatarUrl).toBe(url);
    for (const bad of [
      'not a url',
      '',
      'javascript:alert(1)',
      'ftp://files.example.com/a.png',
      'http://',
      'https:///a.png',
      '/relative/path.png',
    ]) {
      await expectRefused(u.auth, { avatarUrl: bad }, 'avatarUrl');
    }
    expect((await patchOk(u.auth, { avatarUrl: null })).avatarUrl).toBeNull();
    expect((await me(u.auth)).avatarUrl).toBeNull();
  });

  it('merges preferences deeply: a partial update keeps every other value', async () => {
    const u = await signedInUser(t, 'prefs');
    const initial = (await me(u.auth)).preferences;
    const afterTheme = (await patchOk(u.auth, { preferences: { theme: 'dark' } })).preferences;
    expect(afterTheme).toEqual({ ...initial, theme: 'dark' });
    const afterPush = (await patchOk(u.auth, { preferences: { notifications: { push: !initial.notifications.push } } }))
      .preferences;
    expect(afterPush).toEqual({
      ...initial,
      theme: 'dark',
      notifications: { email: initial.notifications.email, push: !initial.notifications.push },
    });
    const afterMore = (await patchOk(u.auth, { preferences: { language: 'fr-CA', timezone: 'Europe/Paris' } }))
      .preferences;
    expect(afterMore).toEqual({ ...afterPush, language: 'fr-CA', timezone: 'Europe/Paris' });
    expect((await me(u.auth)).preferences).toEqual(afterMore);
    // Other fields are untouched by a preferences-only update.
    expect((await me(u.auth)).fullName).toBe('Test User');
  });

  it('accepts only the themes light, dark and system', async () => {
    const u = await signedInUser(t, 'theme');
    for (const theme of ['light', 'dark', 'system'])
      expect((await patchOk(u.auth, { preferences: { theme } })).preferences.theme).toBe(theme);
    for (const theme of ['blue', 'Dark', '', null])
      await expectRefused(u.auth, { preferences: { theme } }, 'preferences.theme');
  });

  it('accepts a language of 2-10 characters', async () => {
    const u = await signedInUser(t, 'lang');
    expect((await patchOk(u.auth, { preferences: { language: 'de' } })).preferences.language).toBe('de');
    expect((await patchOk(u.auth, { preferences: { language: 'x'.repeat(10) } })).preferences.language).toBe(
      'x'.repeat(10),
    );
    await expectRefused(u.auth, { preferences: { language: 'd' } }, 'preferences.language');
    await expectRefused(u.auth, { preferences: { language: 'x'.repeat(11) } }, 'preferences.language');
  });

  it('accepts IANA time zones only', async () => {
    const u = await signedInUser(t, 'tz');
    for (const tz of ['Europe/Paris', 'America/Argentina/Buenos_Aires', 'UTC', 'Etc/GMT+1', 'GMT', 'CET']) {
      expect((await patchOk(u.auth, { preferences: { timezone: tz } })).preferences.timezone).toBe(tz);
    }
    for (const tz of [
      'Mars/Olympus',
      'Paris',
      '+01:00',
      'UTC+1',
      '',
      'Europe/Paris/Extra',
      'ACT',
      'SystemV/AST4',
      ' Europe/Paris',
    ]) {
      await expectRefused(u.auth, { preferences: { timezone: tz } }, 'preferences.timezone');
    }
  });

  it('stores a time zone in its canonical spelling', async () => {
    const u = await signedInUser(t, 'tzcase');
    expect((await patchOk(u.auth, { preferences: { timezone: 'europe/paris' } })).preferences.timezone).toBe(
      'Europe/Paris',
    );
    expect((await patchOk(u.auth, { preferences: { timezone: 'utc' } })).preferences.timezone).toBe('UTC');
  });

  it('refuses unknown fields at the top level, in preferences and in notifications', async () => {
    const u = await signedInUser(t, 'unknown');
    await expectRefused(u.auth, { fullName: 'Changed', email: 'other@example.com' }, 'email');
    await expectRefused(u.auth, { fullName: 'Changed', isActive: false }, 'isActive');
    await expectRefused(u.auth, { fullName: 'Changed', passwordHash: 'x' }, 'passwordHash');
    await expectRefused(u.auth, { preferences: { theme: 'dark', fontSize: 12 } }, 'preferences.fontSize');
    await expectRefused(
      u.auth,
      { preferences: { notifications: { push: true, sms: true } } },
      'preferences.notifications.sms',
    );
    await expectRefused(u.auth, { preferences: { notifications: { push: 'yes' } } }, 'preferences.notifications.push');
    await expectRefused(u.auth, { preferences: 'dark' }, 'preferences');
  });

  it('changes nothing when any part of the update is refused', async () => {
    const u = await signedInUser(t, 'atomic');
    await patchOk(u.auth, {
      fullName: 'Before',
      avatarUrl: 'https://example.com/a.png',
      preferences: { theme: 'light' },
    });
    t.clock.advance(60_000);
    await expectRefused(
      u.auth,
      { fullName: 'After', preferences: { theme: 'dark', timezone: 'Mars/Olympus' } },
      'preferences.timezone',
    );
    await expectRefused(u.auth, { fullName: 'After', avatarUrl: 'javascript:alert(1)' }, 'avatarUrl');
    await expectRefused(u.auth, { fullName: 'After', preferences: { language: 'x' } }, 'preferences.language');
    await expectRefused(u.auth, { fullName: '', preferences: { theme: 'dark' } }, 'fullName');
    await expectRefused(u.auth, { avatarUrl: null, unknown: true }, 'unknown');
  });

  it('moves updatedAt forward and keeps createdAt', async () => {
    const u = await signedInUser(t, 'updated');
    const before = await me(u.auth);
    t.clock.advance(5 * 60_000);
    const after = await patchOk(u.auth, { fullName: 'Renamed' });
    expect(after.updatedAt).toMatch(ISO_MS);
    expect(after.updatedAt).toBe(t.clock.now().toISOString());
    expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect(after.createdAt).toBe(before.createdAt);
    expect(after).toEqual({ ...before, fullName: 'Renamed', updatedAt: after.updatedAt });
    expect(await me(u.auth)).toEqual(after);
  });

  it('answers with the full updated user', async () => {
    const u = await signedInUser(t, 'full');
    const after = await patchOk(u.auth, { avatarUrl: 'https://example.com/me.jpg' });
    expect(after).toEqual(await me(u.auth));
    expect(after.id).toBe(u.userId);
  });
});
