import { Type } from 'typebox';
import { Body, Nullable, NullableTimestamp, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';

export const PreferencesSchema = Type.Object({
  theme: Type.Enum(['light', 'dark', 'system']),
  language: Type.String(),
  timezone: Type.String(),
  notifications: Type.Object({ email: Type.Boolean(), push: Type.Boolean() }),
});

export const User = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    emailVerified: NullableTimestamp,
    fullName: Nullable(Type.String()),
    avatarUrl: Nullable(Type.String()),
    preferences: PreferencesSchema,
    twoFactorEnabled: Type.Boolean(),
    isActive: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { description: 'User (spec §2.1)' },
);

export const PatchMeBody = Body({
  fullName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  avatarUrl: Type.Optional(Nullable(Type.String({ format: 'uri', maxLength: 2048 }))),
  preferences: Type.Optional(
    Body({
      theme: Type.Optional(Type.Enum(['light', 'dark', 'system'])),
      language: Type.Optional(Type.String({ minLength: 2, maxLength: 10 })),
      timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Paris' })),
      notifications: Type.Optional(Body({ email: Type.Optional(Type.Boolean()), push: Type.Optional(Type.Boolean()) })),
    }),
  ),
});

export const ChangePasswordBody = Body({
  currentPassword: Type.String({ minLength: 8, maxLength: 128 }),
  newPassword: Type.String({ minLength: 8, maxLength: 128 }),
});

export const Session = Type.Object({
  id: Type.String(),
  userAgent: Nullable(Type.String()),
  ipAddress: Nullable(Type.String()),
  lastUsedAt: Timestamp,
  expiresAt: Timestamp,
  createdAt: Timestamp,
  isCurrent: Type.Boolean(),
});

export const SessionList = Type.Object({
  sessions: Type.Array(Session),
  ...PageFields,
});

export const SessionParams = Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 64 }) });

export const RevokedAll = Type.Object({ message: Type.String(), revoked: Type.Integer() });
