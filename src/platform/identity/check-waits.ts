// Checks of an account's secrets waiting for a place in its lockout budget (modules/auth/sign-in.ts).
// The database decides who gets a place; this only decides when a check asks it again, and in which
// order the checks of one process ask.
//
// Every check takes a ticket before asking, and the tickets of one account form a line in this
// process. A new check asks the database at once only when it is among the first `front` of the line
// (front = the budget: it does not jump a crowd of checks already waiting). A check that found every
// place taken waits until:
// - woken: a check of the same account ended, in this process or, with Redis, in any process (every
//   end is published on the `checks` channel), and said how many places are free; that many tickets
//   are woken, oldest first (all of them once the account is locked, so they answer 423 at once);
// - or its poll interval passed. The first ticket of the line then asks the database anyway: the
//   safety net for a place freed by a process that died, a lock that expired, a lost message, or
//   instances without Redis. The others only look at their deadline (a crowd of checks polling would
//   cost the database more than the sign-ins, and would take places out of turn).
//
// With Redis every wake goes through the channel, this process's own included, so the waiting checks
// of every instance hear of a free place at the same moment: waking the local ones first would let a
// busy instance keep an account's places to itself while another's checks time out.
//
// A ticket is in the line before its check asks the database, so a place freed between that question
// and the wait is not missed: the ticket is already woken when it starts waiting.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface CheckTicket {
  /** The ticket is among the first `front` of this process's line: the check may ask at once. */
  readonly front: boolean;
  /**
   * Waits until woken or `ms` passed. True when the check should ask the database now: it was woken,
   * or it is first in the line.
   */
  wait(ms: number): Promise<boolean>;
  /** The check got its place (or gave up): the ticket leaves the line; a wake it held goes to the next. */
  leave(): void;
}

export interface CheckWaits {
  /** A place in the account's line; `front`: how many of the line's first tickets may ask at once. */
  ticket(userId: string, front: number): CheckTicket;
  /** `places` (Infinity: every one) checks of the account may now get a place. */
  freed(userId: string, places: number): void;
  /** Tickets in this process that are waiting now (GET /metrics). */
  waiting(): number;
  close(): Promise<void>;
}

interface Entry {
  woken: boolean;
  resolve: (() => void) | null;
}

export function createCheckWaits(redis: Redis | null, channelPrefix: string, logger: Logger): CheckWaits {
  const lines = new Map<string, Entry[]>();
  let waiting = 0;
  const channel = `${channelPrefix}checks`;
  let subscriber: Redis | null = null;
  let subscribing: Promise<void> | null = null;
  let listening = false;
  let closed = false;

  function wakeLocal(userId: string, places: number) {
    const line = lines.get(userId);
    if (!line) return;
    let n = places;
    for (const e of line) {
      if (n <= 0) break;
      if (e.woken) continue;
      e.woken = true;
      e.resolve?.();
      n--;
    }
  }

  // Subscribed at the first wait: a process whose checks never wait (a worker, a quiet API) keeps no
  // second connection. Until then, and if Redis fails, the polls stand in.
  function subscribe() {
    if (!redis || closed || subscribing) return;
    const sub = redis.duplicate({ lazyConnect: true });
    sub.on('error', (err) => logger.warn({ err: { message: err.message } }, 'redis error (sign-in checks channel)'));
    sub.on('message', (_channel: string, message: string) => {
      const [userId, places] = message.split(' ');
      if (userId) wakeLocal(userId, places === 'all' ? Infinity : Number(places));
    });
    subscriber = sub;
    subscribing = sub
      .connect()
      .then(() => sub.subscribe(channel))
      .then(() => {
        listening = true;
      })
      .catch((err: Error) =>
        logger.warn({ err: { message: err.message } }, 'sign-in checks channel unavailable; waiting checks poll'),
      );
  }

  return {
    ticket(userId, front) {
      const entry: Entry = { woken: false, resolve: null };
      let line = lines.get(userId);
      if (!line) lines.set(userId, (line = []));
      line.push(entry);
      return {
        front: line.length <= front,
        async wait(ms) {
          subscribe();
          if (!entry.woken) {
            waiting++;
            let timer: NodeJS.Timeout | undefined;
            await new Promise<void>((resolve) => {
              entry.resolve = resolve;
              timer = setTimeout(resolve, ms);
            });
            clearTimeout(timer);
            entry.resolve = null;
            waiting--;
          }
          const woken = entry.woken;
          // The question it asks now is this wake's; a later end wakes it again.
          entry.woken = false;
          return woken || lines.get(userId)?.[0] === entry;
        },
        leave() {
          const l = lines.get(userId);
          if (!l) return;
          const i = l.indexOf(entry);
          if (i !== -1) l.splice(i, 1);
          if (l.length === 0) lines.delete(userId);
          else if (entry.woken) wakeLocal(userId, 1);
        },
      };
    },
    freed(userId, places) {
      if (places <= 0) return;
      if (!redis) {
        wakeLocal(userId, places);
        return;
      }
      // Every instance hears it, whether or not this one has checks waiting: another's may. Once this
      // process listens, its own tickets hear it through the channel like everyone else's.
      if (!listening) wakeLocal(userId, places);
      redis.publish(channel, `${userId} ${places === Infinity ? 'all' : places}`).catch((err: Error) => {
        logger.warn({ err: { message: err.message } }, 'sign-in checks channel: publish failed; waiting checks poll');
        if (listening) wakeLocal(userId, places);
      });
    },
    waiting: () => waiting,
    async close() {
      closed = true;
      if (subscriber) {
        await subscribing;
        subscriber.disconnect();
      }
    },
  };
}
