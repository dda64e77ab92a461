// Random tokens, hashes and constant-time comparison. Secrets are stored only as SHA-256 hashes
// (tokens with 128+ random bits need no slow hash) or encrypted (TOTP secrets, webhook signing secrets)
// under the keys of ENCRYPTION_KEY.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function hmacSha256Hex(key: string | Buffer, message: string): string {
  return createHmac('sha256', key).update(message).digest('hex');
}

/** AES-256-GCM; output is `v1.<iv>.<tag>.<ciphertext>` in base64url. Encrypts with the first key of ENCRYPTION_KEY. */
export function encrypt(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join(
    '.',
  );
}

/**
 * A stored value that cannot be decrypted: `format` when it is not something `encrypt` made (or is
 * cut short), `no-key` when no key given authenticates it, i.e. it was encrypted with a key that
 * ENCRYPTION_KEY no longer lists. The message names ENCRYPTION_KEY and carries nothing secret.
 */
export class DecryptError extends Error {
  constructor(readonly reason: 'format' | 'no-key') {
    super(
      reason === 'format'
        ? 'The stored value is not in the format written with ENCRYPTION_KEY'
        : 'The stored value cannot be decrypted with any key of ENCRYPTION_KEY (it was encrypted with a key no longer listed)',
    );
    this.name = 'DecryptError';
  }
}

/**
 * Decrypts with the one key given, or with each key of the list in turn until one authenticates the
 * value (GCM's tag makes a wrong key fail, never return garbage). Throws DecryptError otherwise.
 */
export function decrypt(keys: Buffer | readonly Buffer[], payload: string): string {
  const parts = payload.split('.');
  const [version, iv, tag, data] = parts;
  if (parts.length !== 4 || version !== 'v1' || !iv || !tag || data === undefined) throw new DecryptError('format');
  const ivBytes = Buffer.from(iv, 'base64url');
  const tagBytes = Buffer.from(tag, 'base64url');
  if (ivBytes.length !== 12 || tagBytes.length !== 16) throw new DecryptError('format');
  const ciphertext = Buffer.from(data, 'base64url');
  for (const key of Buffer.isBuffer(keys) ? [keys] : keys) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, ivBytes);
      decipher.setAuthTag(tagBytes);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      // Not this key: the next one.
    }
  }
  throw new DecryptError('no-key');
}
