// Passkeys (WebAuthn credentials) and the challenges of their ceremonies (docs/api.md#passkeys).
import { boolean, bigint, index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './users.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const passkeys = pgTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    // The credential id the authenticator chose, base64url.
    credentialId: text('credential_id').notNull(),
    // The COSE public key, base64url: public, but never answered by the API.
    publicKey: text('public_key').notNull(),
    // The authenticator's signature counter at the last accepted assertion (0: it keeps none).
    counter: bigint('counter', { mode: 'number' }).notNull().default(0),
    transports: text('transports').array().notNull().default([]),
    name: text('name').notNull(),
    backedUp: boolean('backed_up').notNull().default(false),
    createdAt: ts('created_at').notNull(),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [
    uniqueIndex('passkeys_credential_id_key').on(t.credentialId),
    index('passkeys_user_idx').on(t.userId, t.createdAt),
  ],
);

export type PasskeyRow = typeof passkeys.$inferSelect;

/** A challenge handed out by an options route: single use, 5 minutes. */
export const webauthnChallenges = pgTable(
  'webauthn_challenges',
  {
    id: text('id').primaryKey(),
    // Registration: the signed-in user. Authentication: the user named by email, or null (discoverable).
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    challenge: text('challenge').notNull(),
    kind: text('kind').$type<'registration' | 'authentication'>().notNull(),
    // Authentication asked for with an email: only a passkey of userId answers it, and none when
    // userId is null (the address is unknown or deactivated: its options were a decoy).
    byEmail: boolean('by_email').notNull().default(false),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('webauthn_challenges_expires_idx').on(t.expiresAt)],
);
