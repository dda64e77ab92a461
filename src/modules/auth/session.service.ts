// GET /auth/session: the caller's session as it stands now (docs/api.md#the-session-now), read
// from the database on each call: a revoked session, a lost membership or a changed role shows at
// once here, while an access token keeps the claims it was signed with until it expires.
import { and, eq, isNull } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import { sessions } from '../../db/tables/auth.js';
import { memberships, organizationRoles } from '../../db/tables/organizations.js';
import { authenticationError } from '../../lib/errors.js';
import type { UserActor } from '../../platform/identity/actor.js';
import { claimsOf } from '../../platform/roles.js';

export async function sessionNow(deps: Pick<Infra, 'clock' | 'db' | 'permissions'>, actor: UserActor) {
  const [row] = await deps.db
    .select({
      id: sessions.id,
      userId: sessions.userId,
      amr: sessions.amr,
      organizationId: sessions.activeOrganizationId,
      expiresAt: sessions.expiresAt,
      role: memberships.role,
      custom: organizationRoles.permissions,
    })
    .from(sessions)
    .leftJoin(
      memberships,
      and(eq(memberships.organizationId, sessions.activeOrganizationId), eq(memberships.userId, sessions.userId)),
    )
    .leftJoin(
      organizationRoles,
      and(
        eq(organizationRoles.organizationId, memberships.organizationId),
        eq(organizationRoles.key, memberships.role),
      ),
    )
    .where(and(eq(sessions.id, actor.sessionId), eq(sessions.userId, actor.userId), isNull(sessions.revokedAt)));
  // Revoked since the guard let the request in.
  if (!row || row.expiresAt <= deps.clock.now()) throw authenticationError('Session is no longer active');
  const org =
    row.organizationId && row.role
      ? claimsOf(deps.permissions, row.organizationId, {
          role: row.role,
          permissions: deps.permissions.grants(row.role, row.custom),
        })
      : null;
  return {
    userId: row.userId,
    sessionId: row.id,
    organizationId: org?.id ?? null,
    role: org?.role ?? null,
    permissions: org?.permissions ?? [],
    amr: row.amr,
    impersonatorId: null,
    expiresAt: row.expiresAt.toISOString(),
  };
}
