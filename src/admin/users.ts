// Account commands: create-user, verify-user, disable-user, enable-user. They change what the
// services change and tell the other instances the same way (the user cache moved on after the
// write); disable-user is the service's own deactivation (sessions revoked, sign-in links voided).
import { eq } from 'drizzle-orm';
import { isUniqueViolation } from '../db/client.js';
import { defaultPreferences, users, type UserRow } from '../db/tables/users.js';
import type { Infra } from '../infra.js';
import { AppError, conflict, notFound, validationError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { deactivateUser } from '../modules/auth/account.service.js';
import { findUserByEmail, normalizeEmail } from '../modules/auth/service.js';
import { assertPasswordPolicy } from '../platform/identity/passwords.js';

export interface Io {
  out(line: string): void;
  /** Asks for a secret (not echoed on a terminal); reads a line of standard input otherwise. */
  secret(question: string): Promise<string>;
  /** A person at a terminal (asked twice for a new password), rather than piped input. */
  interactive: boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

async function userByEmail(deps: Infra, email: string): Promise<UserRow> {
  const user = await findUserByEmail(deps, email);
  if (!user) throw notFound(`No account with the email ${normalizeEmail(email)}`);
  return user;
}

export async function createUser(deps: Infra, flags: { email: string; password?: string; name?: string; verified?: boolean }, io: Io): Promise<UserRow> {
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
  io.out(`created ${row.id} (${email}), ${flags.verified ? 'email verified' : 'email not verified: verify-user, or the user asks for a new verification mail'}`);
  return row;
}

export async function verifyUser(deps: Infra, email: string, io: Io): Promise<void> {
  const user = await userByEmail(deps, email);
  if (user.emailVerifiedAt) {
    io.out(`${user.id} (${user.email}) was verified already`);
    return;
  }
  const now = deps.clock.now();
  await deps.db.update(users).set({ emailVerifiedAt: now, updatedAt: now }).where(eq(users.id, user.id));
  await deps.users.changed(user.id);
  io.out(`verified ${user.id} (${user.email})`);
}

export async function disableUser(deps: Infra, email: string, io: Io): Promise<void> {
  const user = await userByEmail(deps, email);
  const { revokedSessions } = await deactivateUser(deps, user.id);
  io.out(`disabled ${user.id} (${user.email}): ${revokedSessions} session${revokedSessions === 1 ? '' : 's'} revoked`);
}

export async function enableUser(deps: Infra, email: string, io: Io): Promise<void> {
  const user = await userByEmail(deps, email);
  if (user.isActive) {
    io.out(`${user.id} (${user.email}) is active already`);
    return;
  }
  await deps.db.update(users).set({ isActive: true, updatedAt: deps.clock.now() }).where(eq(users.id, user.id));
  await deps.users.changed(user.id);
  io.out(`enabled ${user.id} (${user.email})`);
}

/** A service's refusal as one line: its message, and its details when they add something. */
export function describeError(err: unknown): string {
  if (err instanceof AppError) return err.details ? `${err.message}: ${err.details}` : err.message;
  return (err as Error).message ?? String(err);
}
