// The route table: every operation under /api/v1, as data (http/route.ts). Each feature declares its
// routes with their guard, contract and handler; this list is all of them, in the order the OpenAPI
// document shows them. http/mount.ts registers it; the security tests are generated from it.
import type { Infra } from './infra.js';
import type { Route } from './http/route.js';
import { projectRoutes } from './modules/projects/routes.js';
import { tokenRoutes } from './modules/tokens/routes.js';
import { sessionRoutes } from './modules/auth/session.routes.js';
import { roleRoutes } from './modules/roles/routes.js';

export function routes(deps: Infra): Route[] {
  return [...sessionRoutes(deps), ...tokenRoutes(deps), ...roleRoutes(deps), ...projectRoutes(deps)];
}
