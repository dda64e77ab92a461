// Mail goes out through nodemailer over SMTP_URL, or, with no SMTP configured, to the log with its
// links so a developer can follow them. Sending happens after the transaction commits and never
// fails the request that caused it.
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): Promise<void>;
}

export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
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

export function createLogMailer(logger: Logger): Mailer {
  return {
    async send(mail) {
      // Development only (no SMTP_URL): the link is the point of printing the mail.
      logger.info({ mail: { to: mail.to, subject: mail.subject } }, `mail (no SMTP_URL set, printed instead):\n${mail.text}`);
    },
    async close() {},
  };
}

/** Fire and forget, after commit: a mail failure is logged, never thrown at the caller. */
export function sendLater(mailer: Mailer, logger: Logger, mail: Mail): void {
  mailer.send(mail).catch((err: Error) => logger.error({ err: { message: err.message }, to: mail.to, subject: mail.subject }, 'mail delivery failed'));
}
