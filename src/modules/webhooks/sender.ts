// One POST to a webhook endpoint. Connections go through an undici Agent (a pool per destination)
// whose DNS lookup refuses private addresses and hands the checked address to the socket, so there
// is no window between the check and the connection (DNS rebinding). Redirects are not followed.
import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import type { Config } from '../../config.js';
import { isPrivateAddress } from '../../lib/ssrf.js';

export interface SendResult {
  status: number | null;
  body: string | null;
  error: string | null;
  durationMs: number;
}

const BODY_LIMIT = 500;

class BlockedAddressError extends Error {}

const safeLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const blocked = addresses.find((a) => isPrivateAddress(a.address));
    if (blocked || addresses.length === 0) {
      return callback(new BlockedAddressError(`${hostname} resolves to a private address (${blocked?.address ?? 'none'})`), '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

async function readLimited(body: AsyncIterable<Buffer>): Promise<string> {
  let text = '';
  for await (const chunk of body) {
    text += chunk.toString('utf8');
    if (text.length >= BODY_LIMIT * 4) break;
  }
  return text.slice(0, BODY_LIMIT);
}

export function createWebhookSender(cfg: Config['webhook']) {
  const agent = new Agent({
    connections: 16,
    keepAliveTimeout: 30_000,
    connect: { timeout: Math.min(cfg.timeoutMs, 10_000), ...(cfg.allowPrivateUrls ? {} : { lookup: safeLookup }) },
  });

  return {
    async send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
      const started = performance.now();
      const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({ ...r, durationMs: Math.round(performance.now() - started) });
      if (!cfg.allowPrivateUrls) {
        // An address literal never reaches the lookup: check it here.
        const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
        if (isIP(host) && isPrivateAddress(host)) return done({ status: null, body: null, error: `blocked: ${host} is a private address` });
      }
      const signal = AbortSignal.timeout(cfg.timeoutMs);
      try {
        const res = await request(url, { method: 'POST', body, headers, dispatcher: agent, signal, headersTimeout: cfg.timeoutMs, bodyTimeout: cfg.timeoutMs });
        const text = await readLimited(res.body).catch(() => '');
        res.body.destroy();
        const redirect = res.statusCode >= 300 && res.statusCode < 400;
        return done({ status: res.statusCode, body: text, error: redirect ? `redirect to ${String(res.headers.location ?? '')} not followed` : null });
      } catch (err) {
        const e = err as Error & { cause?: unknown };
        const blocked = e instanceof BlockedAddressError ? e : e.cause instanceof BlockedAddressError ? e.cause : null;
        const message = blocked ? `blocked: ${blocked.message}` : signal.aborted ? `timeout after ${cfg.timeoutMs} ms` : e.message;
        return done({ status: null, body: null, error: message.slice(0, 500) });
      }
    },
    close: () => agent.close(),
  };
}
