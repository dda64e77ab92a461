// A real local OAuth 2.0 / OIDC server for the social sign-in tests (oauth2-mock-server): it serves
// /authorize, /token (checking PKCE) and /userinfo, plus GitHub's REST API shape under /github
// (GET /github/user and /github/user/emails). Each authorization is tied to the identity the test
// chose, carried from the code to the access token, so the profile an app reads is the one the
// token was issued for.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Events,
  OAuth2Issuer,
  OAuth2Service,
  type MutableRedirectUri,
  type MutableResponse,
  type TokenRequestIncomingMessage,
} from 'oauth2-mock-server';

export interface Identity {
  /** The provider's account id (Google `sub`, GitHub numeric `id`). */
  sub: string;
  email: string | null;
  emailVerified: boolean;
  name?: string;
  /** GitHub only: the full /user/emails list (defaults to the one primary email). */
  githubEmails?: Array<{ email: string; primary: boolean; verified: boolean }>;
}

export interface AuthorizeResult {
  code: string;
  state: string;
  /** The redirect the provider sent the browser to (our callback). */
  location: URL;
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
};

/** Environment for createTestApp: Google with its endpoints at `issuer`. */
export const googleEnv = (issuer: string) => ({
  GOOGLE_CLIENT_ID: 'google-client-id',
  GOOGLE_CLIENT_SECRET: 'google-client-secret',
  GOOGLE_AUTHORIZATION_URL: `${issuer}/authorize`,
  GOOGLE_TOKEN_URL: `${issuer}/token`,
  GOOGLE_USERINFO_URL: `${issuer}/userinfo`,
});

export async function startOAuthServer() {
  // oauth2-mock-server 8 (the last major that supports Node 20) has no route of one's own beside its
  // endpoints: GitHub's REST API is answered here, everything else by the mock server's handler.
  const oauthIssuer = new OAuth2Issuer();
  await oauthIssuer.keys.generate('RS256');
  const service = new OAuth2Service(oauthIssuer);
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const http = createServer((req, res) => {
    const route = req.method === 'GET' ? routes.get(new URL(req.url ?? '/', 'http://x').pathname) : undefined;
    if (route) route(req, res);
    else service.requestHandler(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  oauthIssuer.url = issuer;
  const server = { service };

  let nextIdentity: Identity | null = null;
  const byCode = new Map<string, Identity>();
  const byToken = new Map<string, Identity>();
  /** Bodies of the token requests received, for assertions on what the client sent. */
  const tokenRequests: Array<Record<string, unknown>> = [];

  server.service.on(Events.BeforeAuthorizeRedirect, (redirect: MutableRedirectUri) => {
    const code = redirect.url.searchParams.get('code');
    if (code && nextIdentity) byCode.set(code, nextIdentity);
    nextIdentity = null;
  });
  server.service.on(Events.BeforeResponse, (response: MutableResponse, req: TokenRequestIncomingMessage) => {
    tokenRequests.push({ ...req.body });
    const identity = req.body.code ? byCode.get(req.body.code) : undefined;
    if (response.statusCode === 200 && typeof response.body === 'object' && identity) {
      byToken.set(String(response.body.access_token), identity);
    }
  });

  const identityOf = (req: { headers: { authorization?: string } }) => {
    const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    return token ? byToken.get(token) : undefined;
  };

  server.service.on(Events.BeforeUserinfo, (response: MutableResponse, req: IncomingMessage) => {
    const who = identityOf(req);
    if (!who) {
      response.statusCode = 401;
      response.body = { error: 'invalid_token' };
      return;
    }
    response.body = {
      sub: who.sub,
      ...(who.email ? { email: who.email, email_verified: who.emailVerified } : {}),
      ...(who.name ? { name: who.name } : {}),
    };
  });

  routes.set('/github/user', (req, res) => {
    const who = identityOf(req);
    if (!who) return send(res, 401, { message: 'Bad credentials' });
    send(res, 200, {
      id: Number(who.sub),
      login: `user${who.sub}`,
      name: who.name ?? null,
      avatar_url: `https://avatars.example/${who.sub}`,
      email: null,
    });
  });
  routes.set('/github/user/emails', (req, res) => {
    const who = identityOf(req);
    if (!who) return send(res, 401, { message: 'Bad credentials' });
    send(
      res,
      200,
      who.githubEmails ??
        (who.email ? [{ email: who.email, primary: true, verified: who.emailVerified, visibility: 'private' }] : []),
    );
  });

  return {
    issuer,
    tokenRequests,
    /** Environment for createTestApp: Google pointed at this server. */
    googleEnv: googleEnv(issuer),
    /** Environment for createTestApp: GitHub pointed at this server. */
    githubEnv: {
      GITHUB_CLIENT_ID: 'github-client-id',
      GITHUB_CLIENT_SECRET: 'github-client-secret',
      GITHUB_AUTHORIZATION_URL: `${issuer}/authorize`,
      GITHUB_TOKEN_URL: `${issuer}/token`,
      GITHUB_API_URL: `${issuer}/github`,
    },
    /**
     * What the browser does at the provider: open the authorization URL the app redirected to,
     * signed in as `identity`, and read the code and state from the redirect back.
     */
    async authorize(authorizationUrl: string, identity: Identity): Promise<AuthorizeResult> {
      nextIdentity = identity;
      const res = await fetch(authorizationUrl, { redirect: 'manual' });
      if (res.status !== 302) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
      const location = new URL(res.headers.get('location')!);
      return { code: location.searchParams.get('code')!, state: location.searchParams.get('state')!, location };
    },
    /**
     * The next authorization (a browser's visit to /authorize, which the server answers at once with
     * its redirect back) signs in as `identity`.
     */
    signInNextAs(identity: Identity) {
      nextIdentity = identity;
    },
    /**
     * The next token request is refused as a provider refuses a used or invalid code: 400 invalid_grant
     * (RFC 6749), or GitHub's way, 200 with an error body.
     */
    refuseNextCode(status = 400, error = 'invalid_grant') {
      server.service.once(Events.BeforeResponse, (response: MutableResponse) => {
        response.statusCode = status;
        response.body = { error, error_description: 'The authorization code is invalid or has been used' };
      });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.closeAllConnections();
        http.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

export type OAuthTestServer = Awaited<ReturnType<typeof startOAuthServer>>;
