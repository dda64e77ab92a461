import { index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from '../users/tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    // SHA-256 of the current refresh token's id; only the current one is valid (rotation).
    refreshTokenHash: text('refresh_token_hash').notNull(),
    // The token it replaced and when, for the reuse grace of DECISIONS §2.
    previousTokenHash: text('previous_token_hash'),
    rotatedAt: ts('rotated_at'),
    userAgent: text('user_agent'),
    ipAddress: text('ip_address'),
    lastUsedAt: ts('last_used_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull(),
    revokedAt: ts('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [
    uniqueIndex('sessions_refresh_token_hash_key').on(t.refreshTokenHash),
    index('sessions_user_active_idx').on(t.userId, t.lastUsedAt),
  ],
);

export type SessionRow = typeof sessions.$inferSelect;

export type EmailTokenPurpose = 'verify_email' | 'reset_password' | 'magic_link';

/** Single-use tokens sent by mail; only their SHA-256 is stored. */
export const emailTokens = pgTable(
  'email_tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose').$type<EmailTokenPurpose>().notNull(),
    tokenHash: text('token_hash').notNull(),
    // The address the token was sent to: a verification proves this address, not a later one.
    email: text('email').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('email_tokens_token_hash_key').on(t.tokenHash), index('email_tokens_user_idx').on(t.userId, t.purpose)],
);
