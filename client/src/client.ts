// createClient: the typed client (openapi-fetch over the generated schema.ts) with a credential.
import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** A named schema of the API: `Schema<'Project'>`, `Schema<'ErrorResponse'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];
export type ErrorCode = Schema<'ErrorCode'>;
export type ErrorResponse = Schema<'ErrorResponse'>;
export type SignInErrorResponse = Schema<'SignInErrorResponse'>;
export type TokenPair = Schema<'TokenPair'>;
export type LoginResponse = Schema<'LoginResponse'>;

/** The client: `GET`, `POST`, `PUT`, `PATCH`, `DELETE` on the API's paths, and `use` for middleware. */
export type TenantryClient = Client<paths, 'application/json'>;

/** An access token, or a function that gives the current one (sync or async); nothing: send none. */
export type AccessTokenSource = string | (() => string | null | undefined | Promise<string | null | undefined>);

export interface ClientOptions {
  /** Where the API is, without /api/v1: `https://api.example.com`. */
  baseUrl: string;
  /** A person's access token (Authorization: Bearer). */
  accessToken?: AccessTokenSource;
  /** An organization API key (X-API-Key); when both are given the key is sent, as the API would use it. */
  apiKey?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** A fetch of your own (tests, proxies); globalThis.fetch otherwise. */
  fetch?: (input: Request) => Promise<Response>;
}

/** Sends the credential with each request that does not carry one of its own. */
export function credentials(options: Pick<ClientOptions, 'accessToken' | 'apiKey'>): Middleware {
  return {
    async onRequest({ request }) {
      if (request.headers.has('authorization') || request.headers.has('x-api-key')) return undefined;
      if (options.apiKey) {
        request.headers.set('x-api-key', options.apiKey);
        return request;
      }
      const token = typeof options.accessToken === 'function' ? await options.accessToken() : options.accessToken;
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };
}

/** A typed client of the API at `baseUrl`, sending the access token or API key given. */
export function createClient(options: ClientOptions): TenantryClient {
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (options.accessToken !== undefined || options.apiKey !== undefined) client.use(credentials(options));
  return client;
}
