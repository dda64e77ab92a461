// At most MAILS_PER_ADDRESS mails of one kind to one address in any MAIL_WINDOW_MS (docs/api.md#mail-cap):
// the routes that mail an address anyone can type (sign-in link, reset, verification, invitation,
// email change) would otherwise let anyone flood a stranger's mailbox from our domain. The request
// answers as usual either way; only the sending is skipped, after the answer, so neither the status,
// the body nor the time says whether a mail left (or whether the account exists).
//
// A sliding log, not a fixed window: the send times of the last hour per (kind, address), so no 60
// minutes ever hold more than 5, across a window boundary included. With Redis the log is a sorted
// set that every instance shares, trimmed and appended to by one script (atomic: parallel requests on
// several instances cannot all take the 5th place); without Redis it lives in this process, which is
// then the only instance. Times come from the app clock. Addresses are keyed by their SHA-256, so
// Redis holds no address.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { randomToken, sha256 } from '../lib/secrets.js';
import { type Mail, type Mailer, sendLater } from '../providers/mail/mailer.js';
import type { ServiceMetrics } from './metrics.js';

export const MAIL_KINDS = ['verification', 'sign_in_link', 'password_reset', 'invitation', 'email_change'] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

export const MAILS_PER_ADDRESS = 5;
export const MAIL_WINDOW_MS = 60 * 60 * 1000;

export interface MailCap {
  /** Takes one of the address's places for `kind` in the last hour: false when all are taken. */
  take(kind: MailKind, address: string): Promise<boolean>;
}

// KEYS[1] the log; ARGV: now (ms), window (ms), cap, a unique member.
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

export function createMailCap(redis: Redis | null, keyPrefix: string, clock: Clock, logger: Logger): MailCap {
  const local = new Map<string, number[]>();
  let lastSweep = 0;

  function takeLocal(key: string, now: number): boolean {
    if (now - lastSweep > MAIL_WINDOW_MS) {
      lastSweep = now;
      for (const [k, times] of local) if (times[times.length - 1]! <= now - MAIL_WINDOW_MS) local.delete(k);
    }
    const times = (local.get(key) ?? []).filter((t) => t > now - MAIL_WINDOW_MS);
    if (times.length >= MAILS_PER_ADDRESS) {
      local.set(key, times);
      return false;
    }
    times.push(now);
    local.set(key, times);
    return true;
  }

  return {
    async take(kind, address) {
      const key = `${keyPrefix}mailcap:${kind}:${sha256(address.trim().toLowerCase())}`;
      const now = clock.now().getTime();
      if (!redis) return takeLocal(key, now);
      try {
        return (
          (await redis.eval(TAKE, 1, key, now, MAIL_WINDOW_MS, MAILS_PER_ADDRESS, `${now}:${randomToken(6)}`)) === 1
        );
      } catch (err) {
        // Redis unreachable: this process's own count still caps what it sends.
        logger.warn(
          { err: { message: (err as Error).message } },
          'mail cap: Redis unavailable, counting in this process',
        );
        return takeLocal(key, now);
      }
    },
  };
}

/**
 * Sends `mail` after the answer, unless its address already had its MAILS_PER_ADDRESS mails of this
 * kind in the last hour. Never throws; the caller answers the same either way.
 */
export function sendCapped(
  deps: { mailCap: MailCap; mailer: Mailer; logger: Logger; metrics: ServiceMetrics },
  kind: MailKind,
  mail: Mail,
): void {
  deps.mailer.later(() => whenAllowed(deps, kind, mail.to, async () => sendLater(deps.mailer, deps.logger, mail)));
}

/**
 * Runs `send` (which makes and sends the mail: a mailed token is only issued when it will be sent, so
 * a held-back request never voids the link the address received last) if the cap allows a mail of
 * `kind` to `address`. Never throws.
 */
export async function whenAllowed(
  deps: { mailCap: MailCap; logger: Logger; metrics: ServiceMetrics },
  kind: MailKind,
  address: string,
  send: () => Promise<void>,
): Promise<void> {
  try {
    if (!(await deps.mailCap.take(kind, address))) {
      deps.metrics.mailCapped(kind);
      deps.logger.info(
        { kind, to: address },
        `mail not sent: ${MAILS_PER_ADDRESS} of this kind went to the address in the last hour`,
      );
      return;
    }
    await send();
  } catch (err) {
    deps.logger.error({ err: { message: (err as Error).message }, kind }, 'mail not sent');
  }
}
