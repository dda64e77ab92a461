// The OpenAPI document of a switched configuration (docs/api.md#sign-in-method-switches): a sign-in
// method switched off, or social sign-in without a provider, takes its routes out of the document,
// and with them every named schema only they used. No component may be left that nothing refers to
// (the linter's no-unused-components; a client would get types of routes that do not exist).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type TestApp } from '../../../test/harness.js';
import { googleEnv } from '../../../test/oauth-server.js';

// Google configured, its endpoints on a dead port: nothing here reaches them.
const GOOGLE = googleEnv('http://127.0.0.1:9');
const SCHEMA_REF = '#/components/schemas/';

let base: TestApp;
beforeAll(async () => {
  base = await createTestApp({ env: GOOGLE });
});
afterAll(async () => {
  await base?.close();
});

interface Doc {
  paths: Record<string, unknown>;
  components: { schemas: Record<string, unknown> } & Record<string, unknown>;
}

async function documentOf(app: TestApp): Promise<Doc> {
  const res = await app.request({ method: 'GET', url: '/docs/json' });
  expect(res.statusCode).toBe(200);
  return json(res) as Doc;
}

/** The named schemas the document refers to, from its operations and shared parts, transitively. */
function referenced(doc: Doc): Set<string> {
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) {
        const name = value.slice(SCHEMA_REF.length);
        if (!used.has(name)) {
          used.add(name);
          visit(doc.components.schemas[name]);
        }
      } else visit(value);
    }
  };
  visit({ ...doc, components: { ...doc.components, schemas: {} } });
  return used;
}

/** The document of an instance on the base app's database with `env` (GOOGLE unless told otherwise). */
async function documentWith(env: Record<string, string>, google = true): Promise<Doc> {
  const app = await createTestApp({
    env: google ? { ...GOOGLE, ...env } : env,
    database: base.database,
    clock: base.clock,
  });
  try {
    return await documentOf(app);
  } finally {
    await app.close();
  }
}

function expectEveryComponentUsed(doc: Doc) {
  const used = referenced(doc);
  const unused = Object.keys(doc.components.schemas).filter((name) => !used.has(name));
  expect(unused, 'named schemas nothing refers to').toEqual([]);
  // Nothing referred to is missing either.
  for (const name of used) expect(doc.components.schemas, name).toHaveProperty(name);
}

describe('the document names only the schemas its routes use', () => {
  it('everything on: the social sign-in exchange and every sign-in request are documented', async () => {
    const doc = await documentOf(base);
    expect(doc.paths).toHaveProperty(['/api/v1/auth/oauth/exchange']);
    for (const name of [
      'SocialSignInExchangeRequest',
      'LoginRequest',
      'TwoFactorLoginRequest',
      'MagicLinkVerifyRequest',
    ])
      expect(doc.components.schemas).toHaveProperty(name);
    expectEveryComponentUsed(doc);
  });

  it('no social provider configured: no social sign-in route, and no SocialSignInExchangeRequest', async () => {
    const doc = await documentWith({}, false);
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/auth/oauth'))).toEqual([]);
    expect(doc.components.schemas).not.toHaveProperty('SocialSignInExchangeRequest');
    expectEveryComponentUsed(doc);
  });

  it('AUTH_PASSWORD_ENABLED=false: the password requests go; the sign-in answer other methods give stays', async () => {
    const doc = await documentWith({ AUTH_PASSWORD_ENABLED: 'false' });
    for (const name of [
      'RegisterRequest',
      'RegisterResponse',
      'LoginRequest',
      'PasswordResetRequest',
      'ChangePasswordRequest',
    ])
      expect(doc.components.schemas).not.toHaveProperty(name);
    expect(doc.components.schemas).toHaveProperty('LoginResponse');
    expectEveryComponentUsed(doc);
  });

  it.each(['AUTH_TWO_FACTOR_ENABLED', 'AUTH_MAGIC_LINK_ENABLED', 'AUTH_SESSION_MANAGEMENT_ENABLED'])(
    '%s=false',
    async (name) => {
      expectEveryComponentUsed(await documentWith({ [name]: 'false' }));
    },
  );

  it('every switch off at once, and no provider', async () => {
    const doc = await documentWith(
      {
        AUTH_PASSWORD_ENABLED: 'false',
        AUTH_TWO_FACTOR_ENABLED: 'false',
        AUTH_MAGIC_LINK_ENABLED: 'false',
        AUTH_SESSION_MANAGEMENT_ENABLED: 'false',
      },
      false,
    );
    expect(doc.components.schemas).not.toHaveProperty('TwoFactorLoginRequest');
    expectEveryComponentUsed(doc);
  });
});
