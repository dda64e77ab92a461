// What the auth routes share: the request metadata a session records, and the errors every sign-in
// can answer. Every sign-in route, and the signed-in steps that check a password, a code or a mailed
// token, declare `bucket: 'auth'`: they count against the per-IP sign-in limit, whoever calls
// (docs/api.md#rate-limits).
import type { FastifyRequest } from 'fastify';
import type { ErrorExample } from '../../http/errors-doc.js';
import type * as signIn from './sign-in.js';

/** The sentence every sign-in route's description ends with. */
export const COOKIE_MODE =
  'With `X-Session-Mode: cookie` (the web app) the refresh token is set in the HttpOnly `tenantry_refresh` cookie and left out of the body (docs/api.md#cookie-mode).';

export const clientMeta = (request: FastifyRequest): signIn.ClientMeta => ({
  userAgent: request.headers['user-agent'] ?? null,
  ipAddress: request.ip ?? null,
});

export const INVALID_TOKEN: ErrorExample = {
  code: 'VALIDATION_ERROR',
  message: 'Invalid or expired token',
  details: 'token: is unknown, already used or expired',
};
export const WEAK_PASSWORD: ErrorExample = {
  code: 'VALIDATION_ERROR',
  name: 'weakPassword',
  message: 'Password does not meet the policy',
  details: 'password: must contain an uppercase letter, a digit',
};
export const LOCKED: ErrorExample = {
  code: 'ACCOUNT_LOCKED',
  message: 'Account is temporarily locked after too many failed sign-in attempts',
  details: 'Try again in 900 seconds',
};
export const TWO_FACTOR_REQUIRED: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'twoFactorRequired',
  message: 'Two-factor code required',
  details: 'Send twoFactorCode: a code from the authenticator app or a backup code',
  extra: { requiresTwoFactor: true },
};
export const INVALID_SECOND_FACTOR: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'invalidTwoFactorCode',
  message: 'Invalid two-factor code',
  details: 'The code does not match the authenticator or an unused backup code',
};
export const INVALID_CODE: ErrorExample = {
  code: 'VALIDATION_ERROR',
  name: 'invalidCode',
  message: 'Invalid two-factor code',
  details: 'code: does not match the authenticator or an unused backup code',
};
export const USER_NOT_FOUND: ErrorExample = { code: 'NOT_FOUND', message: 'User not found' };
export const NOT_A_MEMBER: ErrorExample = {
  code: 'AUTHORIZATION_ERROR',
  name: 'notAMember',
  message: 'You are not a member of this organization',
  details: 'organizationId: names an organization this account does not belong to',
};
