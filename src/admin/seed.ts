// seed-demo: a demo account (verified), its organization, a project, an API key with every scope and
// a webhook endpoint, made through the services as the routes make them (audit entries and events
// included), and their credentials printed once. Refused in production.
import { randomBytes } from 'node:crypto';
import type { Infra } from '../infra.js';
import { AppError } from '../lib/errors.js';
import { createApiKey } from '../modules/api-keys/service.js';
import { createOrganization } from '../modules/organizations/service.js';
import { createProjectService } from '../modules/projects/service.js';
import { createEndpoint } from '../modules/webhooks/service.js';
import type { UserActor } from '../platform/identity/actor.js';
import { SCOPES } from '../platform/permissions.js';
import type { RequestContext } from '../platform/tenancy.js';
import { createUser, type Io } from './users.js';

export interface DemoCredentials {
  email: string;
  password: string;
  userId: string;
  organizationId: string;
  projectId: string;
  apiKey: string;
  webhookId: string;
  webhookSecret: string;
}

const CONTEXT: RequestContext = {
  method: 'CLI',
  route: 'npm run admin -- seed-demo',
  path: 'seed-demo',
  ipAddress: null,
  userAgent: 'tenantry-admin',
  status: 201,
};

export async function seedDemo(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'shared' | 'passwords' | 'permissions' | 'authorizeOrg'>,
  flags: { email?: string; webhookUrl?: string },
  io: Io,
): Promise<DemoCredentials> {
  if (deps.config.env === 'production') {
    throw new AppError(
      'VALIDATION_ERROR',
      'seed-demo is refused when NODE_ENV=production: it prints a password and an API key',
    );
  }
  const suffix = randomBytes(3).toString('hex');
  const email = flags.email ?? 'demo@example.com';
  const password = `Demo-${randomBytes(9).toString('base64url')}-7a`;
  const user = await createUser(deps, { email, password, name: 'Demo User', verified: true }, io);
  const actor: UserActor = { kind: 'user', userId: user.id, email: user.email, sessionId: 'admin' };
  const org = await createOrganization(deps, actor, { name: 'Demo Organization', slug: `demo-${suffix}` }, CONTEXT);
  const access = await deps.authorizeOrg(actor, org.id, 'api-keys:create', CONTEXT);
  const project = await createProjectService(deps).create(access, {
    name: 'Demo project',
    description: 'Made by npm run admin -- seed-demo',
  });
  const key = await createApiKey(deps, access, { name: 'demo', scopes: [...SCOPES] });
  // Last, so the events above are not delivered to it.
  const endpoint = await createEndpoint(deps, access, {
    url: flags.webhookUrl ?? 'https://example.com/webhooks/tenantry',
    description: 'demo',
  });

  const demo: DemoCredentials = {
    email: user.email,
    password,
    userId: user.id,
    organizationId: org.id,
    projectId: project.id,
    apiKey: key.plainKey,
    webhookId: endpoint.id,
    webhookSecret: endpoint.secret,
  };
  io.out(`user          ${demo.email}  password ${demo.password}  (${demo.userId})`);
  io.out(`organization  ${demo.organizationId} (${org.slug})`);
  io.out(`project       ${demo.projectId}`);
  io.out(`API key       ${demo.apiKey}  (scopes: ${SCOPES.join(', ')})`);
  io.out(`webhook       ${demo.webhookId} → ${endpoint.url}  secret ${demo.webhookSecret}`);
  io.out('These are shown once. Sign in: POST /api/v1/auth/login with the email and password.');
  return demo;
}
