// Production's start refusals as an operator meets them, and the payment provider each setting
// gets. The attack this stops: NODE_ENV=production without a Stripe key used to fall back to the
// built-in test checkout, whose unauthenticated `complete` route upgrades any organization for free.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createOrg, signedInUser } from '../test/factories.js';
import { createTestApp, json, type TestApp } from '../test/harness.js';
import { EXIT_TIMEOUT_MS, runToExit } from '../test/fixtures/process.js';

const dirs: string[] = [];
const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps.splice(0)) await a.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Everything production needs except a payment provider and SMTP_URL (the test apps' harness sets its own sink). */
const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_SECRET: 'prod-access-secret-0123456789-abcdefghijklmnop',
  JWT_REFRESH_SECRET: 'prod-refresh-secret-0123456789-abcdefghijklmnop',
  ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  APP_ORIGIN: 'https://app.example.com',
  PUBLIC_API_URL: 'https://api.example.com',
};

/** Runs `src/main.ts` with only this environment (and PATH, HOME) until it exits. */
async function runService(
  env: Record<string, string>,
): Promise<{ code: number | null; output: string; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-prod-'));
  dirs.push(dataDir);
  const { code, output } = await runToExit(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    DATA_DIR: dataDir,
    ...env,
  });
  return { code, output, dataDir };
}

describe('production start', () => {
  it(
    'exits non-zero with one line naming STRIPE_SECRET_KEY when no Stripe key is set and BILLING_PROVIDER=test is not explicit',
    async () => {
      const { code, output, dataDir } = await runService({ ...PRODUCTION, SMTP_URL: 'smtp://127.0.0.1:1' });
      expect(code).toBe(1);
      const lines = output.split('\n').filter((l) => l.trim() !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^Invalid configuration: STRIPE_SECRET_KEY /);
      expect(lines[0]).toContain('BILLING_PROVIDER=test');
      // Refused before anything was opened.
      expect(fs.readdirSync(dataDir)).toEqual([]);
    },
    EXIT_TIMEOUT_MS + 5000,
  );

  it(
    'exits non-zero naming WEBHOOK_ALLOW_PRIVATE_URLS when it is true',
    async () => {
      const { code, output } = await runService({
        ...PRODUCTION,
        SMTP_URL: 'smtp://127.0.0.1:1',
        STRIPE_SECRET_KEY: 'sk_live_example',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      });
      expect(code).toBe(1);
      expect(output.trim()).toMatch(/^Invalid configuration: WEBHOOK_ALLOW_PRIVATE_URLS [^\n]*$/);
    },
    EXIT_TIMEOUT_MS + 5000,
  );
});

describe('the payment provider a configuration gets', () => {
  const COMPLETE = { method: 'POST', url: '/api/v1/billing/test-checkout/:sessionId/complete' } as const;

  async function app(env: Record<string, string>) {
    const t = await createTestApp({ env: { WEBHOOK_WORKER: 'off', ...env } });
    apps.push(t);
    return t;
  }

  it('production with STRIPE_SECRET_KEY: Stripe, and no test checkout route to complete', async () => {
    const prod = await app({ ...PRODUCTION, STRIPE_SECRET_KEY: 'sk_live_example' });
    expect(prod.deps.config.env).toBe('production');
    expect(prod.deps.payments.kind).toBe('stripe');
    expect(prod.app.hasRoute(COMPLETE)).toBe(false);
    const owner = await signedInUser(prod, 'prod-billing');
    const org = await createOrg(prod, owner);
    const res = await prod.request({ method: 'POST', url: '/api/v1/billing/test-checkout/cs_test_anything/complete' });
    expect(res.statusCode).toBe(404);
    const billing = await prod.request({
      method: 'GET',
      url: `/api/v1/organizations/${org.id}/billing`,
      headers: owner.auth,
    });
    expect(billing.statusCode, billing.body).toBe(200);
    expect(json(billing).data.plan.name).toBe('Free');
  });

  it('production with BILLING_PROVIDER=test set explicitly: the built-in test provider (an operator who asked for it)', async () => {
    const t = await app({ ...PRODUCTION, BILLING_PROVIDER: 'test' });
    expect(t.deps.config.env).toBe('production');
    expect(t.deps.payments.kind).toBe('test');
    expect(t.app.hasRoute(COMPLETE)).toBe(true);
  });

  it('outside production: Stripe when its key is set, else the test provider; an explicit BILLING_PROVIDER=test wins over a key', async () => {
    expect((await app({ STRIPE_SECRET_KEY: 'sk_test_example' })).deps.payments.kind).toBe('stripe');
    expect((await app({})).deps.payments.kind).toBe('test');
    expect((await app({ STRIPE_SECRET_KEY: 'sk_test_example', BILLING_PROVIDER: 'test' })).deps.payments.kind).toBe(
      'test',
    );
  });
});
