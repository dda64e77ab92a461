import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { organizations } from './organizations.js';
import { users } from './users.js';

/** How a session signed in (the `amr` claim): its first factor, then `otp` when a second one was used. */
export type AuthMethod = 'pwd' | 'otp' | 'webauthn' | 'magic_link' | 'oauth' | 'sso';

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
    // The token it replaced and when, for the reuse grace of docs/api.md#tokens-and-refresh.
    previousTokenHash: text('previous_token_hash'),
    rotatedAt: ts('rotated_at'),
    userAgent: text('user_agent'),
    ipAddress: text('ip_address'),
    lastUsedAt: ts('last_used_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull(),
    // When the session last proved its person: its sign-in, or a later POST /auth/reauthenticate.
    // A refresh never moves it, so a stolen refresh token cannot make a session look freshly proven
    // (docs/api.md#re-authentication).
    authenticatedAt: ts('authenticated_at').notNull(),
    revokedAt: ts('revoked_at'),
    revokedReason: text('revoked_reason'),
    // How the session signed in; sessions started before it was recorded have none.
    amr: text('amr')
      .array()
      .$type<AuthMethod[]>()
      .notNull()
      .default(sql`'{}'::text[]`),
    // The organization the session acts in (the tokens' org_* claims); a membership lost clears it
    // at the next refresh, a deleted organization at once.
    activeOrganizationId: text('active_organization_id').references(() => organizations.id, { onDelete: 'set null' }),
  },
  (t) => [
    uniqueIndex('sessions_refresh_token_hash_key').on(t.refreshTokenHash),
    index('sessions_user_active_idx').on(t.userId, t.lastUsedAt),
    // A deleted organization clears the sessions acting in it (the foreign key's set null).
    index('sessions_active_organization_idx')
      .on(t.activeOrganizationId)
      .where(sql`active_organization_id is not null`),
  ],
);

export type SessionRow = typeof sessions.$inferSelect;

// two_factor_login is not mailed: it carries a social sign-in across its two-factor step. change_email
// is mailed to the new address of an email change (its `email`), bound to the address it replaces.
export type EmailTokenPurpose = 'verify_email' | 'reset_password' | 'magic_link' | 'two_factor_login' | 'change_email';

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
    // verify_email: a fingerprint of the password of the registration that asked for the token; the
    // token verifies nothing once that password changed (someone else may own the account now).
    // two_factor_login: the sign-in method of the first factor (an `amr` value), for the session.
    binding: text('binding'),
    // Two-factor codes checked against this token (magic link, two-factor ticket): reserved before
    // each check; the 5th spends the token.
    attempts: integer('attempts').notNull().default(0),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('email_tokens_token_hash_key').on(t.tokenHash),
    index('email_tokens_user_idx').on(t.userId, t.purpose),
  ],
);

/** TOTP state of a user (docs/api.md#two-factor-authentication). Secrets are AES-256-GCM ciphertexts, never plaintext. */
export const twoFactor = pgTable('two_factor', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  // The secret in force once two-factor is enabled.
  secretEnc: text('secret_enc'),
  // A secret from a setup not yet confirmed by a code; replaces secretEnc when verified.
  pendingSecretEnc: text('pending_secret_enc'),
  // The last accepted TOTP time step: a code is never accepted twice (no replay in its window).
  lastUsedStep: bigint('last_used_step', { mode: 'number' }),
  updatedAt: ts('updated_at').notNull(),
});

export const backupCodes = pgTable(
  'backup_codes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: ts('used_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('backup_codes_user_code_key').on(t.userId, t.codeHash)],
);

/** A social identity linked to an account. */
export const oauthAccounts = pgTable(
  'oauth_accounts',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    providerAccountId: text('provider_account_id').notNull(),
    email: text('email'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('oauth_accounts_provider_account_key').on(t.provider, t.providerAccountId),
    index('oauth_accounts_user_idx').on(t.userId),
  ],
);

/** Authorization requests in flight: state (hashed) → PKCE verifier; single use, 10 minutes. */
export const oauthStates = pgTable('oauth_states', {
  stateHash: text('state_hash').primaryKey(),
  provider: text('provider').notNull(),
  codeVerifier: text('code_verifier').notNull(),
  // The web app's page the callback hands the sign-in back to (checked to be on APP_ORIGIN); null
  // when the callback answers JSON (docs/api.md#social-sign-in).
  redirectTo: text('redirect_to'),
  // The web app's codeChallenge (base64url SHA-256 of its verifier), passed on to the hand-off code.
  handoffChallenge: text('handoff_challenge'),
  expiresAt: ts('expires_at').notNull(),
  createdAt: ts('created_at').notNull(),
});

/**
 * One-time codes of the social sign-in hand-off: the callback redirects to the web app with a code,
 * which POST /auth/oauth/exchange turns into the sign-in's answer. Only the SHA-256 is stored; single
 * use, 60 seconds.
 */
export const oauthHandoffs = pgTable('oauth_handoffs', {
  codeHash: text('code_hash').primaryKey(),
  userId: text('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  // Set when the flow was started with a codeChallenge: the exchange must bring its verifier.
  challenge: text('challenge'),
  expiresAt: ts('expires_at').notNull(),
  createdAt: ts('created_at').notNull(),
});

/**
 * The private keys that sign access tokens under an asymmetric JWT_ALGORITHM (platform/identity/
 * signing-keys.ts). A key is published from `createdAt`, signs from `activeFrom`, stops signing at
 * `retiresAt` (its successor's `activeFrom`) and stays published until its last token has expired.
 * The private key is a PKCS#8 PEM encrypted under ENCRYPTION_KEY, never stored in the clear.
 */
export const signingKeys = pgTable(
  'signing_keys',
  {
    // The `kid` of its tokens and of its JWK.
    id: text('id').primaryKey(),
    algorithm: text('algorithm').notNull(),
    publicJwk: jsonb('public_jwk').$type<Record<string, string>>().notNull(),
    privateKeyEnc: text('private_key_enc').notNull(),
    createdAt: ts('created_at').notNull(),
    activeFrom: ts('active_from').notNull(),
    retiresAt: ts('retires_at'),
  },
  (t) => [index('signing_keys_algorithm_idx').on(t.algorithm, t.activeFrom)],
);

export type SigningKeyRow = typeof signingKeys.$inferSelect;
