// The admin commands (admin/run.ts, what `npm run admin -- <command>` runs; the spawned command itself
// is tried in production-build.test.ts) on the real database of a running app, each outcome checked
// through HTTP: the account made signs in, a disabled one is signed out and refused, and after
// rotate-encryption-key an app that lists only the new key still signs in with two-factor and signs
// its webhooks.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, getMe, loginRaw, requestMagicLink } from '../../test/fixtures/auth.js';
import {
  createOrg,
  createWebhook,
  PASSWORD,
  registerUser,
  rowsOf,
  setPlan,
  signedInUser,
  stripeVerify,
  uniqueEmail,
} from '../../test/factories.js';
import { oauthAccounts } from '../db/tables/auth.js';
import { passkeys } from '../db/tables/passkeys.js';
import { createTestApp, json, type TestApp } from '../../test/harness.js';
import { totpCode } from '../../test/totp.js';
import { workerFixtures } from '../../test/fixtures/worker.js';
import { decrypt, DecryptError, encrypt } from '../lib/secrets.js';
import { parseArgs, UsageError } from './args.js';
import { rotateEncryptionKey } from './rotate.js';
import { runCommand } from './run.js';
import { describeError, type Io } from './users.js';
import { expectError } from '../../test/expect.js';

const OLD = randomBytes(32).toString('hex');
const NEW = randomBytes(32).toString('hex');
const key = (hex: string) => Buffer.from(hex, 'hex');
const PRIVATE = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };

const apps: TestApp[] = [];
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { ...PRIVATE, ENCRYPTION_KEY: OLD } });
  apps.push(t);
});
afterAll(async () => {
  for (const a of apps.reverse()) await a.close();
});

/** Another instance on the same database and clock, with its own ENCRYPTION_KEY. */
async function instance(encryptionKey: string) {
  const a = await createTestApp({
    database: t.database,
    clock: t.clock,
    env: { ...PRIVATE, ENCRYPTION_KEY: encryptionKey },
  });
  apps.push(a);
  return a;
}

function io(input: string[] = []): Io & { lines: string[] } {
  const lines: string[] = [];
  return { lines, interactive: false, out: (l) => lines.push(l), secret: async () => input.shift() ?? '' };
}

async function run(app: TestApp, argv: string[], input: string[] = []) {
  const parsed = parseArgs(argv);
  if (parsed.command === 'help') throw new Error('help');
  const out = io(input);
  try {
    return { code: await runCommand(app.deps, parsed.command, parsed.flags, out), lines: out.lines, error: null };
  } catch (err) {
    return { code: null, lines: out.lines, error: describeError(err) };
  }
}

describe('the command line', () => {
  it('refuses unknown commands and flags, missing values and required flags with a UsageError', () => {
    expect(() => parseArgs([])).toThrow(UsageError);
    expect(() => parseArgs(['drop-database'])).toThrow('unknown command "drop-database"');
    expect(() => parseArgs(['verify-user'])).toThrow('verify-user needs --email');
    expect(() => parseArgs(['verify-user', '--email'])).toThrow('--email needs a value');
    expect(() => parseArgs(['create-user', '--email=a@b.co', '--verified=yes'])).toThrow('--verified takes no value');
    expect(() => parseArgs(['enable-user', '--email', 'a@b.co', '--force'])).toThrow(
      'enable-user does not take "--force"',
    );
    expect(parseArgs(['create-user', '--email=a@b.co', '--verified', '--name', 'A B'])).toEqual({
      command: 'create-user',
      flags: { email: 'a@b.co', verified: true, name: 'A B' },
    });
    expect(parseArgs(['seed-demo', '--help'])).toEqual({ command: 'help' });
    expect(parseArgs(['verify-user', '--email', 'a@b.co', '--keep-credentials'])).toEqual({
      command: 'verify-user',
      flags: { email: 'a@b.co', 'keep-credentials': true },
    });
    expect(() => parseArgs(['verify-user', '--email', 'a@b.co', '--keep-credentials=no'])).toThrow(
      '--keep-credentials takes no value',
    );
  });
});

