// The error responses of a route, as its schema declares them: per status, the error envelope and
// one example per error code the route can answer (docs/api.md#error-codes). Routes name the codes
// their services throw (`errors(...)`); documentRoute (openapi.ts) adds those the request pipeline
// answers on every route of its kind, so the two lists cannot drift apart.
import { Type, type TSchema } from 'typebox';
import { ERROR_STATUS, type ErrorCode } from '../lib/errors.js';
import type { Permission } from '../platform/permissions.js';

export interface ErrorExample {
  code: ErrorCode;
  message: string;
  details?: string;
  /** The example's key in the document: the code unless a route shows several of one code. */
  name?: string;
  /** Top-level fields beside `error` (sign-in routes: requiresTwoFactor, twoFactorToken; re-authentication: reauthenticationRequired). */
  extra?: Record<string, unknown>;
}

export type ErrorSpec = ErrorCode | ErrorExample;

/** The example of each code when a route says nothing more precise. */
export const DEFAULT_EXAMPLES: Record<ErrorCode, Omit<ErrorExample, 'code'>> = {
  VALIDATION_ERROR: { message: 'Invalid request body', details: 'name: is required' },
  AUTHENTICATION_ERROR: {
    message: 'Authentication required',
    details: 'Send an access token as Authorization: Bearer <token>',
  },
  PLAN_LIMIT_EXCEEDED: {
    message: 'Plan limit reached: 3 members',
    details: "Upgrade the organization's plan to add more members",
  },
  AUTHORIZATION_ERROR: {
    message: 'Missing permission org:update',
    details: 'Your role (member) does not grant org:update',
  },
  EMAIL_NOT_VERIFIED: {
    message: 'Email address not verified',
    details: 'Follow the link in the verification email, or ask for a new one',
  },
  NOT_FOUND: { message: 'Organization not found' },
  CONFLICT: { message: 'The request conflicts with the current state' },
  PAYLOAD_TOO_LARGE: { message: 'Request body is too large', details: 'The body must not exceed 1 MiB' },
  UNSUPPORTED_MEDIA_TYPE: { message: 'Unsupported content type', details: 'Send the body as application/json' },
  ACCOUNT_LOCKED: {
    message: 'Account is temporarily locked after too many failed sign-in attempts',
    details: 'Try again in 900 seconds',
  },
  RATE_LIMIT_EXCEEDED: {
    message: 'Too many requests',
    details: 'Limit of 600 requests per minute reached; retry in 1 minute',
  },
  QUOTA_EXCEEDED: {
    message: 'Monthly API request quota exceeded',
    details: 'The plan allows 10000 API requests per month (API-key requests and published events)',
  },
  INTERNAL_ERROR: {
    message: 'An unexpected error occurred',
    details: 'Reference: 0f6e1f9c-3c1a-4d7e-9a51-2b8c8f1d2e47',
  },
  PAYMENT_PROVIDER_ERROR: { message: 'The payment provider failed', details: 'The provider did not answer in time' },
  SERVICE_UNAVAILABLE: {
    message: 'Service temporarily unavailable',
    details: 'A backing service is unreachable; try again shortly',
  },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request',
  401: 'No credential, or one that is invalid, expired or revoked',
  402: 'Plan limit reached',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflicts with the current state',
  413: 'Body larger than 1 MiB',
  415: 'Body not sent as application/json',
  423: 'Account locked (Retry-After)',
  429: 'Too many requests (Retry-After)',
  500: 'Unexpected failure',
  502: 'The payment provider failed; nothing was changed',
  503: 'A backing service is unavailable (Retry-After)',
};

const JSON_TYPE = 'application/json';
const ERRORS = Symbol('error response');

interface MediaExample {
  summary: string;
  value: { success: false; error: { code: ErrorCode; message: string; details: string } } & Record<string, unknown>;
}

/** One status's error response, in the `content` form both Fastify and the document read. */
export interface ErrorResponseEntry {
  description: string;
  content: { [JSON_TYPE]: { schema: TSchema; examples: Record<string, MediaExample> } };
  [ERRORS]: true;
}

export const isErrorEntry = (entry: unknown): entry is ErrorResponseEntry =>
  typeof entry === 'object' && entry !== null && ERRORS in entry;

