// The hashing cost. The suite hashes cheaply (test/harness.ts); this file holds the production cost to
// account: an app built without the harness's cost stores Argon2id at m=64 MiB, t=3, p=4, and a hash
// made at another cost still verifies, since verifying reads the cost from the stored hash.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { login, registerUser, uniqueEmail, verifyEmailOf } from '../../../test/factories.js';
import { queryRows } from '../../../test/harness.js';
import { t, useApp } from '../../../test/fixtures/app.js';
import { createPasswordHasher } from './passwords.js';

const PRODUCTION_PREFIX = '$argon2id$v=19$m=65536,t=3,p=4$';

useApp({ productionHashCost: true });

describe('password hashing', () => {
  it('stores Argon2id at m=64 MiB, t=3, p=4 unless told otherwise, and signs in with it', async () => {
    const email = uniqueEmail('argon');
    const { userId } = await registerUser(t, email);
    const [row] = await queryRows<{ password_hash: string }>(
      t,
      sql`select password_hash from users where id = ${userId}`,
    );
    expect(row!.password_hash.startsWith(PRODUCTION_PREFIX)).toBe(true);
    await verifyEmailOf(t, email);
    expect((await login(t, email)).accessToken).toEqual(expect.any(String));
  });

  it('verifies a hash made at another cost, and refuses the wrong password for it', async () => {
    const cheap = createPasswordHasher(1, 10, { memoryCost: 1024, timeCost: 1, parallelism: 1 });
    const standard = createPasswordHasher(1, 10);
    const stored = await cheap.hash('Correct-horse-1');
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$/);
    expect(await standard.verify(stored, 'Correct-horse-1')).toBe(true);
    expect(await standard.verify(stored, 'Correct-horse-2')).toBe(false);
    expect((await standard.hash('Correct-horse-1')).startsWith(PRODUCTION_PREFIX)).toBe(true);
  });
});
