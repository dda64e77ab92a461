// Encryption at rest with a list of keys: the first encrypts, every one decrypts, and a value no key
// opens is a DecryptError (callers answer it clearly instead of with the cipher's own message).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DecryptError, decrypt, encrypt } from './secrets.js';

const a = randomBytes(32);
const b = randomBytes(32);
const c = randomBytes(32);

describe('encrypt and decrypt', () => {
  it('round-trips with one key, as a Buffer or a list of one', () => {
    const enc = encrypt(a, 'whsec_secret');
    expect(enc).toMatch(/^v1\./);
    expect(decrypt(a, enc)).toBe('whsec_secret');
    expect(decrypt([a], enc)).toBe('whsec_secret');
  });

  it('decrypts with any key of the list, wherever it stands', () => {
    const underA = encrypt(a, 'old');
    const underB = encrypt(b, 'new');
    expect(decrypt([b, a], underA)).toBe('old');
    expect(decrypt([b, a], underB)).toBe('new');
    expect(decrypt([c, b, a], underA)).toBe('old');
  });

  it('throws DecryptError when no key of the list opens the value', () => {
    const underA = encrypt(a, 'old');
    for (const keys of [b, [b], [b, c], []]) {
      let caught: unknown;
      try {
        decrypt(keys, underA);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(DecryptError);
      expect((caught as DecryptError).reason).toBe('no-key');
      expect((caught as Error).message).toContain('ENCRYPTION_KEY');
      expect((caught as Error).message).not.toMatch(/unable to authenticate/);
    }
  });

  it('throws DecryptError for a value altered or not made by encrypt', () => {
    const enc = encrypt(a, 'value');
    const [v, iv, tag, data] = enc.split('.') as [string, string, string, string];
    const flipped = Buffer.from(data, 'base64url');
    flipped[0]! ^= 1;
    expect(() => decrypt(a, [v, iv, tag, flipped.toString('base64url')].join('.'))).toThrow(DecryptError);
    for (const bad of ['', 'plain text', 'v2.a.b.c', 'v1.only']) {
      let caught: unknown;
      try {
        decrypt([a, b], bad);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(DecryptError);
      expect((caught as DecryptError).reason).toBe('format');
    }
  });
});
