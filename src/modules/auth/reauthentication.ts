// Proving the person behind a session again (docs/api.md#re-authentication). An access token proves
// only that someone holds it; the steps that would outlive its theft (a new passkey, deleting the
// account) ask for the password as well, or, for an account without one, a two-factor code. A
// session that signed in, or re-proved itself through POST /auth/reauthenticate, within
// AUTH_REAUTH_WINDOW_S counts as proven: the session row's authenticatedAt, which a refresh never
// moves, so a stolen refresh token cannot renew it.
import { AppError, authenticationError, notFound, validationError } from '../../lib/errors.js';
import type { UserRow } from '../../db/tables/users.js';
import type { Infra } from '../../infra.js';
import type { UserActor } from '../../platform/identity/actor.js';
import type { Proof } from '../../platform/identity/sign-in-port.js';
import { consumeSecondFactor, invalidSecondFactor } from './second-factor.js';
import { assertNotLocked, needsSecondFactor, releaseCheck, reservedCheck } from './sign-in.js';

/** What a proof of identity uses (a password or a code, under the lockout budget). */
export type PasswordProofDeps = Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'passwords' | 'checkWaits'>;

/** What a re-authentication uses. */
type ReauthDeps = Pick<
  Infra,
  'config' | 'logger' | 'clock' | 'db' | 'sessions' | 'userCache' | 'passwords' | 'checkWaits'
>;

/** The top-level field of every 401 that a proof would answer (the client asks for it, then sends it). */
const REQUIRED = { reauthenticationRequired: true };

/** The proof an account can give: its password, else a two-factor code, else none (sign in again). */
function proofOf(deps: Pick<Infra, 'config'>, user: UserRow): 'password' | 'twoFactorCode' | null {
  if (user.passwordHash) return 'password';
  return needsSecondFactor(deps, user) ? 'twoFactorCode' : null;
}

/**
 * Checks the proof: the password, or for an account without one a two-factor code. A wrong one
 * answers 401 and counts toward the sign-in lockout, as every check of a secret does (423 once
 * locked). The wrong field, or none, answers 400 naming the field; an account with neither a
 * password nor two-factor answers `neither` (it has nothing to prove itself with).
 */
export async function proveIdentity(deps: PasswordProofDeps, user: UserRow, input: Proof, neither: () => AppError) {
  assertNotLocked(deps, user);
  const kind = proofOf(deps, user);
  if (kind === null) throw neither();
  let check: () => Promise<boolean>;
  let wrong: () => AppError;
  if (kind === 'password') {
    if (input.password === undefined) throw validationError('Invalid request body', 'password: is required');
    const hash = user.passwordHash!;
    check = () => deps.passwords.verify(hash, input.password!);
    wrong = () => authenticationError('Password is incorrect');
  } else {
    if (input.twoFactorCode === undefined)
      throw validationError('Invalid request body', 'twoFactorCode: is required for an account without a password');
    check = () => consumeSecondFactor(deps, user.id, input.twoFactorCode!);
    wrong = invalidSecondFactor;
  }
  const reservation = await reservedCheck(deps, user.id, check);
  if (!reservation) throw wrong();
  await releaseCheck(deps, reservation);
}

const withFlag = (e: AppError) => new AppError(e.code, e.message, e.details, e.headers, { ...e.extra, ...REQUIRED });

/** A 401 of a wrong proof carries the flag too: the client asks again rather than refreshing its token. */
async function proveAgain(deps: PasswordProofDeps, user: UserRow, input: Proof) {
  try {
    await proveIdentity(deps, user, input, () => cannotProve(deps));
  } catch (err) {
    throw err instanceof AppError && err.statusCode === 401 ? withFlag(err) : err;
  }
}

// An account with neither a password nor two-factor (a social or magic-link account) has no proof
// to give but a new sign-in: a fresh session counts for the window.
const cannotProve = (deps: Pick<Infra, 'config'>) =>
  new AppError(
    'AUTHENTICATION_ERROR',
    'Re-authentication required',
    `This account has no password or two-factor code to confirm with: sign in again, and do this within ${deps.config.auth.reauthWindowS} seconds`,
    {},
    REQUIRED,
  );

function required(deps: Pick<Infra, 'config'>, kind: 'password' | 'twoFactorCode' | null) {
  if (kind === null) return cannotProve(deps);
  const what =
    kind === 'password' ? 'password: confirm your password' : 'twoFactorCode: confirm with a two-factor code';
  return new AppError(
    'AUTHENTICATION_ERROR',
    'Re-authentication required',
    `${what} (in this request, or first with POST /auth/reauthenticate)`,
    {},
    REQUIRED,
  );
}

async function activeUser(deps: Pick<Infra, 'userCache'>, userId: string) {
  const user = await deps.userCache.row(userId);
  if (!user || !user.isActive) throw notFound('User not found');
  return user;
}

/** POST /auth/reauthenticate: the proof, then the session counts as freshly signed in for the window. */
export async function reauthenticate(deps: ReauthDeps, actor: UserActor, input: Proof) {
  const user = await activeUser(deps, actor.userId);
  await proveAgain(deps, user, input);
  const at = await deps.sessions.reauthenticated(actor.sessionId, user.id);
  // Revoked while the proof was checked: the session proves nothing any more.
  if (!at) throw authenticationError('Session is no longer active');
  return {
    authenticatedAt: at.toISOString(),
    expiresAt: new Date(at.getTime() + deps.config.auth.reauthWindowS * 1000).toISOString(),
  };
}

/**
 * The gate of a step that needs a recent proof: a proof in the request is checked (and must be
 * right, whatever the window says); without one, the session must have signed in or re-proved
 * itself within AUTH_REAUTH_WINDOW_S. Otherwise 401 with `reauthenticationRequired`, its details
 * naming the field the account can prove itself with. The proof authorizes this request only: it
 * does not reopen the window (POST /auth/reauthenticate does).
 */
export async function requireRecentAuthentication(deps: ReauthDeps, actor: UserActor, input: Proof): Promise<void> {
  const user = await activeUser(deps, actor.userId);
  if (input.password !== undefined || input.twoFactorCode !== undefined) return proveAgain(deps, user, input);
  const at = await deps.sessions.authenticatedAt(actor.sessionId, user.id);
  if (at && deps.clock.now().getTime() - at.getTime() < deps.config.auth.reauthWindowS * 1000) return;
  throw required(deps, proofOf(deps, user));
}
