// The caller's role in the organization the console shows, and what it lets the pages offer. The
// API decides; the pages only hide what it would refuse. What a role grants is read from the
// organization's roles (built-in and custom alike), so a custom role's holder sees the controls its
// permissions allow (docs/api.md#custom-roles).
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';

/** A built-in role, or the key of one of the organization's custom roles. */
export type Role = 'owner' | 'admin' | 'member' | 'viewer' | (string & {});

const orgRoles = (orgId: string) => api.GET('/api/v1/organizations/{orgId}/roles', { params: { path: { orgId } } });

/**
 * The organization's roles (read once per page) and the permissions of the caller's `role` among
 * them: empty until the roles are read, or when they cannot be.
 */
export function useOrgRoles(orgId: string, role: Role | undefined) {
  const roles = useLoad(`roles:${orgId}`, () => orgRoles(orgId));
  const all = roles.data?.roles ?? [];
  const mine: ReadonlySet<string> = new Set(all.find((r) => r.key === role)?.permissions ?? []);
  return { roles, all, mine, may: (permission: string) => mine.has(permission) };
}

/** Whether the caller's role here grants a permission (false until the roles are read, or when they cannot be). */
export function usePermissions(orgId: string, role: Role | undefined): (permission: string) => boolean {
  return useOrgRoles(orgId, role).may;
}
