// GET /users/me/export (docs/api.md#account-export): the person's data, read in one transaction so the
// document is one consistent picture. Columns are picked one by one: a secret column added to a table
// later is not exported by accident.
import { asc, desc, eq, and } from 'drizzle-orm';
import { oauthAccounts, sessions } from '../../db/tables/auth.js';
import { auditLogs } from '../../db/tables/audit.js';
import { memberships, organizations } from '../../db/tables/organizations.js';
import { passkeys } from '../../db/tables/passkeys.js';
import type { Infra } from '../../infra.js';
import type { UserActor } from '../../platform/identity/actor.js';
import { getMe } from './service.js';

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => d?.toISOString() ?? null;

export async function exportAccount(deps: Pick<Infra, 'clock' | 'db' | 'userCache'>, actor: UserActor) {
  const profile = await getMe(deps, actor);
  const userId = actor.userId;
  return deps.db.transaction(async (tx) => {
    const sessionRows = await tx
      .select({
        id: sessions.id,
        userAgent: sessions.userAgent,
        ipAddress: sessions.ipAddress,
        createdAt: sessions.createdAt,
        lastUsedAt: sessions.lastUsedAt,
        expiresAt: sessions.expiresAt,
        revokedAt: sessions.revokedAt,
        revokedReason: sessions.revokedReason,
      })
      .from(sessions)
      .where(eq(sessions.userId, userId))
      .orderBy(asc(sessions.createdAt), asc(sessions.id));
    const membershipRows = await tx
      .select({ m: memberships, name: organizations.name, slug: organizations.slug })
      .from(memberships)
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(eq(memberships.userId, userId))
      .orderBy(asc(memberships.joinedAt), asc(memberships.id));
    const links = await tx
      .select({
        provider: oauthAccounts.provider,
        providerAccountId: oauthAccounts.providerAccountId,
        email: oauthAccounts.email,
        createdAt: oauthAccounts.createdAt,
      })
      .from(oauthAccounts)
      .where(eq(oauthAccounts.userId, userId))
      .orderBy(asc(oauthAccounts.createdAt));
    const keys = await tx
      .select({
        id: passkeys.id,
        name: passkeys.name,
        transports: passkeys.transports,
        backedUp: passkeys.backedUp,
        createdAt: passkeys.createdAt,
        lastUsedAt: passkeys.lastUsedAt,
      })
      .from(passkeys)
      .where(eq(passkeys.userId, userId))
      .orderBy(asc(passkeys.createdAt), asc(passkeys.id));
    const entries = await tx
      .select({
        id: auditLogs.id,
        organizationId: auditLogs.organizationId,
        action: auditLogs.action,
        method: auditLogs.method,
        path: auditLogs.path,
        statusCode: auditLogs.statusCode,
        ipAddress: auditLogs.ipAddress,
        userAgent: auditLogs.userAgent,
        createdAt: auditLogs.createdAt,
      })
      .from(auditLogs)
      .where(and(eq(auditLogs.actorType, 'user'), eq(auditLogs.actorId, userId)))
      .orderBy(desc(auditLogs.createdAt), desc(auditLogs.id));
    return {
      exportedAt: iso(deps.clock.now()),
      profile,
      sessions: sessionRows.map((s) => ({
        ...s,
        createdAt: iso(s.createdAt),
        lastUsedAt: iso(s.lastUsedAt),
        expiresAt: iso(s.expiresAt),
        revokedAt: isoOrNull(s.revokedAt),
      })),
      memberships: membershipRows.map((r) => ({
        organizationId: r.m.organizationId,
        organizationName: r.name,
        organizationSlug: r.slug,
        memberId: r.m.id,
        role: r.m.role,
        joinedAt: iso(r.m.joinedAt),
      })),
      socialLinks: links.map((l) => ({ ...l, createdAt: iso(l.createdAt) })),
      passkeys: keys.map((k) => ({ ...k, createdAt: iso(k.createdAt), lastUsedAt: isoOrNull(k.lastUsedAt) })),
      auditEntries: entries.map((e) => ({ ...e, createdAt: iso(e.createdAt) })),
    };
  });
}
