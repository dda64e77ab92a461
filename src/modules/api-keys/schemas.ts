import { Type } from 'typebox';
import { Body, named, Nullable, NullableTimestamp, ref, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';
import { SCOPES } from '../../platform/permissions.js';

export const ScopeName = named('ApiKeyScope', Type.Enum(SCOPES), {
  description: 'action:resource (docs/api.md#api-key-scopes)',
});

const KEY = {
  id: 'key_01jq3c6r8t0v2x4z6b8d0f2h4k',
  name: 'ci',
  keyPrefix: 'svc_live_3f9c01ab',
  scopes: ['read:projects'],
  rateLimit: 120,
  isActive: true,
  createdAt: '2026-03-01T12:12:00.000Z',
  expiresAt: null,
  lastUsedAt: null,
};

export const ApiKey = named(
  'ApiKey',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    keyPrefix: Type.String({ description: 'The prefix and the first 8 random characters, for display' }),
    scopes: Type.Array(Type.String()),
    rateLimit: Nullable(Type.Integer({ description: 'Requests per minute; null: the default (1000)' })),
    isActive: Type.Boolean(),
    createdAt: Timestamp,
    expiresAt: NullableTimestamp,
    lastUsedAt: NullableTimestamp,
  }),
  { description: 'An API key, without its secret (docs/api.md#api-key-resource)', examples: [KEY] },
);

const keyFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Optional(
    Type.Array(ref(ScopeName), {
      maxItems: 20,
      uniqueItems: true,
      description: 'Omitted or empty: the key is denied every organization route',
    }),
  ),
  rateLimit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
  expiresAt: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'In the future' }))),
};

export const CreateKeyBody = named('CreateApiKeyRequest', Body(keyFields), {
  examples: [{ name: 'ci', scopes: ['read:projects'], rateLimit: 120 }],
});
export const CreateKeyFlatBody = named(
  'CreateOrganizationApiKeyRequest',
  Body({ organizationId: Type.String({ minLength: 1, maxLength: 64 }), ...keyFields }),
  {
    description: 'The same as CreateApiKeyRequest, with the organization',
  },
);
export const CreatedKey = named(
  'CreatedApiKey',
  Type.Object({
    apiKey: ref(ApiKey),
    plainKey: Type.String({ description: 'The full key: shown in this response only' }),
  }),
  { examples: [{ apiKey: KEY, plainKey: 'svc_live_3f9c01ab7e52d4a6b8c0e1f2a3b4c5d6' }] },
);
export const KeyList = named('ApiKeyList', Type.Object({ data: Type.Array(ref(ApiKey)), ...PageFields }), {
  description: 'A page of keys, newest first, revoked keys included',
  examples: [{ data: [KEY], total: 1, page: 1, pageSize: 20, hasMore: false }],
});
export const RevokedKey = named('RevokedApiKey', Type.Object({ message: Type.String(), apiKey: ref(ApiKey) }), {
  examples: [{ message: 'API key revoked', apiKey: { ...KEY, isActive: false } }],
});
export const KeyParams = Type.Object({
  keyId: Type.String({ minLength: 1, maxLength: 64, description: 'The key (`key_…`)' }),
});
export const OrgKeyParams = Type.Object({
  orgId: Type.String({ minLength: 1, maxLength: 64, description: 'The organization (`org_…`)' }),
  keyId: Type.String({ minLength: 1, maxLength: 64, description: 'The key (`key_…`)' }),
});
export const KeyUsage = named(
  'ApiKeyUsage',
  Type.Object({
    keyId: Type.String(),
    name: Type.String(),
    prefix: Type.String(),
    lastUsedAt: NullableTimestamp,
    createdAt: Timestamp,
    usage: Type.Object({
      requests: Type.Integer({ description: 'Every request made with the key, refused ones included' }),
      rateLimit: Type.Integer({ description: 'The limit in force' }),
    }),
  }),
  {
    examples: [
      {
        keyId: KEY.id,
        name: 'ci',
        prefix: KEY.keyPrefix,
        lastUsedAt: '2026-03-01T12:13:00.000Z',
        createdAt: KEY.createdAt,
        usage: { requests: 42, rateLimit: 120 },
      },
    ],
  },
);
