// `npm run migrate` as an operator runs it: on a fresh embedded database it names every migration
// of drizzle/ as it applies them; run again, it says there was nothing to apply.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationNames } from '../../src/db/migrate.js';
import { ROOT } from '../platform/process-helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-migrate-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

function migrate(script: string) {
  const run = spawnSync('npm', ['run', '--silent', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), DATA_DIR: dataDir },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

describe('npm run migrate', () => {
  it('names each migration it applies, then says when none is left to apply', { timeout: 240_000 }, () => {
    const names = migrationNames().map((m) => m.tag);
    expect(names.length).toBeGreaterThan(10);

    const first = migrate('migrate');
    expect(first.code, first.out).toBe(0);
    const applied = first.out
      .split('\n')
      .filter((l) => l.startsWith('applied '))
      .map((l) => l.slice('applied '.length));
    expect(applied).toEqual(names);
    expect(first.out).toContain(`${names.length} migrations applied to the embedded database in ${dataDir}.`);

    // The alias kept for the old name.
    const again = migrate('db:migrate');
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain(`No migration to apply: the embedded database in ${dataDir} is up to date.`);
    expect(again.out).not.toContain('applied ');
  });
});
