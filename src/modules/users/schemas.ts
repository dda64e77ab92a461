import { Type } from 'typebox';
import { Body, named, Nullable, NullableTimestamp, ref, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';

export const PreferencesSchema = named(
  'UserPreferences',
  Type.Object({
    theme: Type.Enum(['light', 'dark', 'system']),
    language: Type.String(),
    timezone: Type.String({ description: 'IANA time zone, e.g. Europe/Paris' }),
    notifications: Type.Object({ email: Type.Boolean(), push: Type.Boolean() }),
  }),
);

const ME = {
  id: 'usr_01jq3bn9zs0a7awy2w2vc6bte1',
  email: 'ada@example.com',
  emailVerified: '2026-03-01T12:00:00.000Z',
  fullName: 'Ada Lovelace',
  avatarUrl: null,
  preferences: { theme: 'system', language: 'en', timezone: 'UTC', notifications: { email: true, push: false } },
  twoFactorEnabled: false,
  isActive: true,
  createdAt: '2026-03-01T11:58:12.345Z',
  updatedAt: '2026-03-01T12:00:00.000Z',
};

export const User = named(
  'User',
  Type.Object({
    id: Type.String(),
    email: Type.String(),
    emailVerified: NullableTimestamp,
    fullName: Nullable(Type.String()),
    avatarUrl: Nullable(Type.String()),
    preferences: ref(PreferencesSchema),
    twoFactorEnabled: Type.Boolean(),
    isActive: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  { description: 'The signed-in person (docs/api.md#user-resource)', examples: [ME] },
);

export const PatchMeBody = named(
  'UpdateUserRequest',
  Body({
    fullName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    avatarUrl: Type.Optional(Nullable(Type.String({ format: 'uri', maxLength: 2048 }))),
    preferences: Type.Optional(
      Body({
        theme: Type.Optional(Type.Enum(['light', 'dark', 'system'])),
        language: Type.Optional(Type.String({ minLength: 2, maxLength: 10 })),
        timezone: Type.Optional(
          Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Paris' }),
        ),
        notifications: Type.Optional(
          Body({ email: Type.Optional(Type.Boolean()), push: Type.Optional(Type.Boolean()) }),
        ),
      }),
    ),
  }),
  {
    description: 'Any of the fields; preferences are merged (docs/api.md#profile)',
    examples: [{ fullName: 'Ada King', preferences: { notifications: { push: true } } }],
  },
);

export const Session = named(
  'Session',
  Type.Object({
    id: Type.String(),
    userAgent: Nullable(Type.String()),
    ipAddress: Nullable(Type.String()),
    lastUsedAt: Timestamp,
    expiresAt: Timestamp,
    createdAt: Timestamp,
    isCurrent: Type.Boolean({ description: 'The session making this request' }),
  }),
);

export const SessionList = named('SessionList', Type.Object({ sessions: Type.Array(ref(Session)), ...PageFields }), {
  examples: [
    {
      sessions: [
        {
          id: 'ses_01jq3bp2a7r5xq9ddf0kjt8g0c',
          userAgent: 'Mozilla/5.0',
          ipAddress: '203.0.113.7',
          lastUsedAt: '2026-03-01T12:05:00.000Z',
          expiresAt: '2026-03-08T12:05:00.000Z',
          createdAt: '2026-03-01T12:00:00.000Z',
          isCurrent: true,
        },
      ],
      total: 1,
      page: 1,
      pageSize: 20,
      hasMore: false,
    },
  ],
});

export const SessionParams = Type.Object({
  sessionId: Type.String({ minLength: 1, maxLength: 64, description: 'A session (`ses_…`)' }),
});

export const RevokedAll = named(
  'RevokedSessions',
  Type.Object({ message: Type.String(), revoked: Type.Integer({ description: 'How many sessions were active' }) }),
  {
    examples: [{ message: 'All sessions revoked', revoked: 3 }],
  },
);
