// The service process in production refuses to start without its secrets, naming the variable at
// fault, before it opens anything.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { start, START_TIMEOUT_MS, tempDir, useProcesses, withTimeout } from './process-helpers.js';

useProcesses();

describe('production without secrets', () => {
  it(
    'exits non-zero naming JWT_SECRET, before opening anything',
    async () => {
      const dataDir = tempDir();
      const p = await start({ NODE_ENV: 'production', DATA_DIR: dataDir });
      const { code } = await withTimeout(p.exited, START_TIMEOUT_MS, 'the process to exit');
      expect(code).not.toBe(0);
      expect(code).not.toBeNull();
      expect(p.output()).toContain('JWT_SECRET');
      expect(p.output()).not.toMatch(/^\s+at /m);
      expect(fs.readdirSync(dataDir)).toEqual([]);
    },
    START_TIMEOUT_MS + 5000,
  );

  it(
    'exits non-zero naming a weak ENCRYPTION_KEY',
    async () => {
      const p = await start({
        NODE_ENV: 'production',
        DATA_DIR: tempDir(),
        JWT_SECRET: 'prod-access-secret-0123456789-abcdefghijklmnop',
        JWT_REFRESH_SECRET: 'prod-refresh-secret-0123456789-abcdefghijklmnop',
        ENCRYPTION_KEY: 'too-short',
      });
      const { code } = await withTimeout(p.exited, START_TIMEOUT_MS, 'the process to exit');
      expect(code).not.toBe(0);
      expect(p.output()).toContain('ENCRYPTION_KEY');
      expect(p.output()).not.toContain('too-short');
    },
    START_TIMEOUT_MS + 5000,
  );
});
