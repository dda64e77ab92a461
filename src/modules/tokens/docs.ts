// The OpenAPI prose of the JWKS route (routes.ts); app.ts serves the same document at the root with it.
import { routeDocs } from '../../http/route.js';

export const JWKS_SUMMARY = 'The public keys that verify access tokens (JWKS)';
export const JWKS_DESCRIPTION =
  'Under an asymmetric `JWT_ALGORITHM` (ES256, EdDSA, RS256), the keys whose `kid` the access tokens name: the one signing, a new one published ahead of signing, and retired ones until their last token has expired. Under HS256: `{"keys": []}`. `Cache-Control: public, max-age=300`. Also at `/.well-known/jwks.json` (docs/tokens.md).';

export const docs = routeDocs(['Tokens'], {
  getJwks: {
    summary: JWKS_SUMMARY,
    description: JWKS_DESCRIPTION,
  },
});