describe('account commands', () => {
  it('create-user --verified: the account signs in over HTTP; its password came from standard input', async () => {
    const email = uniqueEmail('admin-made');
    const made = await run(
      t,
      ['create-user', '--email', email.toUpperCase(), '--name', 'Made By Admin', '--verified'],
      [PASSWORD],
    );
    expect(made).toMatchObject({ code: 0, error: null });
    expect(made.lines).toEqual([
      expect.stringMatching(new RegExp(`^created usr_\\S+ \\(${email.replace(/[.]/g, '\\.')}\\), email verified$`)),
    ]);
    const res = await loginRaw(t, email, PASSWORD);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user).toMatchObject({ email, fullName: 'Made By Admin', emailVerified: expect.any(String) });

    expect(await run(t, ['create-user', '--email', email, '--password', PASSWORD])).toMatchObject({
      code: null,
      error: `An account with the email ${email} already exists`,
    });
    expect((await run(t, ['create-user', '--email', uniqueEmail('weak'), '--password', 'short'])).error).toMatch(
      /password/i,
    );
    expect((await run(t, ['create-user', '--email', 'not-an-address', '--password', PASSWORD])).error).toBe(
      '"not-an-address" is not an email address',
    );
  });

  it('create-user without --verified, then verify-user --keep-credentials: refused with EMAIL_NOT_VERIFIED, then signs in with its password', async () => {
    const email = uniqueEmail('admin-unverified');
    expect((await run(t, ['create-user', '--email', email, '--password', PASSWORD])).code).toBe(0);
    expectError(await loginRaw(t, email, PASSWORD), 403, 'EMAIL_NOT_VERIFIED');
    const verified = await run(t, ['verify-user', '--email', email, '--keep-credentials']);
    expect(verified).toMatchObject({
      code: 0,
      lines: [expect.stringMatching(/^verified usr_\S+ \(.+\), its credentials kept$/)],
    });
    expect((await loginRaw(t, email, PASSWORD)).statusCode).toBe(200);
    expect((await run(t, ['verify-user', '--email', email])).lines).toEqual([
      expect.stringMatching(/was verified already$/),
    ]);
    expect((await run(t, ['verify-user', '--email', uniqueEmail('nobody')])).error).toMatch(
      /^No account with the email /,
    );
  });

  it('disable-user signs the account out everywhere and refuses its sign-in; enable-user lets it in again', async () => {
    const user = await signedInUser(t, 'admin-disabled');
    expect((await getMe(t, user.accessToken)).statusCode).toBe(200);
    const disabled = await run(t, ['disable-user', '--email', user.email]);
    expect(disabled).toMatchObject({
      code: 0,
      lines: [expect.stringMatching(/^disabled usr_\S+ \(.+\): 1 session revoked$/)],
    });
    expect((await getMe(t, user.accessToken)).statusCode).toBe(401);
    // As a wrong password answers: a deactivated account is not told apart.
    expectError(await loginRaw(t, user.email, PASSWORD), 401, 'AUTHENTICATION_ERROR');

    expect((await run(t, ['enable-user', '--email', user.email])).lines).toEqual([
      expect.stringMatching(/^enabled usr_/),
    ]);
    const back = await loginRaw(t, user.email, PASSWORD);
    expect(back.statusCode, back.body).toBe(200);
    expect((await getMe(t, json(back).accessToken as string)).statusCode).toBe(200);
    expect((await run(t, ['enable-user', '--email', user.email])).lines).toEqual([
      expect.stringMatching(/is active already$/),
    ]);
  });
});

