// The closed list of error codes (docs/api.md#error-codes). Services throw these; only the error
// handler writes an error body: {success: false, error: {code, message, details}}.
export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'AUTHENTICATION_ERROR',
  'PLAN_LIMIT_EXCEEDED',
  'AUTHORIZATION_ERROR',
  'EMAIL_NOT_VERIFIED',
  'NOT_FOUND',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'ACCOUNT_LOCKED',
  'RATE_LIMIT_EXCEEDED',
  'QUOTA_EXCEEDED',
  'INTERNAL_ERROR',
  'PAYMENT_PROVIDER_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The one status each code is answered with. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  VALIDATION_ERROR: 400,
  AUTHENTICATION_ERROR: 401,
  PLAN_LIMIT_EXCEEDED: 402,
  AUTHORIZATION_ERROR: 403,
  EMAIL_NOT_VERIFIED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  ACCOUNT_LOCKED: 423,
  RATE_LIMIT_EXCEEDED: 429,
  QUOTA_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  PAYMENT_PROVIDER_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
};

/** An error the client caused or must know of; its status is the code's (ERROR_STATUS). */
export class AppError extends Error {
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details = '',
    /** Extra response headers (Retry-After) and top-level body fields (requiresTwoFactor). */
    readonly headers: Record<string, string> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = ERROR_STATUS[code];
  }
}

export const validationError = (message: string, details = '') => new AppError('VALIDATION_ERROR', message, details);
export const authenticationError = (message = 'Authentication required', details = '') =>
  new AppError('AUTHENTICATION_ERROR', message, details);
export const authorizationError = (message = 'You do not have permission to perform this action', details = '') =>
  new AppError('AUTHORIZATION_ERROR', message, details);
export const notFound = (message = 'Resource not found', details = '') => new AppError('NOT_FOUND', message, details);
export const conflict = (message: string, details = '') => new AppError('CONFLICT', message, details);
