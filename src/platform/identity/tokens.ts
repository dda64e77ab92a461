// Access and refresh JWTs (docs/api.md#tokens-and-refresh, docs/tokens.md): issuer `tenantry`, 15 min / 7 days.
//
// Access tokens are signed with JWT_ALGORITHM: HS256 under JWT_SECRET (fast-jwt), or ES256, EdDSA or
// RS256 with the keys of signing-keys.ts (jose), each token naming its key in `kid`. Verification
// picks the key by `kid` and pins the algorithm to that key's: a token whose header says another
// algorithm (`none`, or HS256 "signed" with the public key as a secret) never verifies. Under an
// asymmetric algorithm, HS256 tokens are refused. Refresh tokens are HS256 under JWT_REFRESH_SECRET
// whatever the algorithm: only this service reads them.
//
// Times come from the injected clock; expiry is checked here against it. Verified tokens are kept
// (10,000 per instance, by their exact text, whatever the algorithm) so the hot path verifies each
// token's signature once: a Map lookup, cheaper than fast-jwt's own cache (which hashes the token).
import { createSigner, createVerifier } from 'fast-jwt';
import { decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import type { Config } from '../../config.js';
import type { AuthMethod } from '../../db/tables/auth.js';
import type { Clock } from '../../lib/clock.js';
import { randomToken } from '../../lib/secrets.js';
import type { SigningKeyRing } from './signing-keys.js';

export const ISSUER = 'tenantry';
const VERIFIED_CACHE_MAX = 10_000;

export interface AccessClaims {
  userId: string;
  email: string;
  sessionId: string;
  /** The user id, under its registered name. */
  sub?: string;
  amr?: AuthMethod[];
  /** While the session has an active organization: its id, the role key and the role's permissions. */
  org_id?: string;
  org_role?: string;
  org_permissions?: string[];
  iss: string;
  iat: number;
  exp: number;
}

/** What an access token says of its session. */
export interface AccessSubject {
  user: { id: string; email: string };
  sessionId: string;
  amr: AuthMethod[];
  organization: { id: string; role: string; permissions: readonly string[] } | null;
}

export interface RefreshClaims {
  userId: string;
  sessionId: string;
  jti: string;
  iss: string;
  iat: number;
  exp: number;
}

export class TokenError extends Error {}

export function createTokenService(config: Config, clock: Clock, ring: SigningKeyRing | null) {
  // No `noTimestamp`: with it fast-jwt drops the `iat` we pass, and checkTimes refuses every token.
  // The `iat` in the payload (from the injected clock) is kept as is.
  const signHs256 = createSigner({ key: config.jwtSecret, algorithm: 'HS256' });
  const signRefreshJwt = createSigner({ key: config.jwtRefreshSecret, algorithm: 'HS256' });
  const verifierOptions = {
    algorithms: ['HS256' as const],
    allowedIss: ISSUER,
    ignoreExpiration: true,
    ignoreNotBefore: true,
  };
  const verifyHs256 = createVerifier({ ...verifierOptions, key: config.jwtSecret });
  const verifyRefreshJwt = createVerifier({ ...verifierOptions, key: config.jwtRefreshSecret });
  // Tokens verified once, by text, with the key that verified them (null: JWT_SECRET).
  const verified = new Map<string, { claims: AccessClaims; kid: string | null }>();
  const remember = (token: string, claims: AccessClaims, kid: string | null) => {
    if (verified.size >= VERIFIED_CACHE_MAX) verified.delete(verified.keys().next().value!);
    verified.set(token, { claims, kid });
  };

  const nowS = () => Math.floor(clock.now().getTime() / 1000);

  function checkTimes(claims: { iat?: unknown; exp?: unknown }) {
    if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number')
      throw new TokenError('Token lacks iat or exp');
    if (claims.exp <= nowS()) throw new TokenError('Token has expired');
  }

  function checkAccessShape(claims: AccessClaims) {
    if (typeof claims.userId !== 'string' || typeof claims.sessionId !== 'string')
      throw new TokenError('Invalid token');
  }

  async function verifyAsymmetric(keys: SigningKeyRing, token: string): Promise<AccessClaims> {
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw new TokenError('Invalid token');
    }
    if (typeof header.kid !== 'string' || typeof header.alg !== 'string') throw new TokenError('Invalid token');
    const key = await keys.verificationKey(header.kid);
    if (!key || header.alg !== key.alg) throw new TokenError('Invalid token');
    let claims: AccessClaims;
    try {
      // The algorithm is the key's, never the header's choice.
      claims = (await jwtVerify(token, key.key, { algorithms: [key.alg], issuer: ISSUER, currentDate: clock.now() }))
        .payload as unknown as AccessClaims;
    } catch {
      throw new TokenError('Invalid token');
    }
    checkAccessShape(claims);
    checkTimes(claims);
    remember(token, claims, header.kid);
    return claims;
  }

  function verifyHs256Token(token: string): AccessClaims {
    let claims: AccessClaims;
    try {
      claims = verifyHs256(token) as AccessClaims;
    } catch {
      throw new TokenError('Invalid token');
    }
    checkAccessShape(claims);
    checkTimes(claims);
    remember(token, claims, null);
    return claims;
  }

  return {
    accessTtlS: config.auth.accessTtlS,
    refreshTtlS: config.auth.refreshTtlS,
    algorithm: config.jwtAlgorithm,

    async signAccess(s: AccessSubject): Promise<string> {
      const iat = nowS();
      const claims: AccessClaims = {
        userId: s.user.id,
        email: s.user.email,
        sessionId: s.sessionId,
        sub: s.user.id,
        amr: s.amr,
        ...(s.organization
          ? {
              org_id: s.organization.id,
              org_role: s.organization.role,
              org_permissions: [...s.organization.permissions],
            }
          : {}),
        iss: ISSUER,
        iat,
        exp: iat + config.auth.accessTtlS,
      };
      if (!ring) return signHs256(claims);
      const k = await ring.signer();
      return new SignJWT(claims as unknown as Record<string, unknown>)
        .setProtectedHeader({ alg: k.alg, kid: k.kid, typ: 'JWT' })
        .sign(k.key);
    },

    /** A refresh token carries the session id and a random token id; only the id's hash is stored. */
    signRefresh(userId: string, sessionId: string): { token: string; jti: string; expiresAt: Date } {
      const iat = nowS();
      const jti = randomToken(24);
      const exp = iat + config.auth.refreshTtlS;
      return {
        token: signRefreshJwt({ userId, sessionId, jti, iss: ISSUER, iat, exp }),
        jti,
        expiresAt: new Date(exp * 1000),
      };
    },

    async verifyAccess(token: string): Promise<AccessClaims> {
      const hit = verified.get(token);
      if (hit) {
        // Still refused once expired, or once its key is retired past its tokens' life.
        if (hit.kid !== null && !ring?.accepts(hit.kid)) throw new TokenError('The key of this token is retired');
        checkTimes(hit.claims);
        return hit.claims;
      }
      return ring ? verifyAsymmetric(ring, token) : verifyHs256Token(token);
    },

    verifyRefresh(token: string): RefreshClaims {
      let claims: RefreshClaims;
      try {
        claims = verifyRefreshJwt(token) as RefreshClaims;
      } catch {
        throw new TokenError('Invalid token');
      }
      if (typeof claims.userId !== 'string' || typeof claims.sessionId !== 'string' || typeof claims.jti !== 'string') {
        throw new TokenError('Invalid token');
      }
      checkTimes(claims);
      return claims;
    },

    /** The JWKS document (`{"keys": []}` under HS256), served from memory. */
    jwks(): Promise<string> {
      return ring ? ring.jwks() : Promise.resolve(EMPTY_JWKS);
    },
  };
}

const EMPTY_JWKS = JSON.stringify({ keys: [] });

export type TokenService = ReturnType<typeof createTokenService>;
