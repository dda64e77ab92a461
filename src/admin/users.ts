// Account commands: create-user, verify-user, disable-user, enable-user. They change what the
// services change and tell the other instances the same way (the user cache moved on after the
// write); disable-user is the service's own deactivation (sessions revoked, sign-in links voided).
import { and, eq, isNull } from 'drizzle-orm';
import { isUniqueViolation } from '../db/client.js';
import { transaction } from '../db/transaction.js';
import { defaultPreferences, users, type UserRow } from '../db/tables/users.js';
import type { Infra } from '../infra.js';
import { AppError, conflict, notFound, validationError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { deactivateUser } from '../modules/auth/account.service.js';
import { claimUnverifiedAccount } from '../modules/auth/claim.js';
import { findUserByEmail, normalizeEmail } from '../modules/auth/service.js';
import { assertPasswordPolicy } from '../platform/identity/passwords.js';

/** What an operator's change of an account's state uses. */
type AccountStateDeps = Pick<Infra, 'clock' | 'db' | 'sessions' | 'userCache'>;

export interface Io {
  out(line: string): void;
  /** Asks for a secret (not echoed on a terminal); reads a line of standard input otherwise. */
  secret(question: string): Promise<string>;
  /** A person at a terminal (asked twice for a new password), rather than piped input. */
  interactive: boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

async function userByEmail(deps: Pick<Infra, 'db'>, email: string): Promise<UserRow> {
  const user = await findUserByEmail(deps, email);
  if (!user) throw notFound(`No account with the email ${normalizeEmail(email)}`);
  return user;
}

export async function createUser(
  deps: Pick<Infra, 'config' | 'clock' | 'db' | 'passwords'>,
  flags: { email: string; password?: string; name?: string; verified?: boolean },
  io: Io,
): Promise<UserRow> {
  const email = normalizeEmail(flags.email);
  if (!EMAIL.test(email) || email.length > 254) throw validationError(`"${flags.email}" is not an email address`);
  let password = flags.password;
  if (password === undefined) {
    password = await io.secret(`Password for ${email}: `);
    if (io.interactive && (await io.secret('Again: ')) !== password) throw validationError('The two passwords differ');
  }
  assertPasswordPolicy(deps.config.auth.passwordPolicy, password, 'password');
  const now = deps.clock.now();
  // Only what this command decides; every other column takes its default.
  let row: UserRow;
  try {
    [row] = (await deps.db
      .insert(users)
      .values({
        id: newId('usr', now.getTime()),
        email,
        emailVerifiedAt: flags.verified ? now : null,
        passwordHash: await deps.passwords.hash(password),
        fullName: flags.name ?? null,
        preferences: defaultPreferences,
        createdAt: now,
        updatedAt: now,
      })
      .returning()) as [UserRow];
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`An account with the email ${email} already exists`);
    throw err;
  }
  io.out(
    `created ${row.id} (${email}), ${flags.verified ? 'email verified' : 'email not verified: verify-user --keep-credentials, or the user asks for a new verification mail'}`,
  );
  return row;
}

/**
 * Marks an address verified. An account never verified may be a squatter's, who registered the
 * address ahead of its owner: unless `keepCredentials`, the operator's word counts as the first proof
 * of the address and claims the account as a magic link or a reset would (claim.ts): its password,
 * two-factor, passkeys, social links, unused mailed tokens and sessions go, and the owner signs in
 * by a sign-in link or a password reset.
 */
export async function verifyUser(
  deps: AccountStateDeps,
  email: string,
  io: Io,
  opts: { keepCredentials?: boolean } = {},
): Promise<void> {
  const user = await userByEmail(deps, email);
  const already = () => io.out(`${user.id} (${user.email}) was verified already`);
  if (user.emailVerifiedAt) return already();
  if (opts.keepCredentials) {
    const now = deps.clock.now();
    const [marked] = await deps.db
      .update(users)
      .set({ emailVerifiedAt: now, updatedAt: now })
      .where(and(eq(users.id, user.id), isNull(users.emailVerifiedAt)))
      .returning({ id: users.id });
    await deps.userCache.changed(user.id);
    if (!marked) return already();
    io.out(`verified ${user.id} (${user.email}), its credentials kept`);
    return;
  }
  const claimed = await transaction(deps.db, async (tx, afterCommit) => {
    afterCommit(() => deps.userCache.changed(user.id));
    return claimUnverifiedAccount(deps, tx, user.id, user.email, null);
  });
  // Verified (or its email changed) since it was read: nothing was changed.
  if (!claimed) return already();
  io.out(
    `verified ${user.id} (${user.email}): its password, two-factor, passkeys, social links and sessions were dropped (set up before the address was proven); ` +
      'the owner signs in by a sign-in link or a password reset (--keep-credentials keeps them)',
  );
}

export async function disableUser(deps: AccountStateDeps, email: string, io: Io): Promise<void> {
  const user = await userByEmail(deps, email);
  const { revokedSessions } = await deactivateUser(deps, user.id);
  io.out(`disabled ${user.id} (${user.email}): ${revokedSessions} session${revokedSessions === 1 ? '' : 's'} revoked`);
}

export async function enableUser(
  deps: Pick<Infra, 'clock' | 'db' | 'userCache'>,
  email: string,
  io: Io,
): Promise<void> {
  const user = await userByEmail(deps, email);
  if (user.isActive) {
    io.out(`${user.id} (${user.email}) is active already`);
    return;
  }
  await deps.db.update(users).set({ isActive: true, updatedAt: deps.clock.now() }).where(eq(users.id, user.id));
  await deps.userCache.changed(user.id);
  io.out(`enabled ${user.id} (${user.email})`);
}

/** A service's refusal as one line: its message, and its details when they add something. */
export function describeError(err: unknown): string {
  if (err instanceof AppError) return err.details ? `${err.message}: ${err.details}` : err.message;
  return (err as Error).message ?? String(err);
}
