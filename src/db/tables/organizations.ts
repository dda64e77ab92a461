import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './users.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/** The four roles every organization has. */
export type BuiltInRole = 'owner' | 'admin' | 'member' | 'viewer';
/** A role key: a built-in role, or a custom role of the membership's organization (organization_roles). */
export type Role = BuiltInRole | (string & {});
export type PlanName = 'free' | 'pro' | 'enterprise';

export interface OrgSettings {
  branding?: { primaryColor?: string; accentColor?: string };
  features?: { webhooks?: boolean; apiAccess?: boolean; customDomain?: boolean };
  billing?: { email?: string; taxId?: string };
}

export const organizations = pgTable(
  'organizations',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    slug: text('slug').notNull(),
    description: text('description'),
    logoUrl: text('logo_url'),
    settings: jsonb('settings').$type<OrgSettings>().notNull(),
    // The plan in force; billing keeps it in sync with the subscription (Free until then).
    plan: text('plan').$type<PlanName>().notNull().default('free'),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('organizations_slug_key').on(t.slug)],
);

// Organization-owned tables carry organization_id in their keys so the schema can later be
// distributed by organization without a rewrite (docs/architecture.md).
export const memberships = pgTable(
  'memberships',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role').$type<Role>().notNull(),
    joinedAt: ts('joined_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex('memberships_org_user_key').on(t.organizationId, t.userId),
    index('memberships_user_idx').on(t.userId),
    // Exactly one owner per organization.
    uniqueIndex('memberships_one_owner_key')
      .on(t.organizationId)
      .where(sql`role = 'owner'`),
  ],
);

export type InvitationStatus = 'pending' | 'accepted' | 'declined' | 'revoked' | 'expired';

export const invitations = pgTable(
  'invitations',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    email: text('email').notNull(),
    role: text('role').$type<Exclude<Role, 'owner'>>().notNull(),
    tokenHash: text('token_hash').notNull(),
    // Stored: pending, accepted, declined, revoked. `expired` is a pending one past expiresAt.
    status: text('status').$type<Exclude<InvitationStatus, 'expired'>>().notNull(),
    invitedBy: text('invited_by')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex('invitations_token_hash_key').on(t.tokenHash),
    index('invitations_org_status_idx').on(t.organizationId, t.status, t.createdAt),
    // An invitee's pending invitations across organizations (GET /users/me/invitations).
    index('invitations_pending_email_idx')
      .on(t.email)
      .where(sql`status = 'pending'`),
  ],
);

/**
 * Custom roles (docs/api.md#custom-roles): a key unique in its organization, never a built-in name,
 * granting catalogue permissions (never org:delete or org:transfer). Members and invitations hold
 * it by key; it cannot be deleted while one does.
 */
export const organizationRoles = pgTable(
  'organization_roles',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    permissions: text('permissions').array().notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.key] })],
);

export type OrganizationRow = typeof organizations.$inferSelect;
export type OrganizationRoleRow = typeof organizationRoles.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
export type InvitationRow = typeof invitations.$inferSelect;
