// An API key acts for the person who made it, so it lives only as long as that person may manage
// keys in the organization: removing, demoting or losing the member, or taking api-keys:create from
// their custom role, revokes their keys in the same transaction (docs/security.md). Organizations call this from their membership changes; the
// api-keys feature owns everything else about keys.
import { and, eq, inArray } from 'drizzle-orm';
import { permissionsOfScopes } from './permissions.js';
import type { Tx } from '../db/client.js';
import { apiKeys, type ApiKeyRow } from '../db/tables/api-keys.js';
import type { AfterCommit } from '../db/transaction.js';
import type { Clock } from '../lib/clock.js';
import { auditChange } from './audit/record.js';
import type { KeyStore } from './identity/key-store.js';
import { recordEvent } from './outbox.js';
import type { OrgAccess } from './tenancy.js';

/** The data of every `api_key.*` event. */
export const keyEventData = (k: ApiKeyRow) => ({
  apiKeyId: k.id,
  organizationId: k.organizationId,
  name: k.name,
  keyPrefix: k.keyPrefix,
  scopes: k.scopes,
});

export type CascadeReason = 'member_removed' | 'member_left' | 'member_demoted' | 'role_changed';

// The revocation's own route: its audit entries carry the action a revocation by hand has, so one
// filter finds every revocation.
const REVOKE_ROUTE = '/api/v1/organizations/:orgId/api-keys/:keyId';

/**
 * Inside the transaction that removes `userId` from the organization or changes their role: revokes
 * every live key they made there (with `within`: every key whose scopes reach beyond it), each with an `api_key.revoked` event (with `reason` and
 * `createdBy`) and an audit entry attributed to whoever made the change, under the revocation's
 * action and the key's path; once the transaction commits, every instance refuses the keys.
 * (A change made through an API key is audited by the request pipeline, as all of a key's requests.)
 */
export async function revokeKeysOfCreator(
  deps: { clock: Clock; apiKeys: KeyStore },
  tx: Tx,
  afterCommit: AfterCommit,
  access: OrgAccess,
  userId: string,
  reason: CascadeReason,
  /** Keep the keys whose scopes reach only these permissions (the maker may still make keys, within them). */
  within?: ReadonlySet<string>,
): Promise<void> {
  const now = deps.clock.now();
  const live = and(
    eq(apiKeys.organizationId, access.organizationId),
    eq(apiKeys.createdBy, userId),
    eq(apiKeys.isActive, true),
  );
  let ids: string[] | null = null;
  if (within) {
    const keys = await tx.select({ id: apiKeys.id, scopes: apiKeys.scopes }).from(apiKeys).where(live);
    ids = keys.filter((k) => [...permissionsOfScopes(k.scopes)].some((p) => !within.has(p))).map((k) => k.id);
    if (ids.length === 0) return;
  }
  const revoked = await tx
    .update(apiKeys)
    .set({ isActive: false, revokedAt: now })
    .where(ids ? and(live, inArray(apiKeys.id, ids)) : live)
    .returning();
  revoked.sort((a, b) => a.id.localeCompare(b.id));
  afterCommit(async () => {
    for (const k of revoked) await deps.apiKeys.revoked(k.id);
  });
  for (const k of revoked) {
    await recordEvent(deps, tx, access.organizationId, 'api_key.revoked', {
      ...keyEventData(k),
      reason,
      createdBy: userId,
    });
  }
  for (const k of revoked) {
    const request = {
      ...access.request,
      method: 'DELETE',
      route: REVOKE_ROUTE,
      path: `/api/v1/organizations/${access.organizationId}/api-keys/${k.id}`,
    };
    await auditChange(deps, tx, { ...access, request });
  }
}
