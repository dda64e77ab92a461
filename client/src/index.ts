// @tenantry/client: a typed client for the Tenantry API. The types (schema.ts) are generated from the
// OpenAPI document the app serves at /docs/json (`npm run client:generate`); the calls go through
// openapi-fetch, so every path, parameter, body and answer is checked by the compiler:
//
//   const api = createClient({ baseUrl: 'https://api.example.com', apiKey: process.env.TENANTRY_KEY });
//   const { data, error } = await api.GET('/api/v1/organizations/{orgId}/projects', { params: { path: { orgId } } });
//
// createSession (session.ts) signs a person in and keeps the token pair fresh; verifyAccessToken
// (tokens.ts) checks an access token in another service against the published keys; webhooks.ts (the
// `@tenantry/client/webhooks` entry, for servers) verifies the signature of webhook deliveries.
export * from './client.js';
export { createSession, type Session, type SessionOptions } from './session.js';
export {
  type AccessTokenClaims,
  type AuthMethod,
  InvalidAccessTokenError,
  TOKEN_ISSUER,
  verifyAccessToken,
  type VerifyAccessTokenOptions,
} from './tokens.js';
