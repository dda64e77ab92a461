// Mail goes out through nodemailer over SMTP_URL, or, with no SMTP configured, to the log with its
// links so a developer can follow them (never a usable link in production). Sending happens after the transaction commits and never
// fails the request that caused it.
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Where mail goes: SMTP, the log, or a test's or benchmark's own sink. */
export interface MailTransport {
  send(mail: Mail): Promise<void>;
  close(): Promise<void>;
}

/**
 * The transport, and the work that sends mail after a request has been answered. That work runs
 * detached from the request (so neither its time nor its failure reaches the caller) but not
 * untracked: `idle()` resolves once all of it has settled, which is how the tests wait for a mail
 * and how a test proves that none was sent.
 */
export interface Mailer extends MailTransport {
  /** Runs `work` after the current tick, detached; a failure is logged, never thrown. */
  later(work: () => Promise<unknown>): void;
  /** Resolves once every piece of work handed to `later` has settled, work it handed on included. */
  idle(): Promise<void>;
}

export function withLater(transport: MailTransport, logger: Logger): Mailer {
  const pending = new Set<Promise<unknown>>();
  return {
    send: (mail) => transport.send(mail),
    close: () => transport.close(),
    later(work) {
      const run: Promise<unknown> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(work)
        .catch((err: Error) => logger.error({ err: { message: err.message } }, 'mail work failed'))
        .finally(() => pending.delete(run));
      pending.add(run);
    },
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

export function createSmtpMailer(smtpUrl: string, from: string): MailTransport {
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(mail) {
      await transport.sendMail({ from, ...mail });
    },
    async close() {
      transport.close();
    },
  };
}

// What a token looks like in a mail: at least 32 characters of base64url (randomToken gives 43).
const TOKEN_LIKE = /[A-Za-z0-9_-]{32,}/g;
const LINK = /\bhttps?:\/\/[^\s<>"']+/g;

/**
 * The text with nothing in it that signs anyone in: every link's query values and fragment, and any
 * long token-like run (a token in a link's path, or on its own), become `[redacted]`.
 */
export function redactLinks(text: string): string {
  return text
    .replace(LINK, (link) => {
      const hash = link.indexOf('#');
      const url = hash === -1 ? link : link.slice(0, hash);
      const q = url.indexOf('?');
      const query =
        q === -1
          ? ''
          : `?${url
              .slice(q + 1)
              .split('&')
              .map((param) => param.replace(/=.*$/s, '=[redacted]'))
              .join('&')}`;
      return `${q === -1 ? url : url.slice(0, q)}${query}${hash === -1 ? '' : '#[redacted]'}`;
    })
    .replace(TOKEN_LIKE, '[redacted]');
}

/**
 * No SMTP_URL: mails go to the log. In development the link is the point of printing the mail. In
 * production the links are redacted: a log is read by more people than a mailbox. (Production
 * refuses to start without SMTP_URL; this is the second line of defence.)
 */
export function createLogMailer(logger: Logger, opts: { redactLinks?: boolean } = {}): MailTransport {
  const redact = opts.redactLinks ?? false;
  return {
    async send(mail) {
      const text = redact ? redactLinks(mail.text) : mail.text;
      const note = redact
        ? 'no SMTP_URL set, printed instead with its links redacted'
        : 'no SMTP_URL set, printed instead';
      logger.info({ mail: { to: mail.to, subject: mail.subject } }, `mail (${note}):\n${text}`);
    },
    async close() {},
  };
}

/** SMTP when SMTP_URL is set, else the log (links redacted in production). */
export function createMailer(config: Pick<Config, 'env' | 'smtpUrl' | 'mailFrom'>, logger: Logger): MailTransport {
  if (config.smtpUrl) return createSmtpMailer(config.smtpUrl, config.mailFrom);
  return createLogMailer(logger, { redactLinks: config.env === 'production' });
}

/** Sent after the answer (after commit): a mail failure is logged, never thrown at the caller. */
export function sendLater(mailer: Mailer, logger: Logger, mail: Mail): void {
  mailer.later(() =>
    mailer
      .send(mail)
      .catch((err: Error) =>
        logger.error({ err: { message: err.message }, to: mail.to, subject: mail.subject }, 'mail delivery failed'),
      ),
  );
}
