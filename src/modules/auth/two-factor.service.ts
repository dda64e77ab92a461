// Two-factor authentication with TOTP and backup codes (docs/security.md). Every password and code
// check here is reserved on the account's lockout first (lockout.ts).
import { createHmac, randomBytes } from 'node:crypto';
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import type { UserActor } from '../../http/actor.js';
import { AppError, authenticationError, notFound, validationError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { decrypt, DecryptError, encrypt, sha256 } from '../../lib/secrets.js';
import { matchTotp, newTotpSecret, totpUri } from '../../lib/totp.js';
import { users, type UserRow } from '../../db/tables/users.js';
import { releaseCheck, reservedCheck } from './lockout.js';
import { backupCodes, twoFactor } from '../../db/tables/auth.js';

const BACKUP_CODE_COUNT = 10;
// Backup codes are 10 characters of Crockford's base32 (50 random bits), shown as `xxxxx-xxxxx`.
// They are stored as an HMAC keyed from ENCRYPTION_KEY and the user id, so a dump of the database
// alone yields none of them, and equal codes of two users do not look alike.
const BACKUP_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BACKUP_CODE = /^[0-9a-hjkmnp-tv-z]{10}$/;
// Codes issued before (8 hex characters, stored as plain SHA-256) keep working until replaced.
const LEGACY_BACKUP_CODE = /^[0-9a-f]{8}$/;

function newBackupCode(): string {
  // 32 divides 256, so a byte's low 5 bits are uniform.
  const chars = [...randomBytes(10)].map((b) => BACKUP_ALPHABET[b & 31]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** A typed backup code as stored: case, blanks and the dash ignored; i, l and o read as 1, 1 and 0. */
function normalizeBackupCode(input: string): string | null {
  const code = input.toLowerCase().replace(/[\s-]/g, '').replace(/[il]/g, '1').replace(/o/g, '0');
  return BACKUP_CODE.test(code) ? code : null;
}

/** The stored form of a backup code under one encryption key (each key in the list is tried). */
function backupCodeHash(key: Buffer, userId: string, code: string): string {
  const codeKey = createHmac('sha256', key).update('tenantry backup codes v1').digest();
  return createHmac('sha256', codeKey).update(`${userId}:${code}`).digest('hex');
}

/** A stored secret in clear; one that no key of ENCRYPTION_KEY opens fails the request, saying so. */
function openSecret(deps: Deps, enc: string): string {
  try {
    return decrypt(deps.config.encryptionKeys, enc);
  } catch (err) {
    if (!(err instanceof DecryptError)) throw err;
    deps.logger.error({ err: { message: err.message } }, 'a two-factor secret cannot be decrypted');
    throw new AppError(500, 'INTERNAL_ERROR', 'The two-factor secret cannot be read', 'It was encrypted with a key that ENCRYPTION_KEY no longer lists');
  }
}

const invalidCode = () => validationError('Invalid two-factor code', 'code: does not match the authenticator or an unused backup code');

async function loadActiveUser(deps: Deps, userId: string): Promise<UserRow> {
  const [user] = await deps.db.select().from(users).where(eq(users.id, userId));
  if (!user || !user.isActive) throw notFound('User not found');
  return user;
}

/**
 * The password, and a current second factor when `code` is given, checked under one reservation of
 * the account's lockout: a wrong one counts as a sign-in failure; right ones release it.
 */
async function confirmIdentity(deps: Deps, user: UserRow, password: string, code: string | null) {
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

async function replaceBackupCodes(deps: Deps, tx: Tx, userId: string): Promise<string[]> {
  const now = deps.clock.now();
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  const key = deps.config.encryptionKey;
  await tx.delete(backupCodes).where(eq(backupCodes.userId, userId));
  await tx
    .insert(backupCodes)
    .values(codes.map((code) => ({ id: newId('tok', now.getTime()), userId, codeHash: backupCodeHash(key, userId, normalizeBackupCode(code)!), createdAt: now })));
  return codes;
}

/**
 * A new pending secret and a new set of backup codes. While two-factor is enabled it needs a current
 * code (TOTP or backup), and the active secret stays in force until a code of the new one is
 * verified; the old backup codes stop working at once.
 */
export async function setupTwoFactor(deps: Deps, actor: UserActor, input: { password: string; code?: string }) {
  const user = await loadActiveUser(deps, actor.userId);
  if (user.twoFactorEnabled && !input.code) {
    throw validationError('A current two-factor code is required', 'code: is required while two-factor authentication is enabled');
  }
  await confirmIdentity(deps, user, input.password, user.twoFactorEnabled ? input.code! : null);
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
  const step = matchTotp(openSecret(deps, state.pendingSecretEnc), code, deps.clock.now());
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
  const backup = normalizeBackupCode(trimmed);
  if (backup || LEGACY_BACKUP_CODE.test(trimmed)) {
    const hashes = backup ? deps.config.encryptionKeys.map((key) => backupCodeHash(key, userId, backup)) : [sha256(trimmed)];
    const [used] = await deps.db
      .update(backupCodes)
      .set({ usedAt: now })
      .where(and(eq(backupCodes.userId, userId), inArray(backupCodes.codeHash, hashes), isNull(backupCodes.usedAt)))
      .returning({ id: backupCodes.id });
    return Boolean(used);
  }
  const [state] = await deps.db.select().from(twoFactor).where(eq(twoFactor.userId, userId));
  if (!state?.secretEnc) return false;
  const step = matchTotp(openSecret(deps, state.secretEnc), trimmed, now);
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
  await confirmIdentity(deps, user, input.password, user.twoFactorEnabled ? input.code : null);
  if (!user.twoFactorEnabled) throw validationError('Two-factor authentication is not enabled');
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
