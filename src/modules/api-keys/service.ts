// Organization API keys (docs/api.md#api-key-format): `{prefix}_{mode}_` + 32 hex characters,
// stored as SHA-256, shown once. Active keys per plan are checked under the organization lock.
import { and, count, desc, eq, getTableColumns, gt, isNull, or, sql } from 'drizzle-orm';
import type { Infra } from '../../infra.js';
import type { Tx } from '../../db/client.js';
import type { OrgAccess } from '../../platform/tenancy.js';
import { authorizationError, conflict, notFound, validationError } from '../../lib/errors.js';
import { pageInfo } from '../../platform/pagination.js';
import { newId } from '../../lib/ids.js';
import { randomHex, sha256 } from '../../lib/secrets.js';
import { keyLastUsedSql, keyRequestsSql } from '../../platform/audit/counters.js';
import { auditChange } from '../../platform/audit/record.js';
import { assertWithinLimit, lockPlanLimits } from '../../platform/plans.js';
import { memberships, organizationRoles } from '../../db/tables/organizations.js';
import { isBuiltInRole, permissionsOfScopes } from '../../platform/permissions.js';
import { recordEvent } from '../../platform/outbox.js';
import { keyEventData as eventData } from '../../platform/member-keys.js';
import { apiKeys, type ApiKeyRow } from '../../db/tables/api-keys.js';
import { transaction } from '../../db/transaction.js';

type KeyWithUse = ApiKeyRow & { lastUsedAt: Date | null };

// Qualified by hand: inside a subquery, drizzle's bare column names would bind to the inner table.
const KEY_ORG = sql.raw('"api_keys"."organization_id"');
const KEY_ID = sql.raw('"api_keys"."id"');
// The key's columns and its last use (its newest audit entry).
const keyColumns = { ...getTableColumns(apiKeys), lastUsedAt: keyLastUsedSql(KEY_ORG, KEY_ID) };

export const present = (k: KeyWithUse) => ({
  id: k.id,
  name: k.name,
  keyPrefix: k.keyPrefix,
  scopes: k.scopes,
  rateLimit: k.rateLimit,
  isActive: k.isActive,
  createdAt: k.createdAt.toISOString(),
  expiresAt: k.expiresAt?.toISOString() ?? null,
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
});

/**
 * The maker's membership, read again inside the creation and held (FOR SHARE) until it commits: a
 * demotion or removal committed since the authorization is seen here (403), and one that comes later
 * waits for this key, then revokes it with the others. Taken after the organization's lock, which a
 * membership change's audit entry does not wait for (FOR KEY SHARE).
 */
async function assertStillMayCreate(deps: Pick<Infra, 'permissions'>, tx: Tx, access: OrgAccess, scopes: string[]) {
  const [mine] = await tx
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.organizationId, access.organizationId), eq(memberships.userId, access.actor.userId)))
    .for('share');
  // A custom role's row is held too: a change to its permissions waits for this key, then sees it.
  const custom =
    mine && !isBuiltInRole(mine.role)
      ? await tx
          .select({ permissions: organizationRoles.permissions })
          .from(organizationRoles)
          .where(and(eq(organizationRoles.organizationId, access.organizationId), eq(organizationRoles.key, mine.role)))
          .for('share')
      : [];
  const granted = mine ? deps.permissions.grants(mine.role, custom[0]?.permissions ?? null) : new Set<string>();
  if (!granted.has('api-keys:create')) {
    throw authorizationError(
      'Missing permission api-keys:create',
      'Your role in this organization changed while the key was being created',
    );
  }
  // A key reaches no further than its maker's role (a custom role may make keys without holding
  // every permission a scope reaches).
  for (const scope of scopes) {
    const beyond = [...permissionsOfScopes([scope])].find((p) => !granted.has(p));
    if (beyond)
      throw authorizationError(
        `You cannot give a key the scope ${scope}`,
        `It reaches ${beyond}, which your own role does not grant`,
      );
  }
}

export interface CreateKeyInput {
  name: string;
  scopes?: string[];
  rateLimit?: number | null;
  expiresAt?: string | null;
}

