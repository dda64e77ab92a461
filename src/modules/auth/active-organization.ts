// The organization a session acts in (docs/api.md#active-organization): made active by a sign-in or
// a refresh that names it, kept by a refresh that does not, cleared by `null` or by the membership's
// end. The tokens carry it as org_id, org_role and org_permissions, read when they are signed.
import type { Infra } from '../../infra.js';
import { authorizationError } from '../../lib/errors.js';
import { claimsOf, memberRole } from '../../platform/roles.js';

/** 403 for an organization the account is not a member of (none is made active). */
export const notAMember = () =>
  authorizationError(
    'You are not a member of this organization',
    'organizationId: names an organization this account does not belong to',
  );

/** The token claims of `userId`'s role in `organizationId`; null when it is not a member. */
export async function organizationClaims(
  deps: Pick<Infra, 'db' | 'permissions'>,
  organizationId: string,
  userId: string,
) {
  const m = await memberRole(deps.db, deps.permissions, organizationId, userId);
  return m && claimsOf(deps.permissions, organizationId, m);
}
