// Cookie mode (docs/api.md#cookie-mode): the web app keeps its refresh token in an HttpOnly cookie,
// out of reach of its scripts. A sign-in or refresh sent with `X-Session-Mode: cookie` answers the
// refresh token in the `tenantry_refresh` cookie instead of the body. The cookie is read back by
// refresh and logout only when the request is in cookie mode and, if it names an Origin, comes from
// APP_ORIGIN, this service's own origin or the host the request was sent to: SameSite=Strict, a header that a cross-site form cannot
// send, and that Origin check together are the defence against cross-site request forgery.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';

export const REFRESH_COOKIE = 'tenantry_refresh';
const COOKIE_PATH = '/api/v1/auth';

/** The value of one cookie of a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [k, ...v] = part.trim().split('=');
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join('='));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Whether an Origin names the host the request was sent to: the page is this service's own, whatever
 * name it was opened by (http://127.0.0.1:3000 as well as the default APP_ORIGIN
 * http://localhost:3000). Browsers set Origin themselves, so no other site can claim it; and the
 * cookie of one host name is never sent to another.
 */
function sameHost(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** Whether the request asks for cookie mode (`X-Session-Mode: cookie`). */
export const inCookieMode = (request: FastifyRequest) => {
  const mode = request.headers['x-session-mode'];
  return typeof mode === 'string' && mode.trim().toLowerCase() === 'cookie';
};

export type SessionCookies = ReturnType<typeof sessionCookies>;

export function sessionCookies(config: Config) {
  const attributes = `HttpOnly; SameSite=Strict; Path=${COOKIE_PATH}`;
  const secure = config.publicApiUrl.startsWith('https:') ? '; Secure' : '';
  const trustedOrigins = new Set([config.appOrigin, new URL(config.publicApiUrl).origin]);

  return {
    /**
     * The answer of a sign-in or a refresh: unchanged, or in cookie mode without its refresh token,
     * which goes into the cookie (valid as long as the token).
     */
    deliver<T extends { refreshToken?: string }>(request: FastifyRequest, reply: FastifyReply, answer: T): T {
      if (!inCookieMode(request) || answer.refreshToken === undefined) return answer;
      const { refreshToken, ...rest } = answer;
      reply.header(
        'set-cookie',
        `${REFRESH_COOKIE}=${refreshToken}; ${attributes}; Max-Age=${config.auth.refreshTtlS}${secure}`,
      );
      return rest as T;
    },

    /**
     * The refresh token of a request: the body's, else the cookie's, which only counts in cookie mode
     * and from a trusted Origin. Browsers name the Origin on every POST, so a request without one is
     * not a browser's cross-site request.
     */
    refreshToken(request: FastifyRequest, fromBody: string | undefined): string | undefined {
      if (fromBody !== undefined) return fromBody;
      if (!inCookieMode(request)) return undefined;
      const origin = request.headers.origin;
      if (origin !== undefined && !trustedOrigins.has(origin) && !sameHost(origin, request.headers.host))
        return undefined;
      return readCookie(request.headers.cookie, REFRESH_COOKIE) || undefined;
    },

    /** Whether the request meant to use the cookie: in cookie mode, or sending it. */
    attempted(request: FastifyRequest): boolean {
      return inCookieMode(request) || readCookie(request.headers.cookie, REFRESH_COOKIE) !== undefined;
    },

    /** In cookie mode, the answer removes the cookie (logout, sign-out everywhere). */
    clear(request: FastifyRequest, reply: FastifyReply): void {
      if (inCookieMode(request)) reply.header('set-cookie', `${REFRESH_COOKIE}=; ${attributes}; Max-Age=0${secure}`);
    },
  };
}
