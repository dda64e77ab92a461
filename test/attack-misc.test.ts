// Attack tests (outside review): small probes of email change and the hand-off.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { queryRows } from './harness.js';
import { t, useApp } from './fixtures/app.js';
import { PASSWORD, registerUser, signedInUser, uniqueEmail, verifyEmailOf } from './factories.js';
import { bearer } from './fixtures/auth.js';

useApp();

describe('email change probes', () => {
  it("a Kelvin-sign look-alike of someone else's address is refused (400 or 409), never accepted", async () => {
    const victimEmail = `kim-${Date.now()}@example.com`;
    await registerUser(t, victimEmail);
    await verifyEmailOf(t, victimEmail);
    const a = await signedInUser(t, 'kelvin');
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users/me/email',
      headers: bearer(a.accessToken),
      payload: { newEmail: victimEmail.replace('k', '\u212A'), password: PASSWORD },
    });
    expect([400, 409]).toContain(res.statusCode);
  });

  it('a deactivated account cannot confirm a pending change', async () => {
    const a = await signedInUser(t, 'deact');
    const newEmail = uniqueEmail('deact-new');
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/users/me/email',
          headers: bearer(a.accessToken),
          payload: { newEmail, password: PASSWORD },
        })
      ).statusCode,
    ).toBe(202);
    const token = await t.mail.tokenFrom(newEmail, /Confirm your new email/i, '/confirm-email');
    await t.deps.db.execute(sql`update users set is_active = false where id = ${a.userId}`);
    await t.deps.userCache.changed(a.userId);
    // Its session answers 401 (a deactivated account's every request does); without one, 401 too.
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/auth/confirm-email-change',
          headers: bearer(a.accessToken),
          payload: { token },
        })
      ).statusCode,
    ).toBe(401);
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/auth/confirm-email-change', payload: { token } })).statusCode,
    ).toBe(401);
    const [row] = await queryRows<{ email: string }>(t, sql`select email from users where id = ${a.userId}`);
    expect(row!.email).toBe(a.email);
  });

  it('a second request replaces the first link', async () => {
    const a = await signedInUser(t, 'repl');
    const first = uniqueEmail('repl-1');
    const second = uniqueEmail('repl-2');
    await t.request({
      method: 'POST',
      url: '/api/v1/users/me/email',
      headers: bearer(a.accessToken),
      payload: { newEmail: first, password: PASSWORD },
    });
    const t1 = await t.mail.tokenFrom(first, /Confirm your new email/i, '/confirm-email');
    await t.request({
      method: 'POST',
      url: '/api/v1/users/me/email',
      headers: bearer(a.accessToken),
      payload: { newEmail: second, password: PASSWORD },
    });
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/auth/confirm-email-change',
          headers: bearer(a.accessToken),
          payload: { token: t1 },
        })
      ).statusCode,
    ).toBe(400);
  });
});