export async function createApiKey(
  deps: Pick<Infra, 'config' | 'clock' | 'db' | 'permissions'>,
  access: OrgAccess,
  input: CreateKeyInput,
) {
  const now = deps.clock.now();
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
  if (expiresAt && expiresAt <= now) throw validationError('Invalid request body', 'expiresAt: must be in the future');
  if (!input.name.trim()) throw validationError('Invalid request body', 'name: must not be blank');
  const { prefix, mode } = deps.config.apiKey;
  const random = randomHex(16);
  const plainKey = `${prefix}_${mode}_${random}`;
  return transaction(deps.db, async (tx) => {
    const limits = await lockPlanLimits(tx, access.organizationId);
    await assertStillMayCreate(deps, tx, access, input.scopes ?? []);
    const [active] = await tx
      .select({ n: count() })
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.organizationId, access.organizationId),
          eq(apiKeys.isActive, true),
          or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
        ),
      );
    assertWithinLimit(limits.apiKeys, active?.n ?? 0, 'active API keys');
    const [key] = await tx
      .insert(apiKeys)
      .values({
        organizationId: access.organizationId,
        id: newId('key', now.getTime()),
        name: input.name.trim(),
        keyPrefix: `${prefix}_${mode}_${random.slice(0, 8)}`,
        keyHash: sha256(plainKey),
        scopes: input.scopes ?? [],
        rateLimit: input.rateLimit ?? null,
        createdBy: access.actor.userId,
        createdAt: now,
        expiresAt,
      })
      .returning();
    await recordEvent(deps, tx, access.organizationId, 'api_key.created', eventData(key!));
    await auditChange(deps, tx, access);
    return { apiKey: present({ ...key!, lastUsedAt: null }), plainKey };
  });
}

export async function listApiKeys(deps: Pick<Infra, 'db'>, access: OrgAccess, page: number, pageSize: number) {
  const inOrg = eq(apiKeys.organizationId, access.organizationId);
  const rows = await deps.db
    .select(keyColumns)
    .from(apiKeys)
    .where(inOrg)
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .limit(pageSize)
    .offset((page - 1) * pageSize);
  const [totals] = await deps.db.select({ n: count() }).from(apiKeys).where(inOrg);
  const total = totals?.n ?? 0;
  return { data: rows.map(present), ...pageInfo(total, page, pageSize) };
}

/** The organization of a key, for the flat `/api-keys/{keyId}` paths; 404 when there is none. */
export async function organizationOfKey(deps: Pick<Infra, 'db'>, keyId: string): Promise<string> {
  const [row] = await deps.db.select({ org: apiKeys.organizationId }).from(apiKeys).where(eq(apiKeys.id, keyId));
  if (!row) throw notFound('API key not found');
  return row.org;
}

export async function revokeApiKey(deps: Pick<Infra, 'clock' | 'db' | 'apiKeys'>, access: OrgAccess, keyId: string) {
  const now = deps.clock.now();
  const key = await transaction(deps.db, async (tx, afterCommit) => {
    const [k] = await tx
      .update(apiKeys)
      .set({ isActive: false, revokedAt: now })
      .where(and(eq(apiKeys.organizationId, access.organizationId), eq(apiKeys.id, keyId), eq(apiKeys.isActive, true)))
      .returning(keyColumns);
    if (!k) {
      const [exists] = await tx
        .select({ id: apiKeys.id })
        .from(apiKeys)
        .where(and(eq(apiKeys.organizationId, access.organizationId), eq(apiKeys.id, keyId)));
      if (!exists) throw notFound('API key not found');
      throw conflict('API key is already revoked');
    }
    afterCommit(() => deps.apiKeys.revoked(k.id));
    await recordEvent(deps, tx, access.organizationId, 'api_key.revoked', eventData(k));
    await auditChange(deps, tx, access);
    return k;
  });
  return present(key);
}

/** Why a key was revoked along with a change of its maker's membership (the event's `reason`). */
export async function keyUsage(deps: Pick<Infra, 'config' | 'db'>, access: OrgAccess, keyId: string) {
  const [k] = await deps.db
    .select({ ...keyColumns, requests: keyRequestsSql(KEY_ORG, KEY_ID) })
    .from(apiKeys)
    .where(and(eq(apiKeys.organizationId, access.organizationId), eq(apiKeys.id, keyId)));
  if (!k) throw notFound('API key not found');
  return {
    keyId: k.id,
    name: k.name,
    prefix: k.keyPrefix,
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    createdAt: k.createdAt.toISOString(),
    usage: { requests: k.requests, rateLimit: k.rateLimit ?? deps.config.rateLimit.keyDefaultPerMin },
  };
}
