import { Type } from 'typebox';
import { Body, named, Nullable, ref, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';
import { ROLE_KEY_PATTERN } from '../../platform/permissions.js';

export const Slug = Type.String({ minLength: 3, maxLength: 50, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' });
const Url = Type.String({ format: 'uri', maxLength: 2048, description: 'An absolute http or https URL' });

const Branding = Body({
  primaryColor: Type.Optional(Type.String({ maxLength: 32 })),
  accentColor: Type.Optional(Type.String({ maxLength: 32 })),
});
const Features = Body({
  webhooks: Type.Optional(Type.Boolean()),
  apiAccess: Type.Optional(Type.Boolean()),
  customDomain: Type.Optional(Type.Boolean()),
});
const BillingSettings = Body({
  email: Type.Optional(Type.String({ maxLength: 254 })),
  taxId: Type.Optional(Type.String({ maxLength: 64 })),
});
export const Settings = Body({
  branding: Type.Optional(Branding),
  features: Type.Optional(Features),
  billing: Type.Optional(BillingSettings),
});

const ORG_ID = 'org_01jq3bz8n6m4k2j0h8g6f4d2c0';
const USER_ID = 'usr_01jq3bn9zs0a7awy2w2vc6bte1';
const ORG = {
  id: ORG_ID,
  name: 'Analytical Engines',
  slug: 'analytical-engines',
  description: null,
  logoUrl: null,
  settings: {},
  createdBy: USER_ID,
  createdAt: '2026-03-01T12:08:00.000Z',
  updatedAt: '2026-03-01T12:08:00.000Z',
};
const MEMBER = {
  id: 'mbr_01jq3bz8p2x6v4t2r0q8n6m4k2',
  userId: USER_ID,
  organizationId: ORG_ID,
  role: 'owner',
  user: { id: USER_ID, email: 'ada@example.com', fullName: 'Ada Lovelace', avatarUrl: null },
  joinedAt: '2026-03-01T12:08:00.000Z',
};
const INVITATION = {
  id: 'inv_01jq3c1h3k5m7p9r1t3v5x7z9b',
  organizationId: ORG_ID,
  email: 'charles@example.com',
  role: 'member',
  invitedBy: { id: USER_ID, email: 'ada@example.com', fullName: 'Ada Lovelace' },
  expiresAt: '2026-03-08T12:09:00.000Z',
  createdAt: '2026-03-01T12:09:00.000Z',
  status: 'pending',
};
const page = (data: unknown, key = 'data') => ({ [key]: [data], total: 1, page: 1, pageSize: 20, hasMore: false });

export const Organization = named(
  'Organization',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    slug: Type.String(),
    description: Nullable(Type.String()),
    logoUrl: Nullable(Type.String()),
    settings: Type.Object({
      branding: Type.Optional(
        Type.Object({ primaryColor: Type.Optional(Type.String()), accentColor: Type.Optional(Type.String()) }),
      ),
      features: Type.Optional(
        Type.Object({
          webhooks: Type.Optional(Type.Boolean()),
          apiAccess: Type.Optional(Type.Boolean()),
          customDomain: Type.Optional(Type.Boolean()),
        }),
      ),
      billing: Type.Optional(Type.Object({ email: Type.Optional(Type.String()), taxId: Type.Optional(Type.String()) })),
    }),
    createdBy: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  { description: 'docs/api.md#organization-resource', examples: [ORG] },
);

export const CreateOrgBody = named(
  'CreateOrganizationRequest',
  Body({
    name: Type.String({ minLength: 1, maxLength: 100 }),
    slug: { ...Slug, description: 'Unique across the service; cannot be changed' },
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    logoUrl: Type.Optional(Nullable(Url)),
  }),
  { examples: [{ name: 'Analytical Engines', slug: 'analytical-engines' }] },
);

export const PatchOrgBody = named(
  'UpdateOrganizationRequest',
  Body({
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    logoUrl: Type.Optional(Nullable(Url)),
    settings: Type.Optional({ ...Settings, description: 'Merged section by section' }),
  }),
  { examples: [{ settings: { branding: { accentColor: '#f00' } } }] },
);

/** A role: owner, admin, member, viewer, or a custom role's key (docs/api.md#custom-roles). */
export const RoleKey = Type.String({
  description: 'owner, admin, member, viewer, or the key of a custom role of the organization',
});

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });
const orgId = Id('The organization (`org_…`)');
export const MemberParams = Type.Object({ orgId, memberId: Id('A membership (`mbr_…`)') });
export const InvitationParams = Type.Object({ orgId, invitationId: Id('An invitation (`inv_…`)') });

export const Member = named(
  'Member',
  Type.Object({
    id: Type.String(),
    userId: Type.String(),
    organizationId: Type.String(),
    role: RoleKey,
    user: Type.Object({
      id: Type.String(),
      email: Type.String(),
      fullName: Nullable(Type.String()),
      avatarUrl: Nullable(Type.String()),
    }),
    joinedAt: Timestamp,
  }),
  { description: 'A membership (docs/api.md#members)', examples: [MEMBER] },
);

export const MemberList = named('MemberList', Type.Object({ members: Type.Array(ref(Member)), ...PageFields }), {
  description: 'A page of members, in joining order',
  examples: [page(MEMBER, 'members')],
});

export const OrgSummary = named(
  'OrganizationMembership',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    slug: Type.String(),
    logoUrl: Nullable(Type.String()),
    role: RoleKey,
    membershipId: Type.String(),
    joinedAt: Timestamp,
  }),
  { description: 'One of your organizations, with your role in it' },
);

