// Prefixed, time-sortable ids (docs/api.md#identifiers-and-timestamps): `usr_` + a lowercase ULID, 48 bits of milliseconds
// and 80 random bits in Crockford base32.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix =
  | 'usr'
  | 'org'
  | 'mbr'
  | 'inv'
  | 'ses'
  | 'wh'
  | 'sub'
  | 'key'
  | 'prj'
  | 'dlv'
  | 'evt'
  | 'aud'
  | 'tok'
  | 'pk'
  | 'chl'
  | 'jwk';

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32]! + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  // 10 bytes = 80 bits = 16 base32 characters.
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31]!;
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

let lastTime = -1;
let lastRandom = Buffer.alloc(10);

/**
 * Monotonic within this process: ids made in the same millisecond (or under a clock that stands
 * still, as in tests) increment the random part, so ids sort in creation order.
 */
export function ulid(now = Date.now()): string {
  if (now <= lastTime) {
    for (let i = lastRandom.length - 1; i >= 0; i--) {
      lastRandom[i] = (lastRandom[i]! + 1) & 0xff;
      if (lastRandom[i] !== 0) break;
    }
    return encodeTime(lastTime) + encodeRandom(lastRandom);
  }
  lastTime = now;
  lastRandom = randomBytes(10);
  // Keep headroom so increments within a millisecond never wrap.
  lastRandom[0]! &= 0x7f;
  return encodeTime(now) + encodeRandom(lastRandom);
}

export function newId(prefix: IdPrefix, now?: number): string {
  return `${prefix}_${ulid(now)}`;
}
