// What a request log line says about the request. Mailed links carry live tokens in their query
// (`/verify-email?token=…`, `/reset-password`, `/magic-link`, `/invitations/accept`,
// `/confirm-email`), a provider's callback its authorization `code`: a log line must carry none of
// them, since logs are kept longer and read by more people than the tokens' owners.
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/** Query parameters whose value is a credential: `token`, `code`, and any name ending in `token`. */
const SECRET_PARAM = /^(?:code|.*token)$/i;
export const REDACTED = '[redacted]';

function decode(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * A request URL with the values of its secret query parameters replaced by `[redacted]`. A value that
 * is itself an address with a query (the web app's `?next=/invitations/accept?token=…`) is redacted
 * the same way, a few levels deep. The path and the other parameters stay as sent.
 */
export function redactUrl(url: string, depth = 0): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash === -1 ? undefined : hash);
  const pairs = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq === -1) return pair;
    const name = decode(pair.slice(0, eq));
    // A name that cannot be decoded might still be read as a secret's by something: hide its value.
    if (name === null || SECRET_PARAM.test(name.trim())) return `${pair.slice(0, eq)}=${REDACTED}`;
    const value = decode(pair.slice(eq + 1));
    if (value === null || depth >= 3 || !value.includes('?')) return pair;
    const inner = redactUrl(value, depth + 1);
    return inner === value ? pair : `${pair.slice(0, eq)}=${encodeURIComponent(inner)}`;
  });
  return `${url.slice(0, q)}?${pairs.join('&')}${hash === -1 ? '' : url.slice(hash)}`;
}

const PROBES = /^\/(?:health|ready|metrics)(?:[/?#]|$)/;
const API_OR_DOCS = /^\/(?:api\/v1|docs)(?:[/?#]|$)/;

/**
 * Requests that write no log line: health probes and /metrics (a scraper calls them every few
 * seconds), the docs UI's files, and the web app's files (a path whose last segment has an extension:
 * scripts, styles, images). A page (/sign-in, /verify-email?token=…) is logged.
 */
export function isQuietRequest(url: string): boolean {
  if (PROBES.test(url)) return true;
  const pathname = url.replace(/[?#].*$/, '');
  if (pathname.startsWith('/docs/static/')) return true;
  return !API_OR_DOCS.test(pathname) && /\/[^/]*\.[A-Za-z0-9]+$/.test(pathname);
}

/** The `req` of request log lines: Fastify's own fields, with the URL's secrets redacted. */
export function serializeRequest(req: FastifyRequest) {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/**
 * Fastify's request lines, minus the quiet requests (isQuietRequest). In JSON, the two lines of
 * Fastify (`incoming request`, then `request completed` with the status and time); in pretty, the
 * second only, which carries the method and URL too, so one readable line is one request.
 */
export class RequestLogController extends LogController {
  constructor(private readonly pretty: boolean) {
    super();
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (this.pretty || isQuietRequest(request.url)) return;
    super.incomingRequest(request, reply, metadata);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request) || isQuietRequest(request.url)) return;
    const fields = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}
