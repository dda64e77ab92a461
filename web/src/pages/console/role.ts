// The caller's role in the organization the console shows, and what it lets the pages offer. The
// API decides; the pages only hide what it would refuse.
/** A built-in role, or the key of one of the organization's custom roles. */
export type Role = 'owner' | 'admin' | 'member' | 'viewer' | (string & {});
export const canManage = (role: Role | undefined) => role === 'owner' || role === 'admin';
