// The two-factor step of a social sign-in. The provider's redirect cannot carry a TOTP code, so the
// callback answers 401 requiresTwoFactor with a short-lived single-use ticket (stored hashed), and
// POST /auth/two-factor/login {twoFactorToken, code} finishes the sign-in.
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import { validationError } from '../../http/errors.js';
import { sha256 } from '../../lib/secrets.js';
import { users, type UserRow } from '../users/tables.js';
import { consumeEmailToken, issueToken } from './email-tokens.js';
import { assertNotLocked, type ClientMeta, recordLoginFailure, startSession } from './service.js';
import { emailTokens } from './tables.js';
import { consumeSecondFactor, invalidSecondFactor, twoFactorRequired } from './two-factor.service.js';

export async function startTwoFactorChallenge(deps: Deps, user: UserRow) {
  const token = await deps.db.transaction((tx) => issueToken(deps, tx, user.id, user.email, 'two_factor_login'));
  const err = twoFactorRequired();
  err.extra.twoFactorToken = token;
  return err;
}

const invalidTicket = () => validationError('Invalid or expired token', 'twoFactorToken: is unknown, already used or expired');

export async function completeTwoFactorLogin(deps: Deps, input: { twoFactorToken: string; code: string }, meta: ClientMeta) {
  const [pending] = await deps.db
    .select({ userId: emailTokens.userId })
    .from(emailTokens)
    .where(
      and(
        eq(emailTokens.tokenHash, sha256(input.twoFactorToken)),
        eq(emailTokens.purpose, 'two_factor_login'),
        isNull(emailTokens.usedAt),
        gt(emailTokens.expiresAt, deps.clock.now()),
      ),
    );
  if (!pending) throw invalidTicket();
  const [user] = await deps.db.select().from(users).where(eq(users.id, pending.userId));
  if (!user || !user.isActive) throw invalidTicket();
  assertNotLocked(deps, user);
  if (!(await consumeSecondFactor(deps, user.id, input.code))) {
    await recordLoginFailure(deps, user.id);
    throw invalidSecondFactor();
  }
  await deps.db.transaction((tx) => consumeEmailToken(deps, tx, input.twoFactorToken, 'two_factor_login'));
  return startSession(deps, user, meta);
}