// An address registered by someone who never proved it may be a squatter's: an operator verifying it
// makes it the owner's, as a magic link or a reset would. The squatter sets things up on a deployment
// that lets unverified accounts sign in (its own database).
describe('verify-user on an account never verified: the first proof of the address', () => {
  const SQUATTER_PASSWORD = 'Squatters-Secret-7';
  let lax: TestApp;
  beforeAll(async () => {
    lax = await createTestApp({ env: { AUTH_REQUIRE_EMAIL_VERIFICATION: 'false' } });
    apps.push(lax);
  });

  /** Registers `email`, signs in, turns two-factor on, and links a passkey and a social identity (planted rows). */
  async function squat(email: string) {
    const { userId } = await registerUser(lax, email, SQUATTER_PASSWORD);
    const session = json(await loginRaw(lax, email, SQUATTER_PASSWORD));
    expect(session.accessToken, JSON.stringify(session)).toEqual(expect.any(String));
    const auth = bearer(session.accessToken as string);
    const setup = json(
      await lax.request({
        method: 'POST',
        url: '/api/v1/auth/two-factor/setup',
        payload: { password: SQUATTER_PASSWORD },
        headers: auth,
      }),
    );
    const on = await lax.request({
      method: 'POST',
      url: '/api/v1/auth/two-factor/verify',
      payload: { code: totpCode(setup.secret as string, lax.clock.now()) },
      headers: auth,
    });
    expect(on.statusCode, on.body).toBe(200);
    lax.clock.advance(30_000);
    const now = lax.clock.now();
    await lax.deps.db.insert(passkeys).values({
      id: `pk_squat_${userId}`,
      userId,
      credentialId: `cred-${userId}`,
      publicKey: 'pQECAyYgASFYIA',
      name: 'squatter key',
      createdAt: now,
    });
    await lax.deps.db.insert(oauthAccounts).values({
      id: `oa_squat_${userId}`,
      userId,
      provider: 'github',
      providerAccountId: `gh-${userId}`,
      email,
      createdAt: now,
    });
    return {
      userId,
      auth,
      refreshToken: session.refreshToken as string,
      secret: setup.secret as string,
      backupCodes: setup.backupCodes as string[],
    };
  }

  const leftovers = async (userId: string) =>
    rowsOf(
      await lax.deps.db.execute(sql`select
        (select password_hash is not null from users where id = ${userId}) as password,
        (select two_factor_enabled from users where id = ${userId}) as "twoFactorOn",
        (select email_verified_at is not null from users where id = ${userId}) as verified,
        (select count(*)::int from two_factor where user_id = ${userId}) as "twoFactor",
        (select count(*)::int from backup_codes where user_id = ${userId}) as "backupCodes",
        (select count(*)::int from passkeys where user_id = ${userId}) as passkeys,
        (select count(*)::int from oauth_accounts where user_id = ${userId}) as "socialLinks",
        (select count(*)::int from sessions where user_id = ${userId} and revoked_at is null) as sessions`),
    )[0];

  it('drops the password, two-factor, backup codes, passkeys, social links and sessions set up without proof; the owner signs in by a magic link alone', async () => {
    const email = uniqueEmail('admin-squat');
    const squatter = await squat(email);
    expect(await leftovers(squatter.userId)).toEqual({
      password: true,
      twoFactorOn: true,
      verified: false,
      twoFactor: 1,
      backupCodes: 10,
      passkeys: 1,
      socialLinks: 1,
      sessions: 1,
    });

    const verified = await run(lax, ['verify-user', '--email', email]);
    expect(verified).toMatchObject({ code: 0, error: null });
    expect(verified.lines).toEqual([
      expect.stringMatching(
        /^verified usr_\S+ \(.+\): its password, two-factor, passkeys, social links and sessions were dropped/,
      ),
    ]);
    expect(await leftovers(squatter.userId)).toEqual({
      password: false,
      twoFactorOn: false,
      verified: true,
      twoFactor: 0,
      backupCodes: 0,
      passkeys: 0,
      socialLinks: 0,
      sessions: 0,
    });

    // The squatter is out: the session, its refresh token, the password (with a backup code) all refused.
    expectError(await getMe(lax, squatter.auth.authorization.slice('Bearer '.length)), 401, 'AUTHENTICATION_ERROR');
    expectError(
      await lax.request({
        method: 'POST',
        url: '/api/v1/auth/refresh',
        payload: { refreshToken: squatter.refreshToken },
      }),
      401,
      'AUTHENTICATION_ERROR',
    );
    expectError(await loginRaw(lax, email, SQUATTER_PASSWORD), 401, 'AUTHENTICATION_ERROR');
    expectError(
      await lax.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email, password: SQUATTER_PASSWORD, twoFactorCode: squatter.backupCodes[0] },
      }),
      401,
      'AUTHENTICATION_ERROR',
    );
    // The owner of the address signs in by a sign-in link, asked for no second factor.
    const { token } = await requestMagicLink(lax, email);
    const owner = await lax.request({ method: 'POST', url: '/api/v1/auth/magic-link/verify', payload: { token } });
    expect(owner.statusCode, owner.body).toBe(200);
    expect(json(owner).user).toMatchObject({ email, twoFactorEnabled: false, emailVerified: expect.any(String) });
  });

  it('--keep-credentials verifies the address and keeps everything', async () => {
    const email = uniqueEmail('admin-keep');
    const user = await squat(email);
    const verified = await run(lax, ['verify-user', '--email', email, '--keep-credentials']);
    expect(verified).toMatchObject({ code: 0, lines: [expect.stringMatching(/its credentials kept$/)] });
    expect(await leftovers(user.userId)).toEqual({
      password: true,
      twoFactorOn: true,
      verified: true,
      twoFactor: 1,
      backupCodes: 10,
      passkeys: 1,
      socialLinks: 1,
      sessions: 1,
    });
    expect((await getMe(lax, user.auth.authorization.slice('Bearer '.length))).statusCode).toBe(200);
    const login = await lax.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email, password: SQUATTER_PASSWORD, twoFactorCode: totpCode(user.secret, lax.clock.now()) },
    });
    expect(login.statusCode, login.body).toBe(200);
  });

  it('an account verified already keeps everything, with or without --keep-credentials', async () => {
    const user = await signedInUser(lax, 'admin-verified');
    expect((await run(lax, ['verify-user', '--email', user.email])).lines).toEqual([
      expect.stringMatching(/was verified already$/),
    ]);
    expect((await getMe(lax, user.accessToken)).statusCode).toBe(200);
    expect((await loginRaw(lax, user.email, PASSWORD)).statusCode).toBe(200);
  });
});

