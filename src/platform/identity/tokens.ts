// Access and refresh JWTs (docs/api.md#tokens-and-refresh): HS256, issuer `tenantry`, separate secrets, 15 min / 7 days.
// Times come from the injected clock; fast-jwt checks signature, algorithm and issuer, and caches
// verified tokens (the hot path); expiry is checked here against the clock.
import { createSigner, createVerifier } from 'fast-jwt';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { randomToken } from '../../lib/secrets.js';

export const ISSUER = 'tenantry';

export interface AccessClaims {
  userId: string;
  email: string;
  sessionId: string;
  iss: string;
  iat: number;
  exp: number;
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

export function createTokenService(config: Config, clock: Clock) {
  // No `noTimestamp`: with it fast-jwt drops the `iat` we pass, and checkTimes refuses every token.
  // The `iat` in the payload (from the injected clock) is kept as is.
  const signAccessJwt = createSigner({ key: config.jwtSecret, algorithm: 'HS256' });
  const signRefreshJwt = createSigner({ key: config.jwtRefreshSecret, algorithm: 'HS256' });
  const verifierOptions = { algorithms: ['HS256' as const], allowedIss: ISSUER, ignoreExpiration: true, ignoreNotBefore: true };
  const verifyAccessJwt = createVerifier({ ...verifierOptions, key: config.jwtSecret, cache: 10_000 });
  const verifyRefreshJwt = createVerifier({ ...verifierOptions, key: config.jwtRefreshSecret });

  const nowS = () => Math.floor(clock.now().getTime() / 1000);

  function checkTimes(claims: { iat?: unknown; exp?: unknown }) {
    if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number') throw new TokenError('Token lacks iat or exp');
    if (claims.exp <= nowS()) throw new TokenError('Token has expired');
  }

  return {
    accessTtlS: config.auth.accessTtlS,
    refreshTtlS: config.auth.refreshTtlS,

    signAccess(user: { id: string; email: string }, sessionId: string): string {
      const iat = nowS();
      return signAccessJwt({ userId: user.id, email: user.email, sessionId, iss: ISSUER, iat, exp: iat + config.auth.accessTtlS });
    },

    /** A refresh token carries the session id and a random token id; only the id's hash is stored. */
    signRefresh(userId: string, sessionId: string): { token: string; jti: string; expiresAt: Date } {
      const iat = nowS();
      const jti = randomToken(24);
      const exp = iat + config.auth.refreshTtlS;
      return { token: signRefreshJwt({ userId, sessionId, jti, iss: ISSUER, iat, exp }), jti, expiresAt: new Date(exp * 1000) };
    },

    verifyAccess(token: string): AccessClaims {
      let claims: AccessClaims;
      try {
        claims = verifyAccessJwt(token) as AccessClaims;
      } catch {
        throw new TokenError('Invalid token');
      }
      if (typeof claims.userId !== 'string' || typeof claims.sessionId !== 'string') throw new TokenError('Invalid token');
      checkTimes(claims);
      return claims;
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
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
