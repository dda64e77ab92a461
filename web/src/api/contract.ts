// The paths the web app calls: the generated ones of @tenantry/client, plus the two parts of the
// browser-session contract (cookie mode) that the generated schema may not describe yet:
// - POST /auth/refresh with `X-Session-Mode: cookie` takes no refresh token (it is the HttpOnly
//   cookie), only an optional organizationId to make active, and answers {accessToken, expiresIn,
//   organizationId} without a refreshToken;
// A path the generated schema already has keeps its generated type; the refresh is always typed
// from this contract, since the browser never holds a refresh token to send.
import type { components, paths } from '@tenantry/client';

type Schemas = components['schemas'];
type Json<T> = { headers: { [name: string]: unknown }; content: { 'application/json': T } };
type NoParams = { query?: never; header?: never; path?: never; cookie?: never };
type Unused = { get?: never; put?: never; delete?: never; options?: never; head?: never; patch?: never; trace?: never };

/** A sign-in's answer in cookie mode: the refresh token is in the cookie, not the body. */
export type BrowserSignIn = Omit<Schemas['LoginResponse'], 'refreshToken'> & { refreshToken?: string };

interface CookieModePaths {
  '/api/v1/auth/refresh': {
    parameters: NoParams;
    post: {
      parameters: NoParams;
      requestBody?: { content: { 'application/json': { organizationId?: string | null } } };
      responses: {
        200: Json<{ accessToken: string; expiresIn: number; organizationId: string | null; refreshToken?: string }>;
        400: Json<Schemas['ErrorResponse']>;
        401: Json<Schemas['ErrorResponse']>;
        403: Json<Schemas['ErrorResponse']>;
        429: Json<Schemas['ErrorResponse']>;
        500: Json<Schemas['ErrorResponse']>;
        503: Json<Schemas['ErrorResponse']>;
      };
    };
  } & Unused;
}

export type WebPaths = Omit<paths, '/api/v1/auth/refresh'> & Pick<CookieModePaths, '/api/v1/auth/refresh'>;
