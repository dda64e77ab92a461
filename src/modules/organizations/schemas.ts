import { Type } from 'typebox';
import { Body, Nullable, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';

export const Slug = Type.String({ minLength: 3, maxLength: 50, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' });
const Url = Type.String({ format: 'uri', maxLength: 2048, description: 'An absolute http or https URL' });

const Branding = Body({ primaryColor: Type.Optional(Type.String({ maxLength: 32 })), accentColor: Type.Optional(Type.String({ maxLength: 32 })) });
const Features = Body({ webhooks: Type.Optional(Type.Boolean()), apiAccess: Type.Optional(Type.Boolean()), customDomain: Type.Optional(Type.Boolean()) });
const BillingSettings = Body({ email: Type.Optional(Type.String({ maxLength: 254 })), taxId: Type.Optional(Type.String({ maxLength: 64 })) });
export const Settings = Body({ branding: Type.Optional(Branding), features: Type.Optional(Features), billing: Type.Optional(BillingSettings) });

export const Organization = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  logoUrl: Nullable(Type.String()),
  settings: Type.Object({
    branding: Type.Optional(Type.Object({ primaryColor: Type.Optional(Type.String()), accentColor: Type.Optional(Type.String()) })),
    features: Type.Optional(Type.Object({ webhooks: Type.Optional(Type.Boolean()), apiAccess: Type.Optional(Type.Boolean()), customDomain: Type.Optional(Type.Boolean()) })),
    billing: Type.Optional(Type.Object({ email: Type.Optional(Type.String()), taxId: Type.Optional(Type.String()) })),
  }),
  createdBy: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const CreateOrgBody = Body({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  slug: Slug,
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  logoUrl: Type.Optional(Nullable(Url)),
});

export const PatchOrgBody = Body({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  logoUrl: Type.Optional(Nullable(Url)),
  settings: Type.Optional(Settings),
});

export const OrgParams = Type.Object({ orgId: Type.String({ minLength: 1, maxLength: 64 }) });
export const MemberParams = Type.Object({ orgId: Type.String({ minLength: 1, maxLength: 64 }), memberId: Type.String({ minLength: 1, maxLength: 64 }) });
export const InvitationParams = Type.Object({ orgId: Type.String({ minLength: 1, maxLength: 64 }), invitationId: Type.String({ minLength: 1, maxLength: 64 }) });

export const Member = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  organizationId: Type.String(),
  role: Type.Enum(['owner', 'admin', 'member', 'viewer']),
  user: Type.Object({ id: Type.String(), email: Type.String(), fullName: Nullable(Type.String()), avatarUrl: Nullable(Type.String()) }),
  joinedAt: Timestamp,
});

export const MemberList = Type.Object({
  members: Type.Array(Member),
  ...PageFields,
});

export const OrgSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  logoUrl: Nullable(Type.String()),
  role: Type.Enum(['owner', 'admin', 'member', 'viewer']),
  membershipId: Type.String(),
  joinedAt: Timestamp,
});

export const OrgSummaryList = Type.Object({
  organizations: Type.Array(OrgSummary),
  ...PageFields,
});

export const AssignableRole = Type.Enum(['admin', 'member', 'viewer']);
export const RoleBody = Body({ role: AssignableRole });
export const TransferBody = Body({ memberId: Type.String({ minLength: 1, maxLength: 64 }) });
export const TransferResponse = Type.Object({ message: Type.String(), owner: Member, previousOwner: Member });

export const InvitationStatus = Type.Enum(['pending', 'accepted', 'declined', 'revoked', 'expired']);
export const Invitation = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  email: Type.String(),
  role: AssignableRole,
  invitedBy: Type.Object({ id: Type.String(), email: Type.String(), fullName: Nullable(Type.String()) }),
  expiresAt: Timestamp,
  createdAt: Timestamp,
  status: InvitationStatus,
});
export const InviteBody = Body({ email: Type.String({ format: 'email', maxLength: 254 }), role: AssignableRole });
export const InvitationWithUrl = Type.Object({ invitation: Invitation, inviteUrl: Type.String() });
export const InvitationList = Type.Object({ data: Type.Array(Invitation), ...PageFields });
export const InvitationQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  status: Type.Optional(InvitationStatus),
});
