// Reading one variable: its default, its bounds, and a one-line ConfigError naming it when the value
// is wrong. Secrets are checked for length and variety and never echoed.
import os from 'node:os';
import { ConfigError } from './types.js';

export type Env = Record<string, string | undefined>;

const MIN_SECRET_LENGTH = 32;

export function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}
export function optional(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v === '' ? null : v;
}
/**
 * Argon2id hashes in flight by default: the cores divided by the 4 lanes of each hash (p=4,
 * ARGON2_OPTIONS in modules/auth/passwords.ts), at least 1. @node-rs/argon2 runs a hash's lanes on
 * parallel threads, so one hash already fills 2 cores; measured there, a second one in flight adds
 * no throughput, only thrashing, and doubles each sign-in's wait.
 */
export function defaultHashConcurrency(): number {
  return Math.max(1, Math.floor(os.availableParallelism() / 4));
}
export function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}
export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}
export function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const raw = optional(env, name) ?? fallback;
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use one of ${protocols.join(', ')}`);
  }
  return raw;
}
/** A secret is weak when it is short or has almost no variety ("aaaa…", "1234…"). */
export function checkSecret(name: string, value: string): string {
  if (value.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(name, `must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  if (new Set(value).size < 10) throw new ConfigError(name, 'is too weak (too few distinct characters)');
  return value;
}
export function parseEncryptionKey(name: string, raw: string): Buffer {
  const trimmed = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const buf = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (buf.length === 32) return buf;
  }
  throw new ConfigError(name, 'must be 32 bytes, as 64 hex characters or base64');
}
/**
 * ENCRYPTION_KEY is one key or a comma-separated list of them (to change keys without losing what
 * the old one encrypted): the first encrypts, every one decrypts. Errors say which entry is wrong
 * and never echo a key.
 */
export function parseEncryptionKeys(name: string, raw: string): Buffer[] {
  const entries = raw.split(',').map((e) => e.trim());
  if (entries.length === 1) return [parseEncryptionKey(name, entries[0]!)];
  const keys = entries.map((entry, i) => {
    const which = `entry ${i + 1} of ${entries.length}`;
    if (entry === '') throw new ConfigError(name, `has an empty ${which}: separate the keys with single commas`);
    try {
      return parseEncryptionKey(name, entry);
    } catch {
      throw new ConfigError(name, `${which} must be 32 bytes, as 64 hex characters or base64`);
    }
  });
  keys.forEach((key, i) => {
    const first = keys.findIndex((k) => k.equals(key));
    if (first !== i) throw new ConfigError(name, `lists the same key twice (entries ${first + 1} and ${i + 1})`);
  });
  return keys;
}
export function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw.trim() === '') return false;
  const v = raw.trim();
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (/^\d+$/.test(v)) return Number(v);
  // Comma-separated addresses or CIDRs: Fastify (proxy-addr) validates them when the app starts.
  for (const part of v.split(',')) {
    if (!/^[0-9a-fA-F.:/]+$|^(loopback|linklocal|uniquelocal)$/.test(part.trim())) {
      throw new ConfigError('TRUST_PROXY', `has an invalid entry "${part.trim()}"`);
    }
  }
  return v;
}
