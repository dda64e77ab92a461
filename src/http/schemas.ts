// Shapes shared by every module: the error envelope, pagination, and helpers that keep route
// schemas short. The route schema is the contract: it validates, types and documents.
import { Type, type TProperties, type TSchema } from 'typebox';

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.String(),
    }),
    requiresTwoFactor: Type.Optional(Type.Boolean()),
    twoFactorToken: Type.Optional(Type.String({ description: 'Social sign-in only: send it with the code to POST /auth/two-factor/login' })),
  },
  { $id: 'ErrorResponse', description: 'Error envelope (spec §7)' },
);

const ERROR_TEXT: Record<number, string> = {
  400: 'Validation error',
  401: 'Authentication required or failed',
  402: 'Plan limit exceeded',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body larger than 1 MiB',
  415: 'Content type is not JSON',
  423: 'Account locked',
  429: 'Rate limit exceeded',
  500: 'Internal error',
  502: 'Payment provider error',
  503: 'Service unavailable',
};

const ALWAYS = [400, 413, 415, 429, 500, 503];

/** Response schemas for the given error statuses (plus those every route can answer). */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of [...new Set([...statuses, ...ALWAYS])].sort()) {
    out[s] = Type.Ref('ErrorResponse', { description: ERROR_TEXT[s] ?? 'Error' });
  }
  return out;
}

/** A request body that refuses unknown fields (DECISIONS §1). */
export const Body = <T extends TProperties>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });

export const Message = Type.Object({ message: Type.String() });

export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const bearerAuth = [{ bearerAuth: [] }];
/** Routes an API key may call too (with the right scope). */
export const bearerOrKey: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKey: [] }];
