// Setting two-factor up, confirming and turning it off (docs/security.md). Every password and code
// check here is reserved on the account's lockout first (sign-in.ts).
import { and, eq } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { UserActor } from '../../platform/identity/actor.js';
import { authenticationError, notFound, validationError } from '../../lib/errors.js';
import { encrypt } from '../../lib/secrets.js';
import { matchTotp, newTotpSecret, totpUri } from '../../lib/totp.js';
import { consumeSecondFactor, openSecret, replaceBackupCodes } from './second-factor.js';
import { users, type UserRow } from '../../db/tables/users.js';
import { releaseCheck, reservedCheck } from './sign-in.js';
import { backupCodes, twoFactor } from '../../db/tables/auth.js';
import { transaction } from '../../db/transaction.js';
import type { PasswordProofDeps } from './reauthentication.js';

const invalidCode = () =>
  validationError('Invalid two-factor code', 'code: does not match the authenticator or an unused backup code');

async function loadActiveUser(deps: Pick<Infra, 'db'>, userId: string): Promise<UserRow> {
  const [user] = await deps.db.select().from(users).where(eq(users.id, userId));
  if (!user || !user.isActive) throw notFound('User not found');
  return user;
}

/**
 * The password, and a current second factor when `code` is given, checked under one reservation of
 * the account's lockout: a wrong one counts as a sign-in failure; right ones release it.
 */
async function confirmIdentity(deps: PasswordProofDeps, user: UserRow, password: string, code: string | null) {
  const passwordHash = user.passwordHash;
  let codeChecked = false;
  const reservation = await reservedCheck(deps, user.id, async () => {
    if (!passwordHash || !(await deps.passwords.verify(passwordHash, password))) return false;
    if (code === null) return true;
    codeChecked = true;
    return consumeSecondFactor(deps, user.id, code);
  });
  if (!reservation) throw codeChecked ? invalidCode() : authenticationError('Password is incorrect');
  await releaseCheck(deps, reservation);
}

/**
 * A new pending secret and a new set of backup codes. While two-factor is enabled it needs a current
 * code (TOTP or backup), and the active secret stays in force until a code of the new one is
 * verified; the old backup codes stop working at once.
 */
export async function setupTwoFactor(
  deps: PasswordProofDeps,
  actor: UserActor,
  input: { password: string; code?: string },
) {
  const user = await loadActiveUser(deps, actor.userId);
  if (user.twoFactorEnabled && !input.code) {
    throw validationError(
      'A current two-factor code is required',
      'code: is required while two-factor authentication is enabled',
    );
  }
  await confirmIdentity(deps, user, input.password, user.twoFactorEnabled ? input.code! : null);
  const secret = newTotpSecret();
  const pending = encrypt(deps.config.encryptionKey, secret);
  const backup = await transaction(deps.db, async (tx) => {
    await tx
      .insert(twoFactor)
      .values({ userId: user.id, pendingSecretEnc: pending, updatedAt: deps.clock.now() })
      .onConflictDoUpdate({
        target: twoFactor.userId,
        set: { pendingSecretEnc: pending, updatedAt: deps.clock.now() },
      });
    return replaceBackupCodes(deps, tx, user.id);
  });
  return { secret, otpauthUrl: totpUri(secret, user.email), backupCodes: backup };
}

export async function verifyTwoFactorSetup(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'userCache'>,
  actor: UserActor,
  code: string,
) {
  const [state] = await deps.db.select().from(twoFactor).where(eq(twoFactor.userId, actor.userId));
  if (!state?.pendingSecretEnc)
    throw validationError('No two-factor setup is pending', 'Call POST /auth/two-factor/setup first');
  const step = matchTotp(openSecret(deps, state.pendingSecretEnc), code, deps.clock.now());
  if (step === null) throw invalidCode();
  await transaction(deps.db, async (tx, afterCommit) => {
    // Guarded on the same pending secret, so a concurrent second setup is not silently activated.
    const [done] = await tx
      .update(twoFactor)
      .set({
        secretEnc: state.pendingSecretEnc,
        pendingSecretEnc: null,
        lastUsedStep: step,
        updatedAt: deps.clock.now(),
      })
      .where(and(eq(twoFactor.userId, actor.userId), eq(twoFactor.pendingSecretEnc, state.pendingSecretEnc!)))
      .returning({ userId: twoFactor.userId });
    if (!done) throw invalidCode();
    await tx
      .update(users)
      .set({ twoFactorEnabled: true, updatedAt: deps.clock.now() })
      .where(eq(users.id, actor.userId));
    afterCommit(() => deps.userCache.changed(actor.userId));
  });
  return { twoFactorEnabled: true };
}

export async function disableTwoFactor(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'userCache' | 'passwords' | 'checkWaits'>,
  actor: UserActor,
  input: { password: string; code: string },
) {
  const user = await loadActiveUser(deps, actor.userId);
  await confirmIdentity(deps, user, input.password, user.twoFactorEnabled ? input.code : null);
  if (!user.twoFactorEnabled) throw validationError('Two-factor authentication is not enabled');
  await transaction(deps.db, async (tx, afterCommit) => {
    await tx.delete(twoFactor).where(eq(twoFactor.userId, user.id));
    await tx.delete(backupCodes).where(eq(backupCodes.userId, user.id));
    await tx.update(users).set({ twoFactorEnabled: false, updatedAt: deps.clock.now() }).where(eq(users.id, user.id));
    afterCommit(() => deps.userCache.changed(user.id));
  });
  return { twoFactorEnabled: false };
}
