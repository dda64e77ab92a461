// Argon2id (m=64 MiB, t=3, p=4), with a bounded number of hashes in flight.
// Unknown emails are verified against a dummy hash so both paths take the same time (docs/api.md#sign-in-with-email-and-password).
import { type Algorithm, hash, verify } from '@node-rs/argon2';
import type { PasswordPolicy } from '../../config.js';
import { AppError, validationError } from '../../lib/errors.js';
import { randomToken } from '../../lib/secrets.js';
import { QueueFullError, Semaphore } from '../../lib/semaphore.js';

// 2 is Algorithm.Argon2id (a const enum, which isolated modules cannot read).
export const ARGON2_OPTIONS = {
  algorithm: 2 as Algorithm.Argon2id,
  memoryCost: 65536,
  timeCost: 3,
  parallelism: 4,
} as const;

/** The cost of new hashes. Verifying reads the cost from the stored hash, so any hash made before keeps working. */
export interface HashCost {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

// `cost` is ARGON2_OPTIONS everywhere but in the test harness, which hashes cheaply to spare the CPU
// (no configuration reaches it: a deployment always hashes at ARGON2_OPTIONS).
export function createPasswordHasher(concurrency: number, queueLimit: number, cost: HashCost = ARGON2_OPTIONS) {
  const options = { algorithm: ARGON2_OPTIONS.algorithm, ...cost };
  const gate = new Semaphore(concurrency, queueLimit);
  let dummy: Promise<string> | null = null;

  async function gated<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await gate.run(fn);
    } catch (err) {
      if (err instanceof QueueFullError) {
        throw new AppError('SERVICE_UNAVAILABLE', 'Too many sign-in attempts in progress', 'Try again in a moment', {
          'Retry-After': '1',
        });
      }
      throw err;
    }
  }

  return {
    /** Hashes waiting for a slot (GET /metrics: tenantry_password_hash_queue_depth). */
    queueDepth: () => gate.queued,
    hash: (password: string) => gated(() => hash(password, options)),
    verify: (passwordHash: string, password: string) => gated(() => verify(passwordHash, password).catch(() => false)),
    /** Same work as a real verify, for an account that does not exist; always false. */
    async verifyDummy(password: string): Promise<false> {
      // Made once, inside the gate like every other hash.
      dummy ??= gated(() => hash(randomToken(16), options));
      const h = await dummy;
      await gated(() => verify(h, password).catch(() => false));
      return false;
    },
  };
}

export type PasswordHasher = ReturnType<typeof createPasswordHasher>;

/** docs/api.md#password-policy; `field` names the body field in the error details. */
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
