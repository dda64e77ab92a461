// At most 5 mails of one kind (verification, sign-in link, password reset, invitation, email change)
// go to one address in any 60 minutes (docs/security.md, docs/api.md#mail-cap): whoever asks, through
// whichever route, on whichever instance (two instances sharing Redis when the run has it). A request
// beyond still answers exactly as usual (same status, same body), so nothing tells whether a mail
// left or whether an account exists; it just sends nothing, and issues no link that could void the
// last one sent.
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { json, type TestApp } from '../../test/harness.js';
import { createOrg, PASSWORD, registerUser, signedInUser, uniqueEmail } from '../../test/factories.js';
import { MAGIC_LINK_SUBJECT, verifiedUser } from '../../test/fixtures/auth.js';
import { a, b, useTwoInstances } from '../../test/fixtures/instances.js';
import type { ReceivedMail } from '../../test/smtp-sink.js';

const HOUR = 60 * 60_000;

useTwoInstances();

/** The i-th request goes to one instance or the other (the same one without Redis). */
const on = (i: number) => (i % 2 === 0 ? a : b);
const apps = () => (b === a ? [a] : [a, b]);

/** Mails to `to` whose subject matches, received by the SMTP sinks of both instances. */
const received = (to: string, subject: RegExp) =>
  apps().flatMap((t) => t.mail.mails.filter((m) => m.to.includes(to.toLowerCase()) && subject.test(m.subject)));

/** Mails of `kind` held back by the cap, over both instances (GET /metrics). */
async function capped(kind: string): Promise<number> {
  let n = 0;
  for (const t of apps()) {
    const res = await t.request({ method: 'GET', url: '/metrics' });
    const m = new RegExp(`^tenantry_mails_capped_total\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(res.body);
    if (!m) throw new Error(`tenantry_mails_capped_total{kind="${kind}"} is not exported`);
    n += Number(m[1]);
  }
  return n;
}

async function until(condition: () => Promise<boolean> | boolean, what: string) {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Sends `count` requests one after the other, each once the previous one's mail has either arrived or
 * been held back; answers the responses and how many mails arrived (all sending settled).
 */
async function oneByOne(
  count: number,
  kind: string,
  to: string,
  subject: RegExp,
  request: (t: TestApp, i: number) => Promise<LightMyRequestResponse>,
) {
  const mails0 = received(to, subject).length;
  const capped0 = await capped(kind);
  const responses: LightMyRequestResponse[] = [];
  let last: ReceivedMail | undefined;
  for (let i = 0; i < count; i++) {
    const before = new Set(received(to, subject));
    responses.push(await request(on(i), i));
    await until(
      async () => received(to, subject).length - mails0 + (await capped(kind)) - capped0 === i + 1,
      `request ${i + 1}'s mail to be sent or held back`,
    );
    last = received(to, subject).find((m) => !before.has(m)) ?? last;
  }
  for (const t of apps()) await t.mail.settled();
  return { responses, mails: received(to, subject).length - mails0, held: (await capped(kind)) - capped0, last };
}

/** Every response has the same status and body. */
function expectSameAnswers(responses: LightMyRequestResponse[], status: number) {
  for (const r of responses) {
    expect(r.statusCode, r.body).toBe(status);
    expect(r.body).toBe(responses[0]!.body);
  }
}

const magicLink = (email: string) => (t: TestApp) =>
  t.request({ method: 'POST', url: '/api/v1/auth/magic-link', payload: { email } });

describe('sign-in links', () => {
  it('7 requests for one address: 7 identical answers, 5 mails; the 5th link still signs in', async () => {
    const { email } = await verifiedUser(a, 'cap-link');
    const { responses, mails, held, last } = await oneByOne(
      7,
      'sign_in_link',
      email,
      MAGIC_LINK_SUBJECT,
      magicLink(email),
    );
    expectSameAnswers(responses, 200);
    expect({ mails, held }).toEqual({ mails: 5, held: 2 });
    // No link was issued for the held-back requests: the last one mailed is still the live one.
    const token = decodeURIComponent(/magic-link\?token=([A-Za-z0-9_%-]+)/.exec(last!.decoded)![1]!);
    const verify = await a.request({ method: 'POST', url: '/api/v1/auth/magic-link/verify', payload: { token } });
    expect(verify.statusCode, verify.body).toBe(200);
  });

  it('10 requests at once, half on each instance: exactly 5 mails', async () => {
    const { email } = await verifiedUser(a, 'cap-burst');
    const mails0 = received(email, MAGIC_LINK_SUBJECT).length;
    const capped0 = await capped('sign_in_link');
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => magicLink(email)(on(i))));
    expectSameAnswers(responses, 200);
    await until(
      async () => received(email, MAGIC_LINK_SUBJECT).length - mails0 + (await capped('sign_in_link')) - capped0 === 10,
      'every request to be mailed or held back',
    );
    for (const t of apps()) await t.mail.settled();
    expect(received(email, MAGIC_LINK_SUBJECT).length - mails0).toBe(5);
  });

  it('the answer for an address at its cap is the answer for an unknown address', async () => {
    const { email } = await verifiedUser(a, 'cap-enum');
    const { responses } = await oneByOne(6, 'sign_in_link', email, MAGIC_LINK_SUBJECT, magicLink(email));
    const unknown = await magicLink(uniqueEmail('cap-nobody'))(a);
    expect(unknown.statusCode).toBe(200);
    expect(responses[5]!.body).toBe(unknown.body);
  });

  it('another address still gets its mails, the capped address still gets other kinds, and after 60 minutes links flow again', async () => {
    const { email } = await verifiedUser(a, 'cap-window');
    const other = await verifiedUser(a, 'cap-other');
    expect(await oneByOne(6, 'sign_in_link', email, MAGIC_LINK_SUBJECT, magicLink(email))).toMatchObject({
      mails: 5,
      held: 1,
    });
    expect(await oneByOne(1, 'sign_in_link', other.email, MAGIC_LINK_SUBJECT, magicLink(other.email))).toMatchObject({
      mails: 1,
      held: 0,
    });
    const reset = (t: TestApp) =>
      t.request({ method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email } });
    expect(await oneByOne(1, 'password_reset', email, /Reset your password/, reset)).toMatchObject({
      mails: 1,
      held: 0,
    });
    // Any 60 minutes: 59 minutes later the 5 still count.
    a.clock.advance(59 * 60_000);
    expect(await oneByOne(1, 'sign_in_link', email, MAGIC_LINK_SUBJECT, magicLink(email))).toMatchObject({
      mails: 0,
      held: 1,
    });
    a.clock.advance(HOUR - 59 * 60_000);
    expect(await oneByOne(5, 'sign_in_link', email, MAGIC_LINK_SUBJECT, magicLink(email))).toMatchObject({
      mails: 5,
      held: 0,
    });
    expect(await oneByOne(1, 'sign_in_link', email, MAGIC_LINK_SUBJECT, magicLink(email))).toMatchObject({
      mails: 0,
      held: 1,
    });
  });
});

