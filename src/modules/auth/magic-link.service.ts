// Sign-in by a link sent to the account's email: 15 minutes, single use, stored hashed. Verifying
// answers as login does (lockout, two-factor step, session cap). On an account whose address was
// never verified, the link is the first proof of it and claims the account fresh (claim.ts).
import type { Infra } from '../../infra.js';
import { validationError } from '../../lib/errors.js';
import { magicLinkMail } from '../../providers/mail/templates.js';
import { users } from '../../db/tables/users.js';
import { eq } from 'drizzle-orm';
import { claimUnverifiedAccount } from './claim.js';
import { consumeEmailToken, findLiveToken, mailTokenLater, type TokenMailDeps } from './email-tokens.js';
import { findUserByEmail } from './service.js';
import {
  assertNotLocked,
  checkSecondFactorOnToken,
  type ClientMeta,
  needsSecondFactor,
  startSession,
  type SignInDeps,
} from './sign-in.js';
import { twoFactorRequired } from './second-factor.js';
import { transaction } from '../../db/transaction.js';

export async function requestMagicLink(deps: TokenMailDeps, email: string) {
  const user = await findUserByEmail(deps, email);
  if (user && user.isActive)
    mailTokenLater(deps, user, 'magic_link', (to, link) => magicLinkMail(deps.config.branding, to, link));
}

const invalidLink = () => validationError('Invalid or expired token', 'token: is unknown, already used or expired');

export async function verifyMagicLink(
  deps: SignInDeps & Pick<Infra, 'userCache'>,
  input: { token: string; twoFactorCode?: string },
  meta: ClientMeta,
) {
  // Read first without consuming: a missing two-factor code must not burn the link.
  const pending = await findLiveToken(deps, input.token, 'magic_link');
  if (!pending) throw invalidLink();
  const [user] = await deps.db.select().from(users).where(eq(users.id, pending.userId));
  if (!user || !user.isActive) throw invalidLink();

  if (!user.emailVerifiedAt) {
    // The first proof of the address: neither the lock nor a second factor set up without that proof
    // stands in its way, since the claim drops them.
    const claimed = await transaction(deps.db, async (tx, afterCommit) => {
      const { email } = await consumeEmailToken(deps, tx, input.token, 'magic_link');
      afterCommit(() => deps.userCache.changed(user.id));
      return claimUnverifiedAccount(deps, tx, user.id, email, null);
    });
    // Verified in between by another path: the link is spent; the sign-in starts over as usual.
    if (!claimed) throw invalidLink();
    return startSession(deps, claimed, meta, null, { amr: ['magic_link'] });
  }

  assertNotLocked(deps, user);
  let reservation = null;
  if (needsSecondFactor(deps, user)) {
    if (!input.twoFactorCode) throw twoFactorRequired();
    reservation = await checkSecondFactorOnToken(deps, user, input.token, 'magic_link', input.twoFactorCode);
  }
  await transaction(deps.db, (tx) => consumeEmailToken(deps, tx, input.token, 'magic_link'));
  return startSession(deps, user, meta, reservation, { amr: reservation ? ['magic_link', 'otp'] : ['magic_link'] });
}
