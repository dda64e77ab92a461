// The shared set-up of the configuration tests (config-*.test.ts): fresh DATA_DIRs removed after the
// file, the secrets and production settings, and a check that a ConfigError names its variable.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

export const dirs: string[] = [];
export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-config-'));
  dirs.push(dir);
  return dir;
}

export const SECRETS = {
  JWT_SECRET: 'access-secret-0123456789-abcdefghijklmnopqrstuvwxyz',
  JWT_REFRESH_SECRET: 'refresh-secret-0123456789-abcdefghijklmnopqrstuvwxyz',
  ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
};

/** What production requires besides the secrets (a mail server, its public addresses, a billing provider). */
export const PRODUCTION = {
  SMTP_URL: 'smtp://user:pass@mail.example.com:587',
  APP_ORIGIN: 'https://app.example.com',
  PUBLIC_API_URL: 'https://api.example.com',
  STRIPE_SECRET_KEY: 'sk_live_example',
};

/** A configuration with the secrets given and a fresh DATA_DIR, plus the overrides. */
export const load = (env: Record<string, string | undefined> = {}) => loadConfig({ DATA_DIR: tempDir(), ...SECRETS, ...env });

/** The call throws a ConfigError whose message names the variable. */
export function expectRefused(fn: () => unknown, variable: string) {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected ${variable} to be refused`).toBeInstanceOf(ConfigError);
  expect((caught as Error).message).toContain(variable);
  return (caught as Error).message;
}

/** Removes the file's DATA_DIRs after it: call once at the top of each test file. */
export function useTempDirs() {
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
}
