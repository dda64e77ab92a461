import { Type } from 'typebox';
import { Body, Nullable, NullableTimestamp, Timestamp } from '../../http/schemas.js';
import { PageFields } from '../../platform/pagination.js';
import { SCOPES } from '../../platform/permissions.js';

export const ScopeName = Type.Enum(SCOPES, { description: 'action:resource (spec §5.3)' });

export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  keyPrefix: Type.String(),
  scopes: Type.Array(Type.String()),
  rateLimit: Nullable(Type.Integer()),
  isActive: Type.Boolean(),
  createdAt: Timestamp,
  expiresAt: NullableTimestamp,
  lastUsedAt: NullableTimestamp,
});

const keyFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Optional(Type.Array(ScopeName, { maxItems: 20, uniqueItems: true })),
  rateLimit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
  expiresAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
};

export const CreateKeyBody = Body(keyFields);
export const CreateKeyFlatBody = Body({ organizationId: Type.String({ minLength: 1, maxLength: 64 }), ...keyFields });
export const CreatedKey = Type.Object({ apiKey: ApiKey, plainKey: Type.String({ description: 'The full key: shown in this response only' }) });
export const KeyList = Type.Object({ data: Type.Array(ApiKey), ...PageFields });
export const KeyParams = Type.Object({ keyId: Type.String({ minLength: 1, maxLength: 64 }) });
export const OrgKeyParams = Type.Object({ orgId: Type.String({ minLength: 1, maxLength: 64 }), keyId: Type.String({ minLength: 1, maxLength: 64 }) });
export const KeyUsage = Type.Object({
  keyId: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  lastUsedAt: NullableTimestamp,
  createdAt: Timestamp,
  usage: Type.Object({ requests: Type.Integer(), rateLimit: Type.Integer() }),
});
