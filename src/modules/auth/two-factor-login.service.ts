// The two-factor step of a social sign-in. The provider's redirect cannot carry a TOTP code, so the
// callback answers 401 requiresTwoFactor with a short-lived single-use ticket (stored hashed), and
// POST /auth/two-factor/login {twoFactorToken, code} finishes the sign-in. A ticket takes at most 5
// wrong codes (email-tokens.ts), and each counts toward the account's lockout.
import { eq } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import { validationError } from '../../lib/errors.js';
import { users, type UserRow } from '../../db/tables/users.js';

/** The first factors that leave the second to a ticket. */
export type FirstFactor = 'oauth' | 'webauthn';
import { consumeEmailToken, findLiveToken, issueToken } from './email-tokens.js';
import {
  assertNotLocked,
  checkSecondFactorOnToken,
  type ClientMeta,
  startSession,
  type SignInDeps,
} from './sign-in.js';
import { twoFactorRequired } from './second-factor.js';
import { transaction } from '../../db/transaction.js';

/** The ticket of a sign-in whose first factor (`method`, recorded for the session's `amr`) is proven. */
export async function startTwoFactorChallenge(deps: Pick<Infra, 'clock' | 'db'>, user: UserRow, method: FirstFactor) {
  const token = await transaction(deps.db, (tx) =>
    issueToken(deps, tx, user.id, user.email, 'two_factor_login', method),
  );
  const err = twoFactorRequired();
  err.extra.twoFactorToken = token;
  return err;
}

const invalidTicket = () =>
  validationError('Invalid or expired token', 'twoFactorToken: is unknown, already used or expired');

export async function completeTwoFactorLogin(
  deps: SignInDeps,
  input: { twoFactorToken: string; code: string },
  meta: ClientMeta,
) {
  const pending = await findLiveToken(deps, input.twoFactorToken, 'two_factor_login');
  if (!pending) throw invalidTicket();
  const [user] = await deps.db.select().from(users).where(eq(users.id, pending.userId));
  if (!user || !user.isActive) throw invalidTicket();
  assertNotLocked(deps, user);
  const reservation = await checkSecondFactorOnToken(deps, user, input.twoFactorToken, 'two_factor_login', input.code);
  const { binding } = await transaction(deps.db, (tx) =>
    consumeEmailToken(deps, tx, input.twoFactorToken, 'two_factor_login'),
  );
  // Tickets issued before the first factor was recorded came from a social sign-in.
  const first: FirstFactor = binding === 'webauthn' ? 'webauthn' : 'oauth';
  return startSession(deps, user, meta, reservation, { amr: [first, 'otp'] });
}
