import { sql } from 'drizzle-orm';
import { boolean, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

export interface Preferences {
  theme: 'light' | 'dark' | 'system';
  language: string;
  timezone: string;
  notifications: { email: boolean; push: boolean };
}

export const defaultPreferences: Preferences = {
  theme: 'system',
  language: 'en',
  timezone: 'UTC',
  notifications: { email: true, push: false },
};

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    // Stored trimmed and lowercased (docs/api.md#requests: emails compare case-insensitively).
    email: text('email').notNull(),
    emailVerifiedAt: ts('email_verified_at'),
    // Null for accounts created through a social provider that never set a password.
    passwordHash: text('password_hash'),
    fullName: text('full_name'),
    avatarUrl: text('avatar_url'),
    preferences: jsonb('preferences').$type<Preferences>().notNull(),
    twoFactorEnabled: boolean('two_factor_enabled').notNull().default(false),
    isActive: boolean('is_active').notNull().default(true),
    failedLoginAttempts: integer('failed_login_attempts').notNull().default(0),
    lockedUntil: ts('locked_until'),
    // Password and code checks under way (reserved before hashing, auth/lockout.ts), and when the
    // last was reserved: a count not renewed for a minute is stale (its process died mid-check).
    checksInFlight: integer('checks_in_flight').notNull().default(0),
    checksReservedAt: ts('checks_reserved_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('users_email_key').on(sql`lower(${t.email})`)],
);

export type UserRow = typeof users.$inferSelect;
