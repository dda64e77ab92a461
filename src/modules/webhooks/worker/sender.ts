// One POST to a webhook endpoint. Connections go through an undici Agent (a pool per destination)
// whose DNS lookup refuses private addresses and hands the checked address to the socket, so there
// is no window between the check and the connection (DNS rebinding). Redirects are not followed.
// The request goes straight to the Agent's dispatch with a small handler (no response stream): the
// status, the first characters of the body, the Location of a redirect and the Retry-After of a 429
// or 503 are all it keeps.
import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import type { Config } from '../../../config.js';
import { isPrivateAddress } from '../../../lib/ssrf.js';

export interface SendResult {
  status: number | null;
  body: string | null;
  error: string | null;
  durationMs: number;
  /** The Retry-After header of a 429 or 503 answer (as sent), else absent or null. */
  retryAfter?: string | null;
}

const BODY_LIMIT = 500;
// Read this much of a body at most (a multibyte body needs more than BODY_LIMIT bytes), then hang up.
const READ_LIMIT = BODY_LIMIT * 4;

class BlockedAddressError extends Error {}

/**
 * What a refused destination records. The error is stored on the delivery and shown to every member
 * in the deliveries list, so it never says what a hostname resolved to (the internal address an
 * attacker would be probing for), nor which address literal was refused.
 */
const NOT_ALLOWED = 'blocked: destination not allowed';

const safeLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const blocked = addresses.find((a) => isPrivateAddress(a.address));
    if (blocked || addresses.length === 0) {
      return callback(
        new BlockedAddressError(blocked ? 'the host resolves to a non-public address' : 'the host has no address'),
        '',
        0,
      );
    }
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

interface Target {
  origin: string;
  path: string;
  /** Why it is refused before any connection (an unparsable URL, a private address literal). */
  refused: string | null;
}

// What the database may hold and PostgreSQL text cannot: NUL.
const clean = (s: string) => (s.includes('\0') ? s.replaceAll('\0', '') : s);

export interface SenderOptions {
  /** Connections per origin (requests to one origin beyond this wait for a free connection). */
  connectionsPerOrigin?: number;
}

/** How early an attempt may end: a timer's resolution (Node's timers count whole milliseconds), and more. */
const SWEEP_SLACK_MS = 5;

/**
 * The attempts running, oldest first. Every attempt has the same timeout, so deadlines come in the
 * order attempts start: one timer, on the oldest, serves them all (a timer per attempt cost more
 * than the check itself). Memory follows the attempts in flight.
 */
class Running {
  first: Attempt | null = null;
  last: Attempt | null = null;
  timer: NodeJS.Timeout | null = null;

  add(a: Attempt) {
    a.prev = this.last;
    if (this.last) this.last.next = a;
    else this.first = a;
    this.last = a;
    if (!this.timer) this.arm();
  }

  remove(a: Attempt) {
    if (a.prev) a.prev.next = a.next;
    else if (this.first === a) this.first = a.next;
    if (a.next) a.next.prev = a.prev;
    else if (this.last === a) this.last = a.prev;
    a.prev = a.next = null;
  }

  arm() {
    if (!this.first) return;
    this.timer = setTimeout(() => this.sweep(), Math.max(0, this.first.deadline - performance.now()));
    this.timer.unref();
  }

  sweep() {
    this.timer = null;
    // Deadlines closer than a timer can wait end together: attempts started in one tick (one batch)
    // end in one sweep, so one of them that waited for a connection never takes the connection that
    // another one's end frees a moment before its own deadline.
    const now = performance.now() + SWEEP_SLACK_MS;
    // Each one past its deadline times out, which takes it off the list.
    while (this.first && this.first.deadline <= now) this.first.timeout();
    this.arm();
  }

  close() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** The values of one header (lowercase name) among undici's raw headers, joined with commas ('' if absent). */
function header(rawHeaders: Buffer[], name: string): string {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === name.length && rawHeaders[i]!.toString('latin1').toLowerCase() === name)
      values.push(rawHeaders[i + 1]!.toString('latin1'));
  }
  return values.join(',');
}

/**
 * One attempt, as undici's dispatch handler (onConnect, onHeaders, onData, onComplete, onError):
 * state in fields rather than closures, since there is one per delivery.
 */
class Attempt {
  status = 0;
  text = '';
  location: string | null = null;
  retryAfter: string | null = null;
  abort: ((err: Error) => void) | null = null;
  settled = false;
  timedOut = false;
  cut = false;
  // Neighbours in the list of running attempts (oldest first).
  prev: Attempt | null = null;
  next: Attempt | null = null;

  constructor(
    readonly started: number,
    readonly deadline: number,
    readonly timeoutMessage: string,
    /** Less than this left when a connection frees up for it: it is ended instead of written. */
    readonly minRemainingMs: number,
    readonly running: Running,
    readonly resolve: (r: SendResult) => void,
  ) {}

  finish(status: number | null, body: string | null, error: string | null) {
    if (this.settled) return;
    this.settled = true;
    this.running.remove(this);
    this.resolve({
      status,
      body: body === null ? null : clean(body),
      error: error === null ? null : clean(error),
      durationMs: Math.round(performance.now() - this.started),
      retryAfter: this.retryAfter,
    });
  }

