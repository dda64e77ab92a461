// Who may do what, as data (docs/api.md#roles-and-permissions, docs/api.md#api-key-scopes). Roles grant permissions; API-key scopes map to
// permissions through the second table. Nothing else decides access.
import type { Role } from '../db/tables/organizations.js';

export const PERMISSIONS = [
  'org:read',
  'org:update',
  'org:delete',
  'org:transfer',
  'members:read',
  'members:update',
  'members:remove',
  'invitations:create',
  'invitations:manage',
  'projects:read',
  'projects:write',
  'api-keys:create',
  'api-keys:manage',
  'webhooks:read',
  'webhooks:manage',
  'events:publish',
  'billing:read',
  'billing:manage',
  'audit-logs:read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

const READ: Permission[] = ['org:read', 'members:read', 'projects:read', 'billing:read', 'webhooks:read'];
const ADMIN: Permission[] = [
  ...READ,
  'projects:write',
  'org:update',
  'members:update',
  'members:remove',
  'invitations:create',
  'invitations:manage',
  'api-keys:create',
  'api-keys:manage',
  'webhooks:manage',
  'events:publish',
  'billing:manage',
  'audit-logs:read',
];

export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set<Permission>([...ADMIN, 'org:delete', 'org:transfer']),
  admin: new Set<Permission>(ADMIN),
  member: new Set<Permission>([...READ, 'projects:write']),
  viewer: new Set<Permission>(READ),
};

/**
 * API-key scopes (docs/api.md#api-key-scopes) and what they reach. Keys never get org:update, org:delete,
 * org:transfer, api-keys:*, or billing:manage, whatever their scopes.
 */
export const SCOPE_PERMISSIONS = {
  'read:projects': ['projects:read'],
  'write:projects': ['projects:read', 'projects:write'],
  'read:members': ['members:read'],
  'write:members': ['members:read', 'members:update', 'members:remove', 'invitations:create', 'invitations:manage'],
  'read:webhooks': ['webhooks:read'],
  'write:webhooks': ['webhooks:read', 'webhooks:manage'],
  'write:events': ['events:publish'],
  'read:billing': ['billing:read'],
  'read:audit-logs': ['audit-logs:read'],
} as const satisfies Record<string, readonly Permission[]>;

export type Scope = keyof typeof SCOPE_PERMISSIONS;
export const SCOPES = Object.keys(SCOPE_PERMISSIONS) as Scope[];

export function permissionsOfScopes(scopes: readonly string[]): ReadonlySet<Permission> {
  const out = new Set<Permission>();
  for (const s of scopes) for (const p of SCOPE_PERMISSIONS[s as Scope] ?? []) out.add(p);
  return out;
}
