// The route table: every operation under /api/v1, as data (http/route.ts). Each feature declares its
// routes with their guard, contract and handler; this list is all of them, in the order the OpenAPI
// document shows them. http/mount.ts registers it; the security tests are generated from it.
import type { Infra } from './infra.js';
import type { Route } from './http/route.js';
// The features are imported in the order of their names, which is the order their named schemas
// register in (the document's components); the table lists them in the order the document shows.
import { apiKeyRoutes } from './modules/api-keys/routes.js';
import { auditRoutes } from './modules/audit/routes.js';
import { authRoutes } from './modules/auth/routes.js';
import { sessionRoutes } from './modules/auth/session.routes.js';
import { authSignInPort } from './modules/auth/sign-in-port.js';
import { billingRoutes } from './modules/billing/routes.js';
import { inviteeRoutes } from './modules/organizations/invitee.routes.js';
import { organizationRoutes } from './modules/organizations/routes.js';
import { passkeyRoutes } from './modules/passkeys/routes.js';
import { projectRoutes } from './modules/projects/routes.js';
import { roleRoutes } from './modules/roles/routes.js';
import { tokenRoutes } from './modules/tokens/routes.js';
import { userRoutes } from './modules/users/routes.js';
import { webhookRoutes } from './modules/webhooks/routes.js';

export function routes(deps: Infra): Route[] {
  return [
    ...authRoutes(deps),
    ...sessionRoutes(deps),
    ...tokenRoutes(deps),
    ...userRoutes(deps),
    // Passkey sign-in ends through auth's sign-in sequence, handed over as a port: features never
    // import one another (platform/identity/sign-in-port.ts).
    ...passkeyRoutes(deps, authSignInPort(deps)),
    ...organizationRoutes(deps),
    ...inviteeRoutes(deps),
    ...roleRoutes(deps),
    ...projectRoutes(deps),
    ...apiKeyRoutes(deps),
    ...auditRoutes(deps),
    ...webhookRoutes(deps),
    ...billingRoutes(deps),
  ];
}
