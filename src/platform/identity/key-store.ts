// API-key authentication (docs/api.md#api-key-authentication): hash the key, look it up, require it active and unexpired.
// Lookups are cached in-process (60 s); revocation goes through the shared revocation list, checked
// on every request, so a revoked key fails on the very next request on every instance.
import { eq, sql } from 'drizzle-orm';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import type { Clock } from '../../lib/clock.js';
import { sha256 } from '../../lib/secrets.js';
import type { SharedState } from '../cache/shared-state.js';
import { apiKeys } from '../../db/tables/api-keys.js';

const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 50_000;

export interface KeyRecord {
  id: string;
  organizationId: string;
  scopes: string[];
  rateLimit: number | null;
  createdBy: string;
  isActive: boolean;
  expiresAt: Date | null;
}

export type KeyCheck = { ok: true; key: KeyRecord } | { ok: false; message: string; key: KeyRecord | null };

export function createKeyStore(db: Db, config: Config, clock: Clock, shared: SharedState) {
  const cache = new Map<string, { key: KeyRecord | null; at: number }>();
  const prefix = `${config.apiKey.prefix}_`;
  const byHash = db
    .select({
      id: apiKeys.id,
      organizationId: apiKeys.organizationId,
      scopes: apiKeys.scopes,
      rateLimit: apiKeys.rateLimit,
      createdBy: apiKeys.createdBy,
      isActive: apiKeys.isActive,
      expiresAt: apiKeys.expiresAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, sql.placeholder('hash')))
    .prepare('api_key_by_hash');

  async function lookup(hash: string): Promise<KeyRecord | null> {
    const hit = cache.get(hash);
    if (hit && Date.now() - hit.at < CACHE_TTL_MS) return hit.key;
    const [row] = await byHash.execute({ hash });
    const key = row ?? null;
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(hash, { key, at: Date.now() });
    return key;
  }

  return {
    /** Whether a Bearer token is an API key rather than a JWT (docs/api.md#api-key-authentication). */
    looksLikeKey: (token: string) => token.startsWith(prefix),

    async check(raw: string): Promise<KeyCheck> {
      const hash = sha256(raw);
      let key = await lookup(hash);
      if (!key) return { ok: false, message: 'Invalid API key', key: null };
      if (key.isActive) {
        const revoked = await shared.isRevoked('api_key', key.id);
        if (revoked !== false) {
          // Revoked elsewhere, or the shared list could not say: ask the database.
          cache.delete(hash);
          const fresh = await lookup(hash);
          // Gone with its organization: as unknown as a key never issued.
          if (!fresh) return { ok: false, message: 'Invalid API key', key: null };
          key = revoked === true ? { ...fresh, isActive: false } : fresh;
        }
      }
      if (!key.isActive) return { ok: false, message: 'API key is inactive', key };
      if (key.expiresAt && key.expiresAt <= clock.now()) return { ok: false, message: 'API key has expired', key };
      return { ok: true, key };
    },

    /** After a key is revoked: drop it from every instance's cache (through the shared list). */
    async revoked(keyId: string): Promise<void> {
      for (const [hash, entry] of cache) if (entry.key?.id === keyId) cache.delete(hash);
      await shared.revoke('api_key', [keyId], (CACHE_TTL_MS / 1000) * 2);
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;
