// The social sign-in hand-off to the web app (docs/api.md#social-sign-in). A flow started with
// `redirectTo` (a page on APP_ORIGIN, compared by parsed origin, never by prefix) ends at the callback
// with a redirect to that page: `#code=…`, a one-time code, or `#error=…&error_description=…`. The
// code stands for the account the provider reached; POST /auth/oauth/exchange turns it into what
// login answers. It is single use, valid 60 seconds, and stored as its SHA-256 only. Tokens never
// travel in a URL.
//
// A code alone would sign in whichever browser presents it: an attacker could finish a flow in their
// own browser and send the victim's app the link with their code (login CSRF). So a flow may carry the
// page's codeChallenge (RFC 7636, S256): its code is then only exchanged with the verifier, which only
// the browser that started the flow holds. The web app always does; a code started without a challenge
// refuses a verifier, so such a code cannot be passed off to that app either.
import { and, eq, gt, lt } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import { validationError } from '../../lib/errors.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { oauthHandoffs } from '../../db/tables/auth.js';

export const HANDOFF_CODE_TTL_MS = 60 * 1000;

/**
 * The page a hand-off ends on, normalized, without a fragment (the hand-off writes its own). It must
 * parse as a URL whose origin is exactly APP_ORIGIN and carry no user name or password: 400 otherwise.
 */
export function handoffTarget(appOrigin: string, raw: string): string {
  let url: URL | null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || url.origin !== appOrigin || url.username !== '' || url.password !== '') {
    throw validationError('Invalid redirectTo', `redirectTo: must be a URL on ${appOrigin}`);
  }
  url.hash = '';
  return url.href;
}

/** The target with its fragment: form-encoded, so `new URLSearchParams(location.hash.slice(1))` reads it. */
export const handoffLocation = (target: string, params: Record<string, string>) =>
  `${target}#${new URLSearchParams(params).toString()}`;

export async function issueHandoffCode(
  deps: Pick<Infra, 'clock' | 'db'>,
  userId: string,
  challenge: string | null,
): Promise<string> {
  const code = randomToken();
  const now = deps.clock.now();
  await deps.db.delete(oauthHandoffs).where(lt(oauthHandoffs.expiresAt, now));
  await deps.db.insert(oauthHandoffs).values({
    codeHash: sha256(code),
    userId,
    challenge,
    expiresAt: new Date(now.getTime() + HANDOFF_CODE_TTL_MS),
    createdAt: now,
  });
  return code;
}

/** Whether the verifier answers the challenge (S256), or both are absent. */
function verifierMatches(challenge: string | null, verifier: string | undefined): boolean {
  if (challenge === null) return verifier === undefined;
  if (verifier === undefined) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

export const invalidHandoffCode = () =>
  validationError('Invalid or expired code', 'code: is unknown, already used or expired');

/**
 * Spends a live code (one guarded DELETE: of parallel exchanges exactly one gets it) for its user id.
 * A wrong or missing verifier spends it too: a code sent to someone else's browser dies there.
 */
export async function takeHandoffCode(
  deps: Pick<Infra, 'clock' | 'db'>,
  code: string,
  verifier: string | undefined,
): Promise<string> {
  const [row] = await deps.db
    .delete(oauthHandoffs)
    .where(and(eq(oauthHandoffs.codeHash, sha256(code)), gt(oauthHandoffs.expiresAt, deps.clock.now())))
    .returning({ userId: oauthHandoffs.userId, challenge: oauthHandoffs.challenge });
  if (!row) throw invalidHandoffCode();
  if (!verifierMatches(row.challenge, verifier)) {
    throw validationError(
      'Invalid code verifier',
      row.challenge === null
        ? 'codeVerifier: this sign-in was started without a codeChallenge'
        : 'codeVerifier: does not match the codeChallenge this sign-in was started with',
    );
  }
  return row.userId;
}
