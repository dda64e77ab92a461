// The OpenAPI document exactly as the app serves it at /docs/json, built in-process: the real app on
// an in-memory database, every sign-in method and both social providers configured, Stripe as the
// payment provider (the shape of a production deployment). No network, no listening socket.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openPglite } from '../src/db/client.js';
import { createInfra } from '../src/infra.js';

/** The environment the published document describes (docs/decisions.md#the-published-document). */
export const DOCUMENT_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'openapi-document-access-secret-0123456789',
  JWT_REFRESH_SECRET: 'openapi-document-refresh-secret-0123456789',
  ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  APP_ORIGIN: 'http://localhost:3000',
  PUBLIC_API_URL: 'http://localhost:3000',
  GOOGLE_CLIENT_ID: 'openapi-document',
  GOOGLE_CLIENT_SECRET: 'openapi-document',
  GITHUB_CLIENT_ID: 'openapi-document',
  GITHUB_CLIENT_SECRET: 'openapi-document',
  BILLING_PROVIDER: 'stripe',
  STRIPE_SECRET_KEY: 'sk_test_openapi_document',
  STRIPE_WEBHOOK_SECRET: 'whsec_openapi_document',
};

/** The OpenAPI document of the app built with DOCUMENT_ENV. */
export async function buildDocument(): Promise<Record<string, unknown>> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantry-openapi-'));
  const config = loadConfig({ ...DOCUMENT_ENV, DATA_DIR: dataDir });
  const dbHandle = await openPglite({});
  const deps = await createInfra(config, { logger: pino({ level: 'silent' }), dbHandle, migrate: false });
  try {
    const app = await buildApp(deps);
    await app.ready();
    const doc = app.swagger() as unknown as Record<string, unknown>;
    await app.close();
    return JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
  } finally {
    await deps.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