/** The response map with its own copies of the error entries, so that completing them never touches another route's. */
export function withOwnErrors(response: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, entry] of Object.entries(response)) {
    if (!isErrorEntry(entry)) {
      out[status] = entry;
      continue;
    }
    const media = entry.content[JSON_TYPE];
    out[status] = {
      description: entry.description,
      content: { [JSON_TYPE]: { schema: media.schema, examples: { ...media.examples } } },
      [ERRORS]: true,
    } satisfies ErrorResponseEntry;
  }
  return out;
}

const toExample = (spec: ErrorSpec): ErrorExample =>
  typeof spec === 'string' ? { code: spec, ...DEFAULT_EXAMPLES[spec] } : spec;

/**
 * Adds one example to the response map, creating the status's entry. With onlyIfAbsent, nothing is
 * added when the route already shows an example of that name (the code, unless one is given).
 */
export function addError(response: Record<string, unknown>, spec: ErrorSpec, onlyIfAbsent = false): void {
  const ex = toExample(spec);
  const status = String(ERROR_STATUS[ex.code]);
  let entry = response[status];
  if (entry !== undefined && !isErrorEntry(entry))
    throw new Error(`Status ${status} is declared both as a success and as an error`);
  if (!entry) {
    entry = {
      description: '',
      content: { [JSON_TYPE]: { schema: Type.Ref('ErrorResponse'), examples: {} } },
      [ERRORS]: true,
    } satisfies ErrorResponseEntry;
    response[status] = entry;
  }
  const media = (entry as ErrorResponseEntry).content[JSON_TYPE];
  const shown = Object.values(media.examples).map((e) => e.value.error.code);
  if (onlyIfAbsent && (ex.name ?? ex.code) in media.examples) return;
  const name = ex.name ?? (media.examples[ex.code] ? `${ex.code}_${Object.keys(media.examples).length + 1}` : ex.code);
  media.examples[name] = {
    summary: `${ex.code}: ${ex.message}`,
    value: { success: false, error: { code: ex.code, message: ex.message, details: ex.details ?? '' }, ...ex.extra },
  };
  if (ex.extra)
    media.schema = Type.Ref('reauthenticationRequired' in ex.extra ? 'ReauthErrorResponse' : 'SignInErrorResponse');
  const codes = [...new Set([...shown, ex.code])];
  (entry as ErrorResponseEntry).description = `${STATUS_TEXT[Number(status)] ?? 'Error'}: ${codes.join(', ')}`;
}

/**
 * The error responses of the codes a route's handler and services can answer, each with its
 * example; pass an ErrorExample for a more precise one. The pipeline's own codes are added by
 * documentRoute.
 */
export function errors(...specs: ErrorSpec[]): Record<number, TSchema> {
  const out: Record<string, unknown> = {};
  for (const spec of specs) addError(out, spec);
  return out as unknown as Record<number, TSchema>;
}

/** What orgAccess answers (platform/tenancy.ts): an unknown organization, a role or key that lacks the permission. */
export const orgAccessErrors = (permission: Permission): ErrorExample[] => [
  { code: 'NOT_FOUND', name: 'organizationNotFound', message: 'Organization not found' },
  {
    code: 'AUTHORIZATION_ERROR',
    name: 'missingPermission',
    message: `Missing permission ${permission}`,
    details: `Your role (viewer) does not grant ${permission}`,
  },
];

// The examples many features show, and the shapes most of theirs take: a feature's docs.ts writes
// what is its own (the message, the field at fault) and not the envelope around it.

/** A body the schema accepts but the service refuses: the pipeline's message, the field at fault in `details`. */
export const invalidBody = (details: string, name?: string): ErrorExample => ({
  code: 'VALIDATION_ERROR',
  ...(name ? { name } : {}),
  message: DEFAULT_EXAMPLES.VALIDATION_ERROR.message,
  details,
});

/** An unknown (or another organization's) resource: `notFound('Project not found')`. */
export const notFound = (message: string, name?: string): ErrorExample => ({
  code: 'NOT_FOUND',
  ...(name ? { name } : {}),
  message,
});

/** A password that does not match, where a signed-in step asks for it (two-factor setup, re-authentication). */
export const WRONG_PASSWORD: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'wrongPassword',
  message: 'Password is incorrect',
};

/** The example as a step that needs a fresh proof of identity answers it (`reauthenticationRequired: true`). */
export const reauthenticate = (example: ErrorExample): ErrorExample => ({
  ...example,
  extra: { reauthenticationRequired: true },
});
