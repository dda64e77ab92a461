// The account export (docs/api.md#account-export): one JSON document of what the service holds about
// the person. It never carries a secret: no password hash, two-factor secret, backup code, token or
// token hash, nor a passkey's public key.
import { Type } from 'typebox';
import { named, Nullable, NullableTimestamp, ref, Timestamp } from '../../http/schemas.js';
import { User } from './schemas.js';

const ExportedSession = Type.Object({
  id: Type.String(),
  userAgent: Nullable(Type.String()),
  ipAddress: Nullable(Type.String()),
  createdAt: Timestamp,
  lastUsedAt: Timestamp,
  expiresAt: Timestamp,
  revokedAt: NullableTimestamp,
  revokedReason: Nullable(Type.String()),
});

const ExportedMembership = Type.Object({
  organizationId: Type.String(),
  organizationName: Type.String(),
  organizationSlug: Type.String(),
  memberId: Type.String(),
  role: Type.String(),
  joinedAt: Timestamp,
});

const ExportedSocialLink = Type.Object({
  provider: Type.String(),
  providerAccountId: Type.String(),
  email: Nullable(Type.String()),
  createdAt: Timestamp,
});

const ExportedPasskey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  transports: Type.Array(Type.String()),
  backedUp: Type.Boolean(),
  createdAt: Timestamp,
  lastUsedAt: NullableTimestamp,
});

const ExportedAuditEntry = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  action: Type.String(),
  method: Type.String(),
  path: Type.String(),
  statusCode: Type.Integer(),
  ipAddress: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  createdAt: Timestamp,
});

export const AccountExport = named(
  'AccountExport',
  Type.Object({
    exportedAt: Timestamp,
    profile: ref(User),
    sessions: Type.Array(ExportedSession),
    memberships: Type.Array(ExportedMembership),
    socialLinks: Type.Array(ExportedSocialLink),
    passkeys: Type.Array(ExportedPasskey),
    auditEntries: Type.Array(ExportedAuditEntry, {
      description: 'The changes the person made in organizations, newest first',
    }),
  }),
  {
    description:
      'Everything the service holds about the signed-in person, without any secret (docs/api.md#account-export)',
  },
);
