import { boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { organizations } from './organizations.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const apiKeys = pgTable(
  'api_keys',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    name: text('name').notNull(),
    keyPrefix: text('key_prefix').notNull(),
    // SHA-256 hex of the full key: the key itself is never stored (docs/api.md#api-key-format).
    keyHash: text('key_hash').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    rateLimit: integer('rate_limit'),
    isActive: boolean('is_active').notNull().default(true),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    // A key's last use and request count are read from its audit entries (audit/counters.ts): no
    // write to this row per request.
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex('api_keys_key_hash_key').on(t.keyHash),
    index('api_keys_org_created_idx').on(t.organizationId, t.createdAt),
  ],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
