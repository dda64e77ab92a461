// Verifying a Tenantry access token in another service (docs/tokens.md): with an asymmetric
// JWT_ALGORITHM (ES256, EdDSA, RS256) the tokens name their key in `kid`, and the service publishes
// the public keys at {baseUrl}/.well-known/jwks.json. No secret is shared:
//
//   const claims = await verifyAccessToken(token, { baseUrl: 'https://api.example.com' });
//   claims.sub, claims.org_id, claims.org_role, claims.org_permissions
//
// The key set is fetched once per baseUrl and kept (jose's remote JWKS: fetched again after 10
// minutes, or for a kid it lacks, at most every 30 seconds). The signature, `iss` (`tenantry`) and
// `exp` are checked; the algorithm is the key's, never the token's choice (no `none`, no HS256).
// This says the token is genuine and unexpired, not that its session is still active: ask
// GET /api/v1/auth/session (or the permission check) when a revocation must show at once.
import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';

export const TOKEN_ISSUER = 'tenantry';
const ALGORITHMS = ['ES256', 'EdDSA', 'RS256'];

/** How a session signed in: its first factor, then `otp` when a second factor was checked. */
export type AuthMethod = 'pwd' | 'otp' | 'webauthn' | 'magic_link' | 'oauth' | 'sso';

/** The claims of a Tenantry access token (docs/api.md#bearer-access-tokens). */
export interface AccessTokenClaims {
  /** The user id (also `userId`). */
  sub: string;
  userId: string;
  email: string;
  sessionId: string;
  amr: AuthMethod[];
  /** While the session has an active organization: its id, the role key, what the role grants. */
  org_id?: string;
  org_role?: string;
  org_permissions?: string[];
  /** An impersonated session: the platform administrator acting. */
  act?: { sub: string };
  iss: string;
  iat: number;
  exp: number;
}

export interface VerifyAccessTokenOptions {
  /** Where the Tenantry API is reached, e.g. `https://api.example.com` (the JWKS is under it). */
  baseUrl: string;
  /** Seconds of clock difference tolerated on `exp` (default 0). */
  clockToleranceS?: number;
}

/** The token is not a genuine, unexpired Tenantry access token; `code` is jose's (`ERR_JWT_EXPIRED`, …). */
export class InvalidAccessTokenError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'InvalidAccessTokenError';
  }
}

const keySets = new Map<string, JWTVerifyGetKey>();

function keySetOf(baseUrl: string): JWTVerifyGetKey {
  const base = baseUrl.replace(/\/+$/, '');
  let keys = keySets.get(base);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`));
    keySets.set(base, keys);
  }
  return keys;
}

/** Verifies a Tenantry access token against the service's published keys and answers its claims. */
export async function verifyAccessToken(token: string, options: VerifyAccessTokenOptions): Promise<AccessTokenClaims> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, keySetOf(options.baseUrl), {
      issuer: TOKEN_ISSUER,
      algorithms: ALGORITHMS,
      requiredClaims: ['exp', 'sub'],
      clockTolerance: options.clockToleranceS ?? 0,
    }));
  } catch (err) {
    if (err instanceof errors.JOSEError) throw new InvalidAccessTokenError(err.message, err.code, { cause: err });
    throw err;
  }
  if (typeof payload.sub !== 'string' || typeof payload.sessionId !== 'string') {
    throw new InvalidAccessTokenError('The token is not a Tenantry access token', 'ERR_JWT_CLAIM_VALIDATION_FAILED');
  }
  return payload as unknown as AccessTokenClaims;
}