export const OrgSummaryList = named(
  'OrganizationMembershipList',
  Type.Object({ organizations: Type.Array(ref(OrgSummary)), ...PageFields }),
  {
    description: "A page of the caller's organizations, newest membership first",
    examples: [
      page(
        {
          id: ORG_ID,
          name: ORG.name,
          slug: ORG.slug,
          logoUrl: null,
          role: 'owner',
          membershipId: MEMBER.id,
          joinedAt: MEMBER.joinedAt,
        },
        'organizations',
      ),
    ],
  },
);

export const AssignableRole = Type.String({
  pattern: ROLE_KEY_PATTERN,
  description:
    'admin, member, viewer, or the key of a custom role of the organization (docs/api.md#custom-roles); an API key gives only member or viewer',
});
export const RoleBody = named('UpdateMemberRoleRequest', Body({ role: AssignableRole }), {
  examples: [{ role: 'admin' }],
});
export const TransferBody = named(
  'TransferOwnershipRequest',
  Body({
    memberId: Type.String({ minLength: 1, maxLength: 64, description: 'The membership id (`mbr_…`) of the new owner' }),
  }),
);
export const TransferResponse = named(
  'TransferOwnershipResponse',
  Type.Object({ message: Type.String(), owner: ref(Member), previousOwner: ref(Member) }),
);

export const InvitationStatus = Type.Enum(['pending', 'accepted', 'declined', 'revoked', 'expired']);
export const Invitation = named(
  'Invitation',
  Type.Object({
    id: Type.String(),
    organizationId: Type.String(),
    email: Type.String(),
    role: { ...RoleKey, description: 'admin, member, viewer, or a custom role of the organization' },
    invitedBy: Type.Object({ id: Type.String(), email: Type.String(), fullName: Nullable(Type.String()) }),
    expiresAt: Timestamp,
    createdAt: Timestamp,
    status: { ...InvitationStatus, description: '`expired`: a pending invitation past its expiresAt' },
  }),
  { description: 'docs/api.md#invitations', examples: [INVITATION] },
);
export const InviteBody = named(
  'CreateInvitationRequest',
  Body({ email: Type.String({ format: 'email', maxLength: 254 }), role: AssignableRole }),
  {
    examples: [{ email: 'charles@example.com', role: 'member' }],
  },
);
export const InvitationWithUrl = named(
  'InvitationWithLink',
  Type.Object({
    invitation: ref(Invitation),
    inviteUrl: Type.String({ description: 'The link mailed to the address: {APP_ORIGIN}/invitations/accept?token=…' }),
  }),
  {
    examples: [
      {
        invitation: INVITATION,
        inviteUrl: 'http://localhost:3000/invitations/accept?token=q8Yv2mK0rT5wZ1xC4nB7jH3fD6sA9pLe',
      },
    ],
  },
);
export const InvitationList = named(
  'InvitationList',
  Type.Object({ data: Type.Array(ref(Invitation)), ...PageFields }),
  {
    description: 'A page of invitations, newest first',
    examples: [page(INVITATION)],
  },
);
export const InvitationTokenBody = named(
  'InvitationTokenRequest',
  Body({ token: Type.String({ minLength: 1, maxLength: 512, description: 'The token of the invitation link' }) }),
);
export const InvitationQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  status: Type.Optional(InvitationStatus),
});

// What an invitee sees of an invitation before joining (docs/api.md#invitation-preview).
const INVITEE_VIEW = {
  id: 'inv_01jq3cd4f6h8k0m2p4r6t8v0x2',
  organization: { id: 'org_01jq3bz8n6m4k2j0h8g6f4d2c0', name: 'Acme Inc', logoUrl: null },
  inviter: { fullName: 'Ada Lovelace' },
  email: 'charles@example.com',
  role: 'member',
  roleName: 'Member',
  expiresAt: '2026-03-08T12:20:00.000Z',
};
const InviteeFields = {
  organization: Type.Object({ id: Type.String(), name: Type.String(), logoUrl: Nullable(Type.String()) }),
  inviter: Type.Object({ fullName: Nullable(Type.String()) }),
  email: Type.String({ description: 'The invited address' }),
  role: { ...RoleKey, description: 'The role given on joining: a built-in one or a custom role key' },
  roleName: Type.String({ description: 'The role as people read it (a custom role by its name)' }),
  expiresAt: Timestamp,
};
export const InvitationPreview = named('InvitationPreview', Type.Object(InviteeFields), {
  description: 'docs/api.md#invitation-preview',
  examples: [(({ id: _id, ...rest }) => rest)(INVITEE_VIEW)],
});
export const MyInvitation = named('MyInvitation', Type.Object({ id: Type.String(), ...InviteeFields }), {
  description: 'A pending invitation to your verified email address',
  examples: [INVITEE_VIEW],
});
export const MyInvitationList = named('MyInvitationList', Type.Object({ invitations: Type.Array(ref(MyInvitation)) }), {
  examples: [{ invitations: [INVITEE_VIEW] }],
});
export const MyInvitationParams = Type.Object({ invitationId: Type.String({ maxLength: 64 }) });
