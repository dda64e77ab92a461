// Argon2id at the spec's parameters (m=64 MiB, t=3, p=4), with a bounded number of hashes in flight.
// Unknown emails are verified against a dummy hash so both paths take the same time (spec §5.2.4).
import { type Algorithm, hash, verify } from '@node-rs/argon2';
import type { PasswordPolicy } from '../../config.js';
import { AppError, validationError } from '../../http/errors.js';
import { randomToken } from '../../lib/secrets.js';
import { QueueFullError, Semaphore } from '../../lib/semaphore.js';

// 2 is Algorithm.Argon2id (a const enum, which isolated modules cannot read).
export const ARGON2_OPTIONS = { algorithm: 2 as Algorithm.Argon2id, memoryCost: 65536, timeCost: 3, parallelism: 4 } as const;

export function createPasswordHasher(concurrency: number, queueLimit: number) {
  const gate = new Semaphore(concurrency, queueLimit);
  let dummy: Promise<string> | null = null;

  async function gated<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await gate.run(fn);
    } catch (err) {
      if (err instanceof QueueFullError) {
        throw new AppError(503, 'SERVICE_UNAVAILABLE', 'Too many sign-in attempts in progress', 'Try again in a moment', { 'Retry-After': '1' });
      }
      throw err;
    }
  }

  return {
    hash: (password: string) => gated(() => hash(password, ARGON2_OPTIONS)),
    verify: (passwordHash: string, password: string) => gated(() => verify(passwordHash, password).catch(() => false)),
    /** Same work as a real verify, for an account that does not exist; always false. */
    async verifyDummy(password: string): Promise<false> {
      // Made once, inside the gate like every other hash.
      dummy ??= gated(() => hash(randomToken(16), ARGON2_OPTIONS));
      const h = await dummy;
      await gated(() => verify(h, password).catch(() => false));
      return false;
    },
  };
}

export type PasswordHasher = ReturnType<typeof createPasswordHasher>;

/** Spec §5.2.2 and DECISIONS §2; `field` names the body field in the error details. */
export function assertPasswordPolicy(policy: PasswordPolicy, password: string, field: string): void {
  const problems: string[] = [];
  if (password.length < policy.minLength) problems.push(`at least ${policy.minLength} characters`);
  if (password.length > policy.maxLength) problems.push(`at most ${policy.maxLength} characters`);
  if (policy.requireUppercase && !/\p{Lu}/u.test(password)) problems.push('an uppercase letter');
  if (policy.requireLowercase && !/\p{Ll}/u.test(password)) problems.push('a lowercase letter');
  if (policy.requireNumber && !/\p{Nd}/u.test(password)) problems.push('a number');
  if (policy.requireSpecial && !/[^\p{L}\p{Nd}]/u.test(password)) problems.push('a special character');
  if (problems.length > 0) {
    throw validationError('Password does not meet the policy', `${field}: must contain ${problems.join(', ')}`);
  }
}
