// Magic links take the same time for known and unknown emails: the link is issued after the answer.
// A measurement: the `timing` project (vitest.config.ts) runs this file alone, after the others, so
// that no other test file competes with it for the CPU.
import { describe, expect, it } from 'vitest';
import { t, useApp } from '../../../test/fixtures/app.js';
import { uniqueEmail } from '../../../test/factories.js';
import { MAGIC_LINK_SUBJECT, verifiedUser } from '../../../test/fixtures/auth.js';

useApp();

const SUBJECT = MAGIC_LINK_SUBJECT;

const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: `/api/v1${url}`, payload, headers });

const mailsTo = (email: string) =>
  t.mail.mails.filter((m) => m.to.includes(email.toLowerCase()) && SUBJECT.test(m.subject));

describe('requesting a magic link', () => {
  it('takes the same time for known and unknown emails (the link is issued after the answer)', async () => {
    const { email } = await verifiedUser(t, 'ml-timing');
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 25; i++) {
      const sent = mailsTo(email).length;
      let start = performance.now();
      expect((await post('/auth/magic-link', { email })).statusCode).toBe(200);
      known.push(performance.now() - start);
      // Let the background issuance and mail finish before the next measurement.
      while (mailsTo(email).length === sent) await new Promise((r) => setTimeout(r, 5));
      start = performance.now();
      expect((await post('/auth/magic-link', { email: uniqueEmail('ml-timing-nobody') })).statusCode).toBe(200);
      unknown.push(performance.now() - start);
      await t.mail.settled();
      // An address gets at most 5 sign-in links in any hour (platform/mail-cap.ts): one every 12 minutes.
      t.clock.advance(12 * 60_000);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    // Issuing the token inside the request roughly doubles its time; allow only noise.
    expect(
      median(known),
      `known ${median(known).toFixed(1)} ms, unknown ${median(unknown).toFixed(1)} ms`,
    ).toBeLessThan(median(unknown) * 1.5 + 3);
  });
});
