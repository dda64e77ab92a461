// The second factor of an account: checking a TOTP code or a backup code (each accepted once), the
// store of backup codes, and opening the TOTP secret. No lockout here: callers reserve their checks
// (sign-in.ts).
import { createHmac, randomBytes } from 'node:crypto';
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { decrypt, DecryptError, sha256 } from '../../lib/secrets.js';
import { matchTotp } from '../../lib/totp.js';
import { backupCodes, twoFactor } from '../../db/tables/auth.js';

const BACKUP_CODE_COUNT = 10;
// Backup codes are 8 lowercase hexadecimal characters (32 random bits), typed in any case. With 10
// per account and the lockout's 5 checks per 15 minutes, guessing one stays out of reach. They are
// stored as an HMAC keyed from ENCRYPTION_KEY and the user id, so a dump of the database alone
// yields none of them, and equal codes of two users do not look alike.
const BACKUP_CODE = /^[0-9a-f]{8}$/;
// Codes issued in an earlier form keep working until the next setup replaces them: 10 characters
// of Crockford's base32 shown as `xxxxx-xxxxx` (keyed as today), and before those, 8 hex
// characters stored as plain SHA-256 (a typed hex code is checked against both forms).
const EARLIER_BASE32_CODE = /^[0-9a-hjkmnp-tv-z]{10}$/;

function newBackupCode(): string {
  return randomBytes(4).toString('hex');
}

/** A typed backup code as it is hashed: case, blanks and dashes ignored (earlier base32 codes: i, l and o read as 1, 1 and 0). */
function normalizeBackupCode(input: string): string | null {
  const code = input.toLowerCase().replace(/[\s-]/g, '');
  if (BACKUP_CODE.test(code)) return code;
  const base32 = code.replace(/[il]/g, '1').replace(/o/g, '0');
  return EARLIER_BASE32_CODE.test(base32) ? base32 : null;
}

/** The stored form of a backup code under one encryption key (each key in the list is tried). */
function backupCodeHash(key: Buffer, userId: string, code: string): string {
  const codeKey = createHmac('sha256', key).update('tenantry backup codes v1').digest();
  return createHmac('sha256', codeKey).update(`${userId}:${code}`).digest('hex');
}

/** A stored secret in clear; one that no key of ENCRYPTION_KEY opens fails the request, saying so. */
export function openSecret(deps: Pick<Infra, 'config' | 'logger'>, enc: string): string {
  try {
    return decrypt(deps.config.encryptionKeys, enc);
  } catch (err) {
    if (!(err instanceof DecryptError)) throw err;
    deps.logger.error({ err: { message: err.message } }, 'a two-factor secret cannot be decrypted');
    throw new AppError(
      'INTERNAL_ERROR',
      'The two-factor secret cannot be read',
      'It was encrypted with a key that ENCRYPTION_KEY no longer lists',
    );
  }
}

export async function replaceBackupCodes(
  deps: Pick<Infra, 'config' | 'clock'>,
  tx: Tx,
  userId: string,
): Promise<string[]> {
  const now = deps.clock.now();
  // Distinct, as the store's unique index wants (two equal codes of 32 bits in ten are rare, not impossible).
  const distinct = new Set<string>();
  while (distinct.size < BACKUP_CODE_COUNT) distinct.add(newBackupCode());
  const codes = [...distinct];
  const key = deps.config.encryptionKey;
  await tx.delete(backupCodes).where(eq(backupCodes.userId, userId));
  await tx.insert(backupCodes).values(
    codes.map((code) => ({
      id: newId('tok', now.getTime()),
      userId,
      codeHash: backupCodeHash(key, userId, code),
      createdAt: now,
    })),
  );
  return codes;
}

/**
 * Checks a second factor against the active secret or the unused backup codes. A TOTP step is
 * accepted once (the guarded update on lastUsedStep), a backup code once (the guarded usedAt).
 */
export async function consumeSecondFactor(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db'>,
  userId: string,
  code: string,
): Promise<boolean> {
  const trimmed = code.trim().toLowerCase();
  const now = deps.clock.now();
  const backup = normalizeBackupCode(trimmed);
  if (backup) {
    const hashes = deps.config.encryptionKeys.map((key) => backupCodeHash(key, userId, backup));
    if (BACKUP_CODE.test(backup)) hashes.push(sha256(backup));
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
    .where(
      and(
        eq(twoFactor.userId, userId),
        sql`(${twoFactor.lastUsedStep} is null or ${twoFactor.lastUsedStep} < ${step})`,
      ),
    )
    .returning({ userId: twoFactor.userId });
  return Boolean(accepted);
}

export const twoFactorRequired = () =>
  new AppError(
    'AUTHENTICATION_ERROR',
    'Two-factor code required',
    'Send twoFactorCode: a code from the authenticator app or a backup code',
    {},
    { requiresTwoFactor: true },
  );

export const invalidSecondFactor = () =>
  new AppError(
    'AUTHENTICATION_ERROR',
    'Invalid two-factor code',
    'The code does not match the authenticator or an unused backup code',
  );
