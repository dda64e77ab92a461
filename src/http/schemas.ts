// Shapes shared by every module: named component schemas, the error envelope, pagination, and helpers
// that keep route schemas short. The route schema is the contract: it validates, types and documents.
//
// A named schema (`named`) gets an `$id`, is registered once with the app (app.addSchema, see
// app.ts) and is referred to from routes with `ref`: validation, serialization (compiled once per
// route) and the OpenAPI document (#/components/schemas/<Name>) all read the same definition.
import { Type, type TProperties, type TSchema } from 'typebox';
import { ERROR_CODES } from '../lib/errors.js';
import { type Permission, SCOPE_PERMISSIONS } from '../platform/permissions.js';

const registry = new Map<string, TSchema>();

/** A component schema: `Name` in the OpenAPI document, `components['schemas']['Name']` in the client. */
export function named<T extends TSchema>(
  id: string,
  schema: T,
  options: { description?: string; examples?: unknown[] } = {},
): T {
  if (registry.has(id)) throw new Error(`Schema ${id} is defined twice`);
  const out = { ...schema, ...options, $id: id } as T;
  registry.set(id, out);
  return out;
}

/** Every named schema, to register with the app before its routes. */
export const components = (): TSchema[] => [...registry.values()];

/** A reference to a named schema, typed as the schema itself. */
export function ref<T extends TSchema>(schema: T, description?: string): T {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string' || registry.get(id) !== schema) throw new Error('ref() takes a schema made by named()');
  return Type.Ref(id, description ? { description } : {}) as unknown as T;
}

export const ErrorCode = named('ErrorCode', Type.Enum([...ERROR_CODES]), {
  description: 'The closed list of error codes (docs/api.md#error-codes): branch on it, not on `message`.',
});

const errorFields = {
  success: Type.Literal(false),
  error: Type.Object({
    code: ref(ErrorCode),
    message: Type.String({ description: 'A short sentence for people' }),
    details: Type.String({
      description: 'Possibly empty; for validation errors, the field and the problem (`field.path: problem`)',
    }),
  }),
};

export const ErrorResponse = named('ErrorResponse', Type.Object(errorFields), {
  description: 'The error envelope of every route (docs/api.md#errors)',
});

export const SignInErrorResponse = named(
  'SignInErrorResponse',
  Type.Object({
    ...errorFields,
    requiresTwoFactor: Type.Optional(
      Type.Boolean({
        description:
          'The sign-in needs a second factor: send it again with `twoFactorCode` (or finish with `POST /auth/two-factor/login`)',
      }),
    ),
    twoFactorToken: Type.Optional(
      Type.String({ description: 'Social sign-in only: send it with the code to `POST /auth/two-factor/login`' }),
    ),
  }),
  {
    description:
      'The error envelope of the sign-in routes, which may ask for a second factor (docs/api.md#two-factor-authentication)',
  },
);

export const ReauthErrorResponse = named(
  'ReauthErrorResponse',
  Type.Object({
    ...errorFields,
    reauthenticationRequired: Type.Optional(
      Type.Boolean({
        description:
          'The step needs a recent proof of the person: send `password` (or `twoFactorCode`, as `details` names) with it, or first `POST /auth/reauthenticate`',
      }),
    ),
  }),
  {
    description:
      'The error envelope of the routes that need a recent re-authentication (docs/api.md#re-authentication)',
  },
);

/** A request body that refuses unknown fields (docs/api.md#requests). */
export const Body = <T extends TProperties>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });

export const Message = named('Message', Type.Object({ message: Type.String() }), {
  description: 'A confirmation for people',
  examples: [{ message: 'Project deleted' }],
});

/** The success envelope of the routes whose contract wraps their answer in one. */
export const success = <T>(data: T) => ({ success: true as const, data });

/** The envelope of the billing and webhook routes: `{success: true, …}`. */
export const ok = <T extends TProperties>(props: T) => Type.Object({ success: Type.Literal(true), ...props });

/** The organization in the path of every organization route. */
export const OrgParams = Type.Object({
  orgId: Type.String({ minLength: 1, maxLength: 64, description: 'The organization (`org_…`)' }),
});

/** A one-time token from a mailed link. */
export const Token = Type.String({ minLength: 1, maxLength: 512 });

export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

// Security requirements (docs/api.md#which-credential-a-route-takes).
export const publicRoute: Array<Record<string, string[]>> = [];
export const bearerAuth: Array<Record<string, string[]>> = [{ bearerAuth: [] }];
/** Routes an API key may call too (with the right scope). */
export const bearerOrKey: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKey: [] }];

const SCOPED = new Set<Permission>(Object.values(SCOPE_PERMISSIONS).flat());

/** Who may call an organization route that asks for `permission`: an API key too when a scope grants it. */
export const orgSecurity = (permission: Permission) => (SCOPED.has(permission) ? bearerOrKey : bearerAuth);
