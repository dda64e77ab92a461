// The caller's role in the organization the console shows, and what it lets the pages offer. The
// API decides; the pages only hide what it would refuse. What a role grants is read from the
// organization's roles (built-in and custom alike), so a custom role's holder sees the controls its
// permissions allow (docs/api.md#custom-roles).
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';

/** A built-in role, or the key of one of the organization's custom roles. */
export type Role = 'owner' | 'admin' | 'member' | 'viewer' | (string & {});

export const orgRoles = (orgId: string) =>
  api.GET('/api/v1/organizations/{orgId}/roles', { params: { path: { orgId } } });

/** Whether the caller's role here grants a permission (false until the roles are read, or when they cannot be). */
export function usePermissions(orgId: string, role: Role | undefined): (permission: string) => boolean {
  const roles = useLoad(`roles:${orgId}`, () => orgRoles(orgId));
  const mine = new Set(roles.data?.roles.find((r) => r.key === role)?.permissions ?? []);
  return (permission) => mine.has(permission);
}
