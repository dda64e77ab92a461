// An independent RFC 6238 TOTP generator for the tests (HMAC-SHA1, 6 digits, 30 s steps), written
// with node:crypto only, so the service's implementation is checked against a second one.
import { createHmac } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
export const PERIOD_S = 30;

/** RFC 4648 base32 (padding and case ignored). */
export function base32Decode(input: string): Buffer {
  const clean = input.replace(/=+$/, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const idx = ALPHABET.indexOf(ch);
    if (idx < 0) throw new Error(`not base32: ${ch}`);
    value = (value << 5) | idx;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** HOTP of RFC 4226 for a counter. */
export function hotp(key: Buffer, counter: number): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(msg).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const bin = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(bin % 1_000_000).padStart(6, '0');
}

export const timeStep = (at: Date) => Math.floor(at.getTime() / 1000 / PERIOD_S);

/** The code of `secret` (base32) at time `at`, shifted by `stepOffset` periods. */
export function totpCode(secret: string, at: Date, stepOffset = 0): string {
  return hotp(base32Decode(secret), timeStep(at) + stepOffset);
}

/** A 6-digit code that is none of the codes of `secret` within ±2 steps of `at`. */
export function wrongCode(secret: string, at: Date): string {
  const taken = new Set([-2, -1, 0, 1, 2].map((o) => totpCode(secret, at, o)));
  for (let n = 123456; ; n = (n + 111111) % 1_000_000) {
    const c = String(n).padStart(6, '0');
    if (!taken.has(c)) return c;
  }
}
