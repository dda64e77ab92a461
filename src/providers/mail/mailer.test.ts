// The mailer a configuration gets: SMTP when SMTP_URL is set, else the log. In production (which
// refuses to start without SMTP_URL) a mail written to the log still carries no usable link.
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../config.js';
import { createMailer, redactLinks } from './mailer.js';
import { DEFAULT_BRANDING, magicLinkMail, resetPasswordMail } from './templates.js';

const TOKEN = 'Zm9vYmFyYmF6cXV4LXRva2VuLXZhbHVlLTEyMzQ1Njc4OTA';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), text: () => lines.join('') };
}

const configFor = (env: Config['env']) =>
  ({ env, smtpUrl: null, mailFrom: 'Tenantry <no-reply@localhost>' }) as Pick<Config, 'env' | 'smtpUrl' | 'mailFrom'>;

describe('the log mailer (no SMTP_URL)', () => {
  it('prints the link in development, so a developer can follow it', async () => {
    const log = capture();
    const mailer = createMailer(configFor('development'), log.logger);
    await mailer.send(
      magicLinkMail(DEFAULT_BRANDING, 'dev@example.com', `http://localhost:3000/magic-link?token=${TOKEN}`),
    );
    expect(log.text()).toContain(`magic-link?token=${TOKEN}`);
    expect(log.text()).toContain('dev@example.com');
  });

  it('never writes a token to the log in production', async () => {
    const log = capture();
    const mailer = createMailer(configFor('production'), log.logger);
    await mailer.send(
      magicLinkMail(DEFAULT_BRANDING, 'prod@example.com', `https://app.example.com/magic-link?token=${TOKEN}`),
    );
    await mailer.send(
      resetPasswordMail(
        DEFAULT_BRANDING,
        'prod@example.com',
        `https://app.example.com/reset-password?foo=1&token=${TOKEN}#${TOKEN}`,
      ),
    );
    const out = log.text();
    expect(out).not.toContain(TOKEN);
    // Still useful to an operator: who, what, and where the link pointed.
    expect(out).toContain('prod@example.com');
    expect(out).toContain('Your sign-in link');
    expect(out).toContain('https://app.example.com/magic-link?token=[redacted]');
  });
});

describe('redactLinks', () => {
  it('blanks every query value and fragment of a link, and any long token-like run', () => {
    expect(redactLinks(`Go: https://a.example/x?token=${TOKEN}&b=2#frag now`)).toBe(
      'Go: https://a.example/x?token=[redacted]&b=[redacted]#[redacted] now',
    );
    expect(redactLinks(`Accept: http://app.test/invitations/${TOKEN}`)).toBe(
      'Accept: http://app.test/invitations/[redacted]',
    );
    expect(redactLinks(`code ${TOKEN}.`)).toBe('code [redacted].');
    expect(redactLinks('Plain words stay as they are, and so does https://app.example.com/verify-email.')).toBe(
      'Plain words stay as they are, and so does https://app.example.com/verify-email.',
    );
  });
});
