// The closed list of error codes (spec §7, DECISIONS §1). Services throw these; only the error
// handler writes an error body: {success: false, error: {code, message, details}}.
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'AUTHENTICATION_ERROR'
  | 'AUTHORIZATION_ERROR'
  | 'EMAIL_NOT_VERIFIED'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PLAN_LIMIT_EXCEEDED'
  | 'ACCOUNT_LOCKED'
  | 'RATE_LIMIT_EXCEEDED'
  | 'QUOTA_EXCEEDED'
  | 'INTERNAL_ERROR'
  | 'PAYMENT_PROVIDER_ERROR'
  | 'SERVICE_UNAVAILABLE';

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details = '',
    /** Extra response headers (Retry-After) and top-level body fields (requiresTwoFactor). */
    readonly headers: Record<string, string> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const validationError = (message: string, details = '') => new AppError(400, 'VALIDATION_ERROR', message, details);
export const authenticationError = (message = 'Authentication required', details = '') =>
  new AppError(401, 'AUTHENTICATION_ERROR', message, details);
export const authorizationError = (message = 'You do not have permission to perform this action', details = '') =>
  new AppError(403, 'AUTHORIZATION_ERROR', message, details);
export const notFound = (message = 'Resource not found', details = '') => new AppError(404, 'NOT_FOUND', message, details);
export const conflict = (message: string, details = '') => new AppError(409, 'CONFLICT', message, details);
export const serviceUnavailable = (message = 'Service temporarily unavailable', retryAfterS = 1) =>
  new AppError(503, 'SERVICE_UNAVAILABLE', message, '', { 'Retry-After': String(retryAfterS) });