describe('seed-demo', () => {
  it('makes an account, organization, project, API key and webhook endpoint that work over HTTP', async () => {
    const email = uniqueEmail('demo');
    const seeded = await run(t, ['seed-demo', '--email', email, '--webhook-url', 'http://127.0.0.1:9/demo']);
    expect(seeded.code, seeded.error ?? '').toBe(0);
    const text = seeded.lines.join('\n');
    const password = /password (\S+)/.exec(text)![1]!;
    const orgId = /^organization +(\S+)/m.exec(text)![1]!;
    const projectId = /^project +(\S+)/m.exec(text)![1]!;
    const apiKey = /^API key +(\S+)/m.exec(text)![1]!;
    const webhookSecret = /secret (\S+)$/m.exec(text)![1]!;

    const session = await loginRaw(t, email, password);
    expect(session.statusCode, session.body).toBe(200);
    const auth = bearer(json(session).accessToken as string);
    const projects = await t.request({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/projects`,
      headers: { 'x-api-key': apiKey },
    });
    expect(projects.statusCode, projects.body).toBe(200);
    expect(JSON.stringify(json(projects))).toContain(projectId);
    const hooks = json(
      await t.request({ method: 'GET', url: `/api/v1/organizations/${orgId}/webhooks`, headers: auth }),
    );
    expect(JSON.stringify(hooks)).toContain('http://127.0.0.1:9/demo');
    const [row] = rowsOf(
      await t.deps.db.execute(sql`select secret_enc from webhook_endpoints where organization_id = ${orgId}`),
    );
    expect(decrypt(key(OLD), row!.secret_enc as string)).toBe(webhookSecret);
  });

  it('is refused in production', async () => {
    const production = await createTestApp({
      database: t.database,
      clock: t.clock,
      env: {
        NODE_ENV: 'production',
        ENCRYPTION_KEY: OLD,
        APP_ORIGIN: 'https://app.example.com',
        PUBLIC_API_URL: 'https://api.example.com',
        BILLING_PROVIDER: 'test',
      },
    });
    apps.push(production);
    expect((await run(production, ['seed-demo'])).error).toMatch(/^seed-demo is refused when NODE_ENV=production/);
  });
});

describe('rotate-encryption-key', () => {
  const fx = workerFixtures(() => t);
  afterAll(() => fx.stopAll());

  it('re-encrypts two-factor and webhook secrets with the first key: an instance with only the new key signs in with TOTP and signs deliveries', async () => {
    // Under the old key: an account with two-factor and an endpoint (its secret, and the previous one kept through a grace period).
    const user = await signedInUser(t, 'rotate-2fa');
    const setup = json(
      await t.request({
        method: 'POST',
        url: '/api/v1/auth/two-factor/setup',
        payload: { password: PASSWORD },
        headers: user.auth,
      }),
    );
    const on = await t.request({
      method: 'POST',
      url: '/api/v1/auth/two-factor/verify',
      payload: { code: totpCode(setup.secret as string, t.clock.now()) },
      headers: user.auth,
    });
    expect(on.statusCode, on.body).toBe(200);
    t.clock.advance(30_000);
    const owner = await signedInUser(t, 'rotate-hooks');
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    const rx = await fx.receiver();
    const hook = await createWebhook(t, org.id, owner, { url: rx.url });
    const graced = await createWebhook(t, org.id, owner, { url: rx.url });
    const rotated = await t.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/webhooks/${graced.id}/rotate-secret`,
      headers: owner.auth,
      payload: { graceSeconds: 86_400 },
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const gracedSecret = json(rotated).data.secret as string;

    // With one key listed there is nothing to move to: every value is current, and it says how to rotate.
    const alone = await run(t, ['rotate-encryption-key']);
    expect(alone.code).toBe(0);
    expect(alone.lines).toContain(
      'ENCRYPTION_KEY lists one key: to move to a new key, list it first (ENCRYPTION_KEY=new,old) on every instance, then run this again',
    );
    expect(alone.lines).toContain('two-factor secrets: 0 re-encrypted, 1 already under the first key, 0 unreadable');

    // Every endpoint of the database (earlier tests made some): its secret, and the previous one during a grace.
    const [{ n: endpointValues }] = rowsOf(
      await t.deps.db.execute(
        sql`select (count(secret_enc) + count(previous_secret_enc))::int as n from webhook_endpoints`,
      ),
    ) as [{ n: number }];
    expect(endpointValues).toBeGreaterThanOrEqual(3);

    // The new key first, the old one after it, as the instances run during the rotation.
    const both = await instance(`${NEW},${OLD}`);
    const first = await run(both, ['rotate-encryption-key']);
    expect(first.code).toBe(0);
    expect(first.lines).toContain('two-factor secrets: 1 re-encrypted, 0 already under the first key, 0 unreadable');
    expect(first.lines).toContain(
      `webhook signing secrets: ${endpointValues} re-encrypted, 0 already under the first key, 0 unreadable`,
    );
    // Run again, it finds everything done.
    expect((await run(both, ['rotate-encryption-key'])).lines).toContain(
      `webhook signing secrets: 0 re-encrypted, ${endpointValues} already under the first key, 0 unreadable`,
    );

    // Every stored value opens with the new key alone.
    const stored = rowsOf(
      await t.deps.db.execute(
        sql`select secret_enc as v from two_factor union all select secret_enc from webhook_endpoints union all select previous_secret_enc from webhook_endpoints where previous_secret_enc is not null`,
      ),
    );
    expect(stored).toHaveLength(1 + endpointValues);
    for (const { v } of stored) {
      expect(() => decrypt(key(NEW), v as string)).not.toThrow();
      expect(() => decrypt(key(OLD), v as string)).toThrow(DecryptError);
    }

    // Only the new key now: two-factor sign-in and webhook signatures still work.
    const onlyNew = await instance(NEW);
    const login = await onlyNew.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: {
        email: user.email,
        password: PASSWORD,
        twoFactorCode: totpCode(setup.secret as string, onlyNew.clock.now()),
      },
    });
    expect(login.statusCode, login.body).toBe(200);
    const event = await onlyNew.request({
      method: 'POST',
      url: `/api/v1/organizations/${org.id}/events`,
      headers: owner.auth,
      payload: { type: 'admin.rotated', data: { ok: true } },
    });
    expect(event.statusCode, event.body).toBe(201);
    const worker = workerFixtures(() => onlyNew).worker();
    await worker.start();
    await worker.drain();
    await worker.stop();
    expect(rx.received).toHaveLength(2);
    for (const req of rx.received) {
      const verified = [hook.secret, gracedSecret].some((secret) => {
        try {
          stripeVerify(onlyNew, req, secret);
          return true;
        } catch {
          return false;
        }
      });
      expect(verified, req.headers['x-webhook-signature'] as string).toBe(true);
    }
    // The graced endpoint's delivery carries two signatures (new, then old): both came from decrypted secrets.
    expect(
      rx.received.filter((r) => (r.headers['x-webhook-signature'] as string).split(',v1=').length === 3),
    ).toHaveLength(1);
  });

  it('while the service runs: a secret rotated through the API meanwhile is never overwritten; a value no key opens is reported and exits 1', async () => {
    const owner = await signedInUser(t, 'rotate-live');
    const org = await createOrg(t, owner);
    await setPlan(t, org.id, 'pro');
    const hooks = [];
    for (let i = 0; i < 6; i++)
      hooks.push(await createWebhook(t, org.id, owner, { url: `http://127.0.0.1:9/live-${i}` }));
    const both = await instance(`${NEW},${OLD}`);
    // One row per batch, while the API (the instance with the new key first) rotates secrets of the same endpoints.
    const rotation = rotateEncryptionKey(both.deps, io(), 1);
    const fresh = new Map<string, string>();
    for (const h of hooks.filter((_, i) => i % 2 === 0)) {
      const res = await both.request({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/webhooks/${h.id}/rotate-secret`,
        headers: owner.auth,
      });
      expect(res.statusCode, res.body).toBe(200);
      fresh.set(h.id, json(res).data.secret as string);
    }
    await rotation;
    await rotateEncryptionKey(both.deps, io(), 1);
    for (const h of hooks) {
      const [row] = rowsOf(
        await t.deps.db.execute(
          sql`select secret_enc from webhook_endpoints where organization_id = ${org.id} and id = ${h.id}`,
        ),
      );
      expect(decrypt(key(NEW), row!.secret_enc as string)).toBe(fresh.get(h.id) ?? h.secret);
    }

    // A value under a key nobody lists any more: left as it is, named, exit code 1.
    const lost = encrypt(randomBytes(32), 'whsec_lost');
    await t.deps.db.execute(
      sql`update webhook_endpoints set secret_enc = ${lost} where organization_id = ${org.id} and id = ${hooks[1]!.id}`,
    );
    const out = io();
    expect(await rotateEncryptionKey(both.deps, out, 100)).toBe(1);
    expect(out.lines).toContain(
      `  unreadable with every listed key: webhook_endpoints ${org.id}/${hooks[1]!.id} (secret_enc)`,
    );
    const [row] = rowsOf(
      await t.deps.db.execute(
        sql`select secret_enc from webhook_endpoints where organization_id = ${org.id} and id = ${hooks[1]!.id}`,
      ),
    );
    expect(row!.secret_enc).toBe(lost);
    await t.deps.db.execute(
      sql`update webhook_endpoints set secret_enc = ${encrypt(key(NEW), 'whsec_restored')} where organization_id = ${org.id} and id = ${hooks[1]!.id}`,
    );
  });
});
