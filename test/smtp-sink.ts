// A local SMTP server that keeps what it receives, so tests read links from real mail.
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  raw: string;
  /** The raw message with quoted-printable soft breaks and escapes decoded. */
  decoded: string;
  subject: string;
}

function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export async function startSmtpSink() {
  const mails: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  let open = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onConnect(_session, callback) {
      open++;
      callback();
    },
    onClose() {
      open--;
      waiters.splice(0).forEach((w) => w());
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const subject = /^Subject: (.*)$/m.exec(raw)?.[1]?.trim() ?? '';
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          raw,
          decoded: decodeQuotedPrintable(raw),
          subject,
        });
        waiters.splice(0).forEach((w) => w());
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;

  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    /**
     * Set by the harness: resolves once the app's mail work has settled (its mailer's idle()), so a
     * mail that was going to be sent has arrived. Mail sent by other processes is waited for below.
     */
    idle: async (): Promise<void> => {},
    /** Waits for a mail to `to` whose subject matches: the app's mail work first, then (another sender) at most `timeoutMs`. */
    async waitFor(to: string, subject: RegExp, timeoutMs = 5000): Promise<ReceivedMail> {
      await this.idle();
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = mails.find((m) => m.to.includes(to.toLowerCase()) && subject.test(m.subject));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`No mail to ${to} matching ${subject} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    /**
     * Resolves once no SMTP session is open: every mail whose sending had begun has arrived (the app
     * opens one session per mail). After a marker mail asked for later has arrived, a mail that was
     * going to be sent earlier would be here by then.
     */
    async settled(timeoutMs = 5000): Promise<void> {
      await this.idle();
      const deadline = Date.now() + timeoutMs;
      while (open > 0) {
        if (Date.now() > deadline) throw new Error(`${open} SMTP sessions still open after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    /** The token of the first `{path}?token=` link in the newest matching mail. */
    async tokenFrom(to: string, subject: RegExp, path: string): Promise<string> {
      await this.waitFor(to, subject);
      const matching = mails.filter((m) => m.to.includes(to.toLowerCase()) && subject.test(m.subject));
      const mail = matching[matching.length - 1]!;
      const m = new RegExp(`${path.replace(/[/]/g, '\\/')}\\?token=([A-Za-z0-9_%-]+)`).exec(mail.decoded);
      if (!m) throw new Error(`No ${path} link in mail: ${mail.decoded}`);
      return decodeURIComponent(m[1]!);
    },
    clear() {
      mails.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type SmtpSink = Awaited<ReturnType<typeof startSmtpSink>>;