describe('every kind of mail', () => {
  it('verification: a registration and 6 resends give 5 mails, identical answers', async () => {
    const email = uniqueEmail('cap-verify');
    await registerUser(a, email);
    await a.mail.waitFor(email, /Verify your email/);
    const resend = (t: TestApp) =>
      t.request({ method: 'POST', url: '/api/v1/auth/resend-verification', payload: { email } });
    const { responses, mails, held } = await oneByOne(6, 'verification', email, /Verify your email/, resend);
    expectSameAnswers(responses, 200);
    // The registration's mail was the first of the 5.
    expect({ mails: mails + 1, held }).toEqual({ mails: 5, held: 2 });
  });

  it('password reset: 7 requests, 5 mails, identical answers', async () => {
    const { email } = await verifiedUser(a, 'cap-reset');
    const reset = (t: TestApp) =>
      t.request({ method: 'POST', url: '/api/v1/auth/password/forgot', payload: { email } });
    const { responses, mails, held } = await oneByOne(7, 'password_reset', email, /Reset your password/, reset);
    expectSameAnswers(responses, 200);
    expect({ mails, held }).toEqual({ mails: 5, held: 2 });
  });

  it('invitation: an invitation and 6 resends give 5 mails; every answer is the usual one, link included', async () => {
    const owner = await signedInUser(a, 'cap-owner');
    const org = await createOrg(a, owner);
    const email = uniqueEmail('cap-invitee');
    const subject = /You are invited/;
    let invitationId = '';
    const { responses, mails, held } = await oneByOne(7, 'invitation', email, subject, async (t, i) => {
      if (i === 0) {
        const res = await t.request({
          method: 'POST',
          url: `/api/v1/organizations/${org.id}/invitations`,
          headers: owner.auth,
          payload: { email, role: 'member' },
        });
        invitationId = json(res).invitation.id;
        return res;
      }
      return t.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/invitations/${invitationId}/resend`,
        headers: owner.auth,
      });
    });
    expect(responses[0]!.statusCode, responses[0]!.body).toBe(201);
    for (const r of responses.slice(1)) {
      expect(r.statusCode, r.body).toBe(200);
      expect(json(r).inviteUrl).toMatch(/token=/);
    }
    expect({ mails, held }).toEqual({ mails: 5, held: 2 });
  });

  it('invitations from different organizations count together: the cap is the address’s', async () => {
    const email = uniqueEmail('cap-spam');
    const { mails, held } = await oneByOne(7, 'invitation', email, /You are invited/, async (t) => {
      const owner = await signedInUser(t, 'cap-spammer');
      const org = await createOrg(t, owner);
      return t.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/invitations`,
        headers: owner.auth,
        payload: { email, role: 'member' },
      });
    });
    expect({ mails, held }).toEqual({ mails: 5, held: 2 });
  });

  it('email change: 7 requests to move an account to one address give 5 mails there, identical 202s', async () => {
    const user = await signedInUser(a, 'cap-mover');
    const target = uniqueEmail('cap-target');
    const change = (t: TestApp) =>
      t.request({
        method: 'POST',
        url: '/api/v1/users/me/email',
        headers: user.auth,
        payload: { newEmail: target, password: PASSWORD },
      });
    const { responses, mails, held } = await oneByOne(
      7,
      'email_change',
      target,
      /Confirm your new email address/,
      change,
    );
    expectSameAnswers(responses, 202);
    expect({ mails, held }).toEqual({ mails: 5, held: 2 });
  });
});
