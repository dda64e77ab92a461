// Who may do what, as data (docs/api.md#roles-and-permissions, docs/api.md#api-key-scopes). Roles grant
// permissions; API-key scopes map to permissions through the second table. Nothing else decides access.
//
// The catalogue (createCatalogue) is the built-in permissions plus the product's own (APP_PERMISSIONS).
// The built-in roles grant from it as below (owners and admins every product permission too); a
// custom role of an organization (organization_roles) grants what it lists of it.
import { ConfigError } from '../config.js';
import type { BuiltInRole, Role } from '../db/tables/organizations.js';

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
  'roles:manage',
  'sso:manage',
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
  'roles:manage',
  'sso:manage',
];

export const BUILT_IN_ROLES: readonly BuiltInRole[] = ['owner', 'admin', 'member', 'viewer'];
export const isBuiltInRole = (role: string): role is BuiltInRole =>
  (BUILT_IN_ROLES as readonly string[]).includes(role);

/** The built-in roles as people read them: a name and what the role is for. */
export const BUILT_IN_ROLE_TEXT: Record<BuiltInRole, [name: string, description: string]> = {
  owner: ['Owner', 'Everything, including deleting the organization and transferring it; exactly one'],
  admin: ['Admin', 'Everything but deleting the organization and transferring it'],
  member: ['Member', 'Reads the organization and writes projects'],
  viewer: ['Viewer', 'Reads the organization'],
};

/** A custom role's key: 2-40 lowercase letters, digits and dashes, starting with a letter. */
export const ROLE_KEY_PATTERN = '^[a-z][a-z0-9-]{1,39}$';

/** What only the owner holds: no custom role may grant it. */
export const OWNER_ONLY: readonly Permission[] = ['org:delete', 'org:transfer'];

/** The built-in permissions each built-in role grants (the product's own come on top: createCatalogue). */
export const ROLE_PERMISSIONS: Record<BuiltInRole, ReadonlySet<Permission>> = {
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

/**
 * The permission catalogue of this deployment: the built-in permissions and APP_PERMISSIONS (checked
 * for form in config.ts; one that names a built-in permission stops the start here).
 */
export function createCatalogue(appPermissions: readonly string[]) {
  for (const p of appPermissions) {
    if ((PERMISSIONS as readonly string[]).includes(p))
      throw new ConfigError('APP_PERMISSIONS', `lists "${p}", which is a built-in permission`);
  }
  const keys: ReadonlySet<string> = new Set<string>([...PERMISSIONS, ...appPermissions]);
  const builtIn: Record<BuiltInRole, ReadonlySet<string>> = {
    owner: new Set<string>([...ROLE_PERMISSIONS.owner, ...appPermissions]),
    admin: new Set<string>([...ROLE_PERMISSIONS.admin, ...appPermissions]),
    member: ROLE_PERMISSIONS.member,
    viewer: ROLE_PERMISSIONS.viewer,
  };
  const listed = [
    ...PERMISSIONS.map((key) => ({ key, builtIn: true })),
    ...appPermissions.map((key) => ({ key, builtIn: false })),
  ];
  const none: ReadonlySet<string> = new Set();

  return {
    /** Every permission, the built-in ones first. */
    list: (): ReadonlyArray<{ key: string; builtIn: boolean }> => listed,
    has: (permission: string): boolean => keys.has(permission),
    /**
     * What `role` grants: a built-in role's set, or a custom role's stored list as far as the catalogue
     * still has it (`stored` null: no such role in the organization, nothing).
     */
    grants(role: Role, stored: readonly string[] | null): ReadonlySet<string> {
      if (isBuiltInRole(role)) return builtIn[role];
      if (!stored) return none;
      return new Set(stored.filter((p) => keys.has(p) && !(OWNER_ONLY as readonly string[]).includes(p)));
    },
  };
}

export type PermissionCatalogue = ReturnType<typeof createCatalogue>;
