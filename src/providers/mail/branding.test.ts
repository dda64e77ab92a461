// The product's branding in its mails (docs/configuration.md#branding): a custom name, logo, colour
// and support address in every mail, received over SMTP; texts replaced from MAIL_TEMPLATES_DIR; and
// a replacement that names an unknown placeholder, mail or field stops the start, naming it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { expectRefused, load, tempDir, useTempDirs } from '../../../test/fixtures/config.js';
import type { MAILS } from './templates.js';
import { MAIL_KINDS, renderMail, type MailKind } from './templates.js';

useTempDirs();

const BRAND = {
  APP_NAME: 'Acme Cloud',
  APP_LOGO_URL: 'https://cdn.acme.example/logo.png',
  APP_PRIMARY_COLOR: '#ff6600',
  APP_SUPPORT_EMAIL: 'help@acme.example',
};

/** A MAIL_TEMPLATES_DIR with `files` ({'en/invitation.json': {...}}). */
function templatesDir(files: Record<string, unknown>): string {
  const dir = tempDir();
  for (const [name, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), typeof body === 'string' ? body : JSON.stringify(body));
  }
  return dir;
}

const sample: { [K in MailKind]: Record<(typeof MAILS)[K]['placeholders'][number], string> } = {
  verifyEmail: {},
  resetPassword: {},
  magicLink: {},
  invitation: { orgName: 'Initech', inviter: 'Bill', role: 'Member' },
  endpointDisabled: { orgName: 'Initech', url: 'https://hooks.initech.example/in', hours: '120' },
  emailChange: {},
  emailChanged: { newEmail: 'new@initech.example' },
  passkeyAdded: { name: 'Laptop' },
};

describe('every mail, branded', () => {
  it('says the product name, shows the logo, the colour and the support address, and leaves no placeholder', () => {
    const { branding } = load(BRAND);
    for (const kind of MAIL_KINDS) {
      const mail = renderMail(
        branding,
        kind,
        'x@example.com',
        'https://app.example/link?token=t',
        sample[kind] as never,
      );
      const all = `${mail.subject}\n${mail.text}\n${mail.html}`;
      expect(all, kind).not.toContain('Tenantry');
      expect(all, kind).not.toMatch(/\{[A-Za-z]+\}/);
      expect(mail.text, kind).toContain('Acme Cloud');
      expect(mail.text, kind).toContain('https://app.example/link?token=t');
      expect(mail.text, kind).toContain('help@acme.example');
      expect(mail.html, kind).toContain('<img src="https://cdn.acme.example/logo.png" alt="Acme Cloud"');
      expect(mail.html, kind).toContain('background:#ff6600');
    }
  });

  it('escapes what it interpolates into the HTML', () => {
    const { branding } = load({ APP_NAME: 'Tom & Jerry' });
    const mail = renderMail(branding, 'invitation', 'x@example.com', 'https://a.example/?a=1&b=2', {
      orgName: '<script>x</script>',
      inviter: 'Eve "quotes"',
      role: 'Member',
    });
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&#60;script&#62;');
    expect(mail.html).toContain('Tom &#38; Jerry');
    expect(mail.subject).toBe('You are invited to join <script>x</script> on Tom & Jerry');
  });
});

describe('a branded service', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        ...BRAND,
        MAIL_TEMPLATES_DIR: templatesDir({
          'en/verifyEmail.json': {
            subject: 'Welcome to {appName}: confirm your address',
            outro: 'Thanks, the {appName} team',
          },
        }),
      },
    });
  });
  afterAll(() => t.close());

  it('sends mails from the product name, with the replaced texts and the built-in ones for the rest', async () => {
    const { email } = await registerUser(t);
    const mail = await t.mail.waitFor(email, /Welcome to Acme Cloud: confirm your address/);
    expect(mail.raw).toMatch(/^From: Acme Cloud <no-reply@localhost>/m);
    expect(mail.decoded).toContain('Thanks, the Acme Cloud team');
    // Not replaced: the built-in introduction, with the product's name.
    expect(mail.decoded).toContain('when a Acme Cloud account was registered');
    expect(mail.decoded).not.toContain('Tenantry');
  });
});

describe('refused at start, naming what is wrong', () => {
  it('an unknown placeholder, naming the file and the placeholder', () => {
    const dir = templatesDir({ 'en/invitation.json': { intro: '{inviter} invited you to {organisation}' } });
    const msg = expectRefused(() => load({ MAIL_TEMPLATES_DIR: dir }), 'MAIL_TEMPLATES_DIR');
    expect(msg).toContain('en/invitation.json');
    expect(msg).toContain('{organisation}');
    // A placeholder another mail knows is unknown to this one.
    const other = templatesDir({ 'en/magicLink.json': { intro: 'Hello {inviter}' } });
    expect(expectRefused(() => load({ MAIL_TEMPLATES_DIR: other }), 'MAIL_TEMPLATES_DIR')).toContain('{inviter}');
  });

  it('an unknown mail, language or field, a non-string text, malformed JSON, a missing directory', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ 'en/welcome.json': { subject: 'Hi' } }, 'en/welcome.json'],
      [{ 'fr/invitation.json': { subject: 'Salut' } }, 'fr/'],
      [{ 'en/invitation.json': { footer: 'x' } }, '"footer"'],
      [{ 'en/invitation.json': { subject: 42 } }, '"subject"'],
      [{ 'en/invitation.json': { subject: 'two\nlines' } }, 'one line'],
      [{ 'en/invitation.json': '{not json' }, 'en/invitation.json'],
    ];
    for (const [files, named] of cases)
      expect(expectRefused(() => load({ MAIL_TEMPLATES_DIR: templatesDir(files) }), 'MAIL_TEMPLATES_DIR')).toContain(
        named,
      );
    expectRefused(() => load({ MAIL_TEMPLATES_DIR: path.join(tempDir(), 'nope') }), 'MAIL_TEMPLATES_DIR');
  });

  it("quotes a name with a comma or a quote in the sender's display name", () => {
    expect(load({ APP_NAME: 'Acme, Inc.' }).mailFrom).toBe('"Acme, Inc." <no-reply@localhost>');
    expect(load({ APP_NAME: 'Say "hi"' }).mailFrom).toBe('"Say \\"hi\\"" <no-reply@localhost>');
    expect(load({ APP_NAME: 'Acme Cloud' }).mailFrom).toBe('Acme Cloud <no-reply@localhost>');
  });

  it('a colour, a logo URL, a support address or a name that is not one', () => {
    expectRefused(() => load({ APP_PRIMARY_COLOR: 'orange' }), 'APP_PRIMARY_COLOR');
    expectRefused(() => load({ APP_PRIMARY_COLOR: '#12345' }), 'APP_PRIMARY_COLOR');
    expectRefused(() => load({ APP_LOGO_URL: 'javascript:alert(1)' }), 'APP_LOGO_URL');
    expectRefused(() => load({ APP_SUPPORT_EMAIL: 'not-an-address' }), 'APP_SUPPORT_EMAIL');
    expectRefused(() => load({ APP_NAME: '   ' }), 'APP_NAME');
    expectRefused(() => load({ APP_NAME: 'Evil\nBcc: x@y' }), 'APP_NAME');
  });
});
