// Two-factor authentication with TOTP and backup codes (spec §5.2.7, DECISIONS §2).
import { randomBytes } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import type { UserActor } from '../../http/actor.js';
import { AppError, authenticationError, notFound, validationError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { decrypt, encrypt, sha256 } from '../../lib/secrets.js';
import { matchTotp, newTotpSecret, totpUri } from '../../lib/totp.js';
import { users, type UserRow } from '../users/tables.js';
import { backupCodes, twoFactor } from './tables.js';

const BACKUP_CODE_COUNT = 10;
const BACKUP_CODE = /^[0-9a-f]{8}$/;

const invalidCode = () => validationError('Invalid two-factor code', 'code: does not match the authenticator or an unused backup code');

async function loadActiveUser(deps: Deps, userId: string): Promise<UserRow> {
  const [user] = await deps.db.select().from(users).where(eq(users.id, userId));
  if (!user || !user.isActive) throw notFound('User not found');
  return user;
}

async function checkPassword(deps: Deps, user: UserRow, password: string) {
  if (!user.passwordHash || !(await deps.passwords.verify(user.passwordHash, password))) {
    throw authenticationError('Password is incorrect');
  }
}

async function replaceBackupCodes(deps: Deps, tx: Tx, userId: string): Promise<string[]> {
  const now = deps.clock.now();
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, () => randomBytes(4).toString('hex'));
  await tx.delete(backupCodes).where(eq(backupCodes.userId, userId));
  await tx.insert(backupCodes).values(codes.map((code) => ({ id: newId('tok', now.getTime()), userId, codeHash: sha256(code), createdAt: now })));
  return codes;
}

/**
 * A new pending secret and a new set of backup codes. While two-factor is enabled the active secret
 * stays in force until a code of the new one is verified; the old backup codes stop working at once.
 */
export async function setupTwoFactor(deps: Deps, actor: UserActor, password: string) {
  const user = await loadActiveUser(deps, actor.userId);
  await checkPassword(deps, user, password);
  const secret = newTotpSecret();
  const pending = encrypt(deps.config.encryptionKey, secret);
  const backup = await deps.db.transaction(async (tx) => {
    await tx
      .insert(twoFactor)
      .values({ userId: user.id, pendingSecretEnc: pending, updatedAt: deps.clock.now() })
      .onConflictDoUpdate({ target: twoFactor.userId, set: { pendingSecretEnc: pending, updatedAt: deps.clock.now() } });
    return replaceBackupCodes(deps, tx, user.id);
  });
  return { secret, qrCode: totpUri(secret, user.email), backupCodes: backup };
}

export async function verifyTwoFactorSetup(deps: Deps, actor: UserActor, code: string) {
  const [state] = await deps.db.select().from(twoFactor).where(eq(twoFactor.userId, actor.userId));
  if (!state?.pendingSecretEnc) throw validationError('No two-factor setup is pending', 'Call POST /auth/two-factor/setup first');
  const step = matchTotp(decrypt(deps.config.encryptionKey, state.pendingSecretEnc), code, deps.clock.now());
  if (step === null) throw invalidCode();
  await deps.db.transaction(async (tx) => {
    // Guarded on the same pending secret, so a concurrent second setup is not silently activated.
    const [done] = await tx
      .update(twoFactor)
      .set({ secretEnc: state.pendingSecretEnc, pendingSecretEnc: null, lastUsedStep: step, updatedAt: deps.clock.now() })
      .where(and(eq(twoFactor.userId, actor.userId), eq(twoFactor.pendingSecretEnc, state.pendingSecretEnc!)))
      .returning({ userId: twoFactor.userId });
    if (!done) throw invalidCode();
    await tx.update(users).set({ twoFactorEnabled: true, updatedAt: deps.clock.now() }).where(eq(users.id, actor.userId));
  });
  await deps.users.changed(actor.userId);
  return { twoFactorEnabled: true };
}

/**
 * Checks a second factor against the active secret or the unused backup codes. A TOTP step is
 * accepted once (the guarded update on lastUsedStep), a backup code once (the guarded usedAt).
 */
export async function consumeSecondFactor(deps: Deps, userId: string, code: string): Promise<boolean> {
  const trimmed = code.trim().toLowerCase();
  const now = deps.clock.now();
  if (BACKUP_CODE.test(trimmed)) {
    const [used] = await deps.db
      .update(backupCodes)
      .set({ usedAt: now })
      .where(and(eq(backupCodes.userId, userId), eq(backupCodes.codeHash, sha256(trimmed)), isNull(backupCodes.usedAt)))
      .returning({ id: backupCodes.id });
    return Boolean(used);
  }
  const [state] = await deps.db.select().from(twoFactor).where(eq(twoFactor.userId, userId));
  if (!state?.secretEnc) return false;
  const step = matchTotp(decrypt(deps.config.encryptionKey, state.secretEnc), trimmed, now);
  if (step === null) return false;
  const [accepted] = await deps.db
    .update(twoFactor)
    .set({ lastUsedStep: step })
    .where(and(eq(twoFactor.userId, userId), sql`(${twoFactor.lastUsedStep} is null or ${twoFactor.lastUsedStep} < ${step})`))
    .returning({ userId: twoFactor.userId });
  return Boolean(accepted);
}

export async function disableTwoFactor(deps: Deps, actor: UserActor, input: { password: string; code: string }) {
  const user = await loadActiveUser(deps, actor.userId);
  await checkPassword(deps, user, input.password);
  if (!user.twoFactorEnabled) throw validationError('Two-factor authentication is not enabled');
  if (!(await consumeSecondFactor(deps, user.id, input.code))) throw invalidCode();
  await deps.db.transaction(async (tx) => {
    await tx.delete(twoFactor).where(eq(twoFactor.userId, user.id));
    await tx.delete(backupCodes).where(eq(backupCodes.userId, user.id));
    await tx.update(users).set({ twoFactorEnabled: false, updatedAt: deps.clock.now() }).where(eq(users.id, user.id));
  });
  await deps.users.changed(user.id);
  return { twoFactorEnabled: false };
}

export const twoFactorRequired = () =>
  new AppError(401, 'AUTHENTICATION_ERROR', 'Two-factor code required', 'Send twoFactorCode: a code from the authenticator app or a backup code', {}, { requiresTwoFactor: true });

export const invalidSecondFactor = () => new AppError(401, 'AUTHENTICATION_ERROR', 'Invalid two-factor code', 'The code does not match the authenticator or an unused backup code');
