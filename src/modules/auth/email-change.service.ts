// Moving an account to a new email address (docs/api.md#email-change): the password proves the
// person, a link mailed to the new address proves the address, and a notice goes to the old one once
// it is done. Sessions stay; the sign-in links still pending for the old address are voided.
import { eq } from 'drizzle-orm';
import { isUniqueViolation } from '../../db/client.js';
import { users } from '../../db/tables/users.js';
import { transaction } from '../../db/transaction.js';
import type { Infra } from '../../infra.js';
import { authenticationError, authorizationError, conflict, notFound, validationError } from '../../lib/errors.js';
import { sha256 } from '../../lib/secrets.js';
import type { UserActor } from '../../platform/identity/actor.js';
import { sendLater } from '../../providers/mail/mailer.js';
import { sendCapped } from '../../platform/mail-cap.js';
import { emailChangedMail, emailChangeMail } from '../../providers/mail/templates.js';
import { voidSignInTickets } from './claim.js';
import { consumeEmailToken, issueEmailToken } from './email-tokens.js';
import { findUserByEmail, invalidToken, normalizeEmail } from './service.js';
import { assertNotLocked, releaseCheck, reservedCheck } from './sign-in.js';

/** What a change_email token is bound to: the address it replaces (a later change voids it). */
const addressBinding = (email: string) => sha256(`email:${normalizeEmail(email)}`);

export const addressTaken = () =>
  conflict('An account with this email already exists', 'newEmail: is already registered');

/**
 * 202 once the link is on its way to the new address. A wrong password answers 401 and counts toward
 * the sign-in lockout; an address already registered answers 409 (it cannot be confirmed anyway). A
 * new request replaces the link of an earlier one.
 */
export async function requestEmailChange(
  deps: Pick<
    Infra,
    'config' | 'logger' | 'clock' | 'db' | 'mailer' | 'mailCap' | 'userCache' | 'passwords' | 'checkWaits' | 'metrics'
  >,
  actor: UserActor,
  input: { newEmail: string; password: string },
): Promise<void> {
  const user = await deps.userCache.row(actor.userId);
  if (!user || !user.isActive) throw notFound('User not found');
  const newEmail = normalizeEmail(input.newEmail);
  if (newEmail === normalizeEmail(user.email))
    throw validationError('The new address is the current one', 'newEmail: is already the address of the account');
  if (!user.passwordHash) {
    throw validationError(
      'This account has no password',
      'password: the account signs in without one; set one with a password reset first',
    );
  }
  assertNotLocked(deps, user);
  const hash = user.passwordHash;
  const reservation = await reservedCheck(deps, user.id, () => deps.passwords.verify(hash, input.password));
  if (!reservation) throw authenticationError('Password is incorrect');
  await releaseCheck(deps, reservation);
  if (await findUserByEmail(deps, newEmail)) throw addressTaken();
  const link = await transaction(deps.db, (tx) =>
    issueEmailToken(deps, tx, user.id, newEmail, 'change_email', addressBinding(user.email)),
  );
  sendCapped(deps, 'email_change', emailChangeMail(deps.config.branding, newEmail, link));
}

/**
 * The link's token moves the account to the address it was sent to, now verified, when the caller is
 * the account that asked. Used, expired, unknown, or issued before another change of the address:
 * 400. Another account: 403. An address registered meanwhile: 409. A refusal leaves the token unused.
 *
 * Why the account's own session: the mail goes to an address that nobody has shown to be the
 * requester's. Whoever opens it, the owner of that address included, must not move an account they
 * cannot sign in to onto it: an attacker's account (with its social link) would become the victim's
 * address, which the victim's password reset and social sign-in would then lead into.
 */
export async function confirmEmailChange(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'mailer' | 'userCache'>,
  actor: UserActor,
  token: string,
): Promise<void> {
  let previous: string;
  let next: string;
  try {
    [previous, next] = await transaction(deps.db, async (tx, afterCommit) => {
      const row = await consumeEmailToken(deps, tx, token, 'change_email');
      // Thrown inside the transaction: the token's consumption rolls back with it.
      if (row.userId !== actor.userId)
        throw authorizationError(
          'This link is for another account',
          'Sign in to the account that asked for the change, then confirm',
        );
      const [user] = await tx.select().from(users).where(eq(users.id, row.userId)).for('update');
      if (!user || !user.isActive || row.binding !== addressBinding(user.email)) throw invalidToken();
      const now = deps.clock.now();
      await tx
        .update(users)
        .set({ email: row.email, emailVerifiedAt: now, updatedAt: now })
        .where(eq(users.id, user.id));
      // Links mailed to the old address no longer reach the account's owner for sure.
      await voidSignInTickets(tx, user.id);
      afterCommit(() => deps.userCache.changed(user.id));
      return [user.email, row.email];
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw addressTaken();
    throw err;
  }
  sendLater(
    deps.mailer,
    deps.logger,
    emailChangedMail(deps.config.branding, previous, next, `${deps.config.appOrigin}/sign-in`),
  );
}
