// rotate-signing-key [--delay-s N]: a new key for the access tokens (platform/identity/signing-keys.ts),
// published at once and signing N seconds later (600 by default). The key it replaces keeps verifying
// until its last token has expired. Running instances learn of the new key by themselves (they read
// the keys again at least once a minute, and at once for a token naming a kid they do not know).
import type { Infra } from '../infra.js';
import { DEFAULT_ROTATION_DELAY_S, REFRESH_MS, rotateSigningKey } from '../platform/identity/signing-keys.js';
import { UsageError } from './args.js';
import type { Io } from './users.js';

/** The most a new key may wait before it signs: 30 days. */
const MAX_DELAY_S = 30 * 24 * 60 * 60;
/** What another service may keep of the JWKS document (its max-age), plus an instance's refresh. */
const PUBLICATION_LAG_S = 300 + REFRESH_MS / 1000;

export function parseDelay(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_ROTATION_DELAY_S;
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_DELAY_S)
    throw new UsageError(`--delay-s must be a whole number of seconds from 0 to ${MAX_DELAY_S}`);
  return Number(raw);
}

export async function rotateKey(deps: Pick<Infra, 'config' | 'clock' | 'db'>, delayS: number, io: Io): Promise<number> {
  const alg = deps.config.jwtAlgorithm;
  if (alg === 'HS256') {
    io.out('JWT_ALGORITHM is HS256: access tokens are signed with JWT_SECRET, and there is no signing key to rotate');
    return 1;
  }
  const r = await rotateSigningKey(deps.db, deps.config, deps.clock, alg, delayS);
  io.out(`new ${alg} key ${r.kid}: published now, signs from ${r.activeFrom.toISOString()}`);
  for (const k of r.retired)
    io.out(
      `key ${k.kid} signs until ${k.retiresAt.toISOString()}, stays published until ${k.publishedUntil.toISOString()}`,
    );
  if (r.deleted.length > 0)
    io.out(`deleted ${r.deleted.length} key(s) whose tokens have all expired: ${r.deleted.join(', ')}`);
  if (delayS < PUBLICATION_LAG_S) {
    io.out(
      `--delay-s ${delayS} is less than ${PUBLICATION_LAG_S}: a service that cached the key set before this rotation may refuse tokens of the new key until it fetches /.well-known/jwks.json again`,
    );
  }
  return 0;
}
