// A signed-in person: sign in once, then call the API with `session.client`. The session keeps the
// token pair; when a call answers 401 (the 15-minute access token expired) it refreshes the pair
// once with POST /api/v1/auth/refresh and sends the call again. Concurrent 401s share one refresh,
// since a refresh token works once (docs/api.md#tokens-and-refresh). A refresh the API refuses
// ends the session (the pair is dropped, `onTokens(null)` is called) and the 401 is answered.
import { createClient, type ClientOptions, type LoginResponse, type TokenPair } from './client.js';
import type { components } from './schema.js';

type Body<Name extends keyof components['schemas']> = components['schemas'][Name];

export interface SessionOptions extends Omit<ClientOptions, 'accessToken' | 'apiKey'> {
  /** A pair saved from an earlier session. */
  tokens?: TokenPair | null;
  /** Called with every new pair (sign-in, refresh) and with null when the session ends: persist it here. */
  onTokens?: (tokens: TokenPair | null) => void | Promise<void>;
}

export type Session = ReturnType<typeof createSession>;

// Sign-in routes take no access token, and their 401 is an answer about the credentials given, not
// an expired token: the session neither sends its token there nor refreshes on their 401.
const PUBLIC_AUTH =
  /\/api\/v1\/auth\/(?:login|refresh|register|verify-email|resend-verification|password\/|magic-link|two-factor\/login|oauth\/)/;

const pairOf = (r: LoginResponse | TokenPair): TokenPair => ({
  accessToken: r.accessToken,
  refreshToken: r.refreshToken,
  expiresIn: r.expiresIn,
  organizationId: r.organizationId,
});

export function createSession(options: SessionOptions) {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  let current: TokenPair | null = options.tokens ?? null;
  let refreshing: Promise<TokenPair | null> | null = null;
  // Sign-in and refresh calls: no token, no retry.
  const plain = createClient({ ...options, fetch: send });

  async function setTokens(tokens: TokenPair | null) {
    current = tokens;
    await options.onTokens?.(tokens);
  }

  async function refreshPair(): Promise<TokenPair | null> {
    const pair = current;
    if (!pair) return null;
    const { data, response } = await plain.POST('/api/v1/auth/refresh', { body: { refreshToken: pair.refreshToken } });
    if (data) {
      await setTokens(pairOf(data));
      return current;
    }
    // Refused (spent, revoked or expired): the session is over. Other failures keep the pair.
    if (response.status === 401 && current === pair) await setTokens(null);
    return null;
  }

  /** One refresh for every caller that saw `used` fail; a pair already replaced is simply used. */
  function freshPair(used: TokenPair): Promise<TokenPair | null> {
    if (current && current.accessToken !== used.accessToken) return Promise.resolve(current);
    refreshing ??= refreshPair().finally(() => {
      refreshing = null;
    });
    return refreshing;
  }

  const withToken = (request: Request, pair: TokenPair) => {
    request.headers.set('authorization', `Bearer ${pair.accessToken}`);
    return request;
  };

  async function sessionFetch(request: Request): Promise<Response> {
    const pair = current;
    const own = request.headers.has('authorization') || request.headers.has('x-api-key');
    if (!pair || own || PUBLIC_AUTH.test(new URL(request.url).pathname)) return send(request);
    const retry = request.clone();
    const first = await send(withToken(request, pair));
    if (first.status !== 401) return first;
    const fresh = await freshPair(pair);
    if (!fresh) return first;
    await first.body?.cancel();
    return send(withToken(retry, fresh));
  }

  const client = createClient({ ...options, fetch: sessionFetch });

  /** Keeps the pair of a successful sign-in. */
  async function kept<R extends { data?: LoginResponse }>(result: R): Promise<R> {
    if (result.data) await setTokens(pairOf(result.data));
    return result;
  }

  return {
    /** The API as the signed-in person: refreshes the pair and retries once on 401. */
    client,
    /** The pair in use, or null when signed out. */
    tokens: (): TokenPair | null => current,
    /** Uses a pair obtained elsewhere (a social sign-in callback), or null to forget it. */
    setTokens,
    /** POST /auth/login; the session keeps the pair. A 401 with `requiresTwoFactor`: send it again with `twoFactorCode`. */
    signIn: async (body: Body<'LoginRequest'>) => kept(await plain.POST('/api/v1/auth/login', { body })),
    /** POST /auth/magic-link/verify; the session keeps the pair. */
    signInWithMagicLink: async (body: Body<'MagicLinkVerifyRequest'>) =>
      kept(await plain.POST('/api/v1/auth/magic-link/verify', { body })),
    /** POST /auth/two-factor/login, after a social sign-in asked for a code; the session keeps the pair. */
    completeTwoFactorLogin: async (body: Body<'TwoFactorLoginRequest'>) =>
      kept(await plain.POST('/api/v1/auth/two-factor/login', { body })),
    /** Refreshes the pair now; false when there is none or the API refused it (the session then ends). */
    refresh: async (): Promise<boolean> => Boolean(current && (await freshPair(current))),
    /** POST /auth/logout, then forgets the pair (also when the API says the session had already ended). */
    async signOut(): Promise<void> {
      if (!current) return;
      const { response } = await client.POST('/api/v1/auth/logout');
      if (!response.ok && response.status !== 401) throw new Error(`Sign-out failed: ${response.status}`);
      await setTokens(null);
    },
  };
}
