// Builds one migrated database template per run: a PGlite dump that each test file loads, and, when
// TEST_DATABASE_URL is set, a PostgreSQL template database that each file clones (CREATE DATABASE
// … TEMPLATE). Files then run in parallel, each on its own database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { openPglite, openPostgres } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    pgTemplate: string | null;
  }
}

export function adminUrl(url: string, database = 'postgres'): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

interface Templates {
  file: string;
  template: string | null;
  teardown(): Promise<void>;
}

// Each vitest project calls this setup (vitest.config.ts has two, and the root counts as one): the
// templates are built on the first call and handed to every project from there.
const shared = globalThis as { tenantryTestTemplates?: Promise<Templates> };

export default async function setup(project: TestProject) {
  const first = !shared.tenantryTestTemplates;
  shared.tenantryTestTemplates ??= buildTemplates();
  const { file, template, teardown } = await shared.tenantryTestTemplates;
  project.provide('pgliteTemplate', file);
  project.provide('pgTemplate', template);
  return first ? teardown : undefined;
}

async function buildTemplates(): Promise<Templates> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-test-'));
  const handle = await openPglite({});
  await runMigrations(handle);
  const dump = await handle.pglite!.dumpDataDir('none');
  await handle.close();
  const file = path.join(dir, 'template.tar');
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));

  const url = process.env.TEST_DATABASE_URL;
  let template: string | null = null;
  if (url) {
    template = `tenantry_tpl_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl(url) });
    await admin.connect();
    await admin.query(`create database ${template}`);
    await admin.end();
    const tpl = openPostgres(adminUrl(url, template), pino({ level: 'silent' }), 1);
    await runMigrations(tpl);
    await tpl.close();
  }

  const teardown = async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    if (url && template) {
      const admin = new pg.Client({ connectionString: adminUrl(url) });
      await admin.connect();
      const { rows } = await admin.query<{ datname: string }>(`select datname from pg_database where datname like $1`, [
        `tenantry_t%${template.slice('tenantry_tpl_'.length)}%`,
      ]);
      for (const r of rows) await admin.query(`drop database if exists ${r.datname} with (force)`);
      await admin.end();
    }
  };
  return { file, template, teardown };
}