  answered() {
    const redirect = this.status >= 300 && this.status < 400;
    this.finish(
      this.status,
      this.text.slice(0, BODY_LIMIT),
      redirect ? `redirect to ${this.location ?? ''} not followed` : null,
    );
  }

  timeout() {
    this.timedOut = true;
    this.abort?.(new Error(this.timeoutMessage));
    this.finish(null, null, this.timeoutMessage);
  }

  onConnect(abort: (err?: Error) => void) {
    this.abort = abort;
    // Timed out while it waited for a connection, or too little of its time is left to wait for an
    // answer (it would time out, be retried, and reach the receiver twice): nothing is written.
    if (this.timedOut) abort(new Error(this.timeoutMessage));
    else if (performance.now() + this.minRemainingMs >= this.deadline) this.timeout();
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]) {
    this.status = statusCode;
    if (statusCode >= 300 && statusCode < 400) this.location = header(rawHeaders, 'location');
    // The receiver asks for time: the retry rule decides what to make of it (retry.ts).
    else if (statusCode === 429 || statusCode === 503) this.retryAfter = header(rawHeaders, 'retry-after') || null;
    return true;
  }

  onData(chunk: Buffer) {
    this.text += chunk.toString('utf8');
    if (this.text.length >= READ_LIMIT) {
      // Enough: hang up on the rest (the connection is not reused).
      this.cut = true;
      this.answered();
      this.abort?.(new Error('response body cut'));
      return false;
    }
    return true;
  }

  onComplete() {
    this.answered();
  }

  onError(err: Error) {
    if (this.cut || this.settled) return;
    const e = err as Error & { cause?: unknown; code?: string; syscall?: string };
    const blocked = e instanceof BlockedAddressError ? e : e.cause instanceof BlockedAddressError ? e.cause : null;
    // Connection failures name the code, not the address tried (Node and undici put it in the message).
    const message = blocked
      ? `${NOT_ALLOWED} (${blocked.message})`
      : e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT'
        ? this.timeoutMessage
        : e.code === 'UND_ERR_CONNECT_TIMEOUT'
          ? 'connect timeout'
          : typeof e.syscall === 'string' && typeof e.code === 'string'
            ? `${e.syscall} ${e.code}`
            : e.message;
    this.finish(null, null, message.slice(0, 500));
  }
}

export function createWebhookSender(cfg: Config['webhook'], opts: SenderOptions = {}) {
  const agent = new Agent({
    connections: opts.connectionsPerOrigin ?? 16,
    // One request at a time per connection: a slow answer holds back nothing queued behind it.
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { timeout: Math.min(cfg.timeoutMs, 10_000), ...(cfg.allowPrivateUrls ? {} : { lookup: safeLookup }) },
  });

  // Parsed URLs (origin, path, the address-literal check), by URL.
  const targets = new Map<string, Target>();
  function targetOf(url: string): Target {
    let t = targets.get(url);
    if (t) return t;
    try {
      const u = new URL(url);
      let refused: string | null = null;
      if (!cfg.allowPrivateUrls) {
        // An address literal never reaches the lookup: check it here.
        const host = u.hostname.replace(/^\[|\]$/g, '');
        if (isIP(host) && isPrivateAddress(host)) refused = `${NOT_ALLOWED} (a non-public address)`;
      }
      // As undici's request() does: the origin, then path and query (no credentials, no fragment).
      t = { origin: u.origin, path: u.search ? `${u.pathname}${u.search}` : u.pathname, refused };
    } catch (err) {
      t = { origin: '', path: '', refused: (err as Error).message.slice(0, 500) };
    }
    if (targets.size >= 10_000) targets.clear();
    targets.set(url, t);
    return t;
  }

  const timeoutMessage = `timeout after ${cfg.timeoutMs} ms`;
  // The sweep ends every attempt at its deadline. undici's own timers are only a backstop, set
  // later: fired first (their clock starts when the request is written, on the loop's cached
  // time), one would end an attempt early and free its connection for an attempt queued behind it
  // whose deadline had come too, which would then be sent.
  const backstopMs = cfg.timeoutMs + 1_000;
  // An attempt that waited for a connection is written only with a tenth of its timeout left at least.
  const minRemainingMs = Math.max(SWEEP_SLACK_MS, cfg.timeoutMs / 10);

  // The whole attempt is bounded by WEBHOOK_TIMEOUT_MS, connection included.
  const running = new Running();

  return {
    send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
      const started = performance.now();
      const target = targetOf(url);
      if (target.refused)
        return Promise.resolve({
          status: null,
          body: null,
          error: target.refused,
          durationMs: Math.round(performance.now() - started),
        });
      return new Promise<SendResult>((resolve) => {
        const attempt = new Attempt(started, started + cfg.timeoutMs, timeoutMessage, minRemainingMs, running, resolve);
        running.add(attempt);
        try {
          agent.dispatch(
            {
              origin: target.origin,
              path: target.path,
              method: 'POST',
              body,
              headers,
              headersTimeout: backstopMs,
              bodyTimeout: backstopMs,
            },
            attempt as unknown as Dispatcher.DispatchHandler,
          );
        } catch (err) {
          attempt.finish(null, null, (err as Error).message.slice(0, 500));
        }
      });
    },
    close: async () => {
      running.close();
      await agent.close();
    },
  };
}
