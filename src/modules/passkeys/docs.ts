// The OpenAPI prose of the passkey routes (routes.ts), by operationId: each operation's summary,
// description and the error examples its services answer. The declarations name them (`doc: docs.listPasskeys`).
import { type ErrorExample, invalidBody, notFound, reauthenticate, WRONG_PASSWORD } from '../../http/errors-doc.js';
import { routeDocs } from '../../http/route.js';

const NOT_FOUND = notFound('Passkey not found');
const USER_NOT_FOUND = notFound('User not found', 'userNotFound');
const INVALID_PASSKEY: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  message: 'Invalid passkey',
  details: 'The challenge is unknown, used or expired, or the passkey is unknown or does not verify',
};
const TWO_FACTOR_REQUIRED: ErrorExample = {
  code: 'AUTHENTICATION_ERROR',
  name: 'twoFactorRequired',
  message: 'Two-factor code required',
  details: 'Send twoFactorToken and a code to POST /auth/two-factor/login',
  extra: { requiresTwoFactor: true, twoFactorToken: 'k3J9x0bQ2mV7tY1cR8wN4pL6zH5dF0aS' },
};
const REAUTH_REQUIRED = reauthenticate({
  code: 'AUTHENTICATION_ERROR',
  name: 'reauthenticationRequired',
  message: 'Re-authentication required',
  details: 'password: confirm your password (in this request, or first with POST /auth/reauthenticate)',
});
const WRONG_PROOF = reauthenticate(WRONG_PASSWORD);
const WRONG_CODE = reauthenticate({
  code: 'AUTHENTICATION_ERROR',
  name: 'invalidTwoFactorCode',
  message: 'Invalid two-factor code',
  details: 'The code does not match the authenticator or an unused backup code',
});
const PROOF_MISSING = invalidBody('twoFactorCode: is required for an account without a password');
const COOKIE_MODE =
  'With `X-Session-Mode: cookie` (the web app) the refresh token is set in the HttpOnly `tenantry_refresh` cookie and left out of the body (docs/api.md#cookie-mode).';

export const docs = routeDocs(['Passkeys'], {
  passkeyRegistrationOptions: {
    summary: 'Start registering a passkey for the signed-in user',
    description:
      'Answers PublicKeyCredentialCreationOptionsJSON for `navigator.credentials.create()`: the rp id is the host of APP_ORIGIN, the user’s passkeys are excluded, no attestation is asked. Its challenge is single use and lives 5 minutes. A new passkey signs in on its own (as both factors with user verification), so it needs a recent proof of the person: `password` in the body (for an account without one, `twoFactorCode`), unless this session signed in, or re-authenticated with POST /auth/reauthenticate, within `AUTH_REAUTH_WINDOW_S` seconds (a refresh does not count). Otherwise 401 with `reauthenticationRequired: true`; a wrong password or code counts toward the sign-in lockout (docs/api.md#passkeys).',
    errors: [REAUTH_REQUIRED, WRONG_PROOF, WRONG_CODE, PROOF_MISSING, USER_NOT_FOUND, 'ACCOUNT_LOCKED'],
  },
  passkeyRegistrationVerify: {
    summary: 'Finish registering a passkey',
    description:
      'Checks the authenticator’s answer against a live challenge of the caller, APP_ORIGIN and its host, and stores the passkey (`name` defaults to "Passkey"). A challenge unknown, used or expired, or an answer that does not verify, answers 400; a credential registered already 409 (docs/api.md#passkeys).',
    errors: [
      {
        code: 'VALIDATION_ERROR',
        message: 'Invalid passkey registration',
        details: 'response: its challenge is unknown, already used or expired',
      },
      {
        code: 'CONFLICT',
        message: 'This passkey is already registered',
        details: 'response: the credential is registered already',
      },
      USER_NOT_FOUND,
    ],
  },
  listPasskeys: {
    summary: 'The signed-in user’s passkeys, oldest first',
    description: 'Names and dates only: key material is never answered (docs/api.md#passkeys).',
  },
  renamePasskey: {
    summary: 'Rename a passkey',
    description: 'Another user’s passkey, or none, answers 404 (docs/api.md#passkeys).',
    errors: [invalidBody('name: must not be blank'), NOT_FOUND],
  },
  deletePasskey: {
    summary: 'Delete a passkey',
    description:
      'It signs in no more, at once. Sessions it started stay (revoke them in the session list). Another user’s passkey, or none, answers 404 (docs/api.md#passkeys).',
    errors: [NOT_FOUND],
  },
  passkeyAuthenticationOptions: {
    summary: 'Start a passkey sign-in',
    description:
      'Without `email`: options for a discoverable passkey (no allowCredentials). With it: that account’s passkeys as allowCredentials; an unknown address answers the same shape with none. `challengeId` goes back with the assertion; single use, 5 minutes (docs/api.md#passkeys).',
  },
  passkeyAuthenticationVerify: {
    summary: 'Sign in with a passkey',
    description: `Answers as login does. A passkey that verified the user (UV) is both factors; without UV, an account with two-factor answers 401 \`requiresTwoFactor\` with a \`twoFactorToken\` for POST /auth/two-factor/login. An unknown, used or expired challenge, an unknown or deleted passkey, a wrong origin or rp id, a bad signature or a signature counter that did not move forward answer 401 (docs/api.md#passkeys). ${COOKIE_MODE}`,
    errors: [INVALID_PASSKEY, TWO_FACTOR_REQUIRED, 'EMAIL_NOT_VERIFIED', 'ACCOUNT_LOCKED'],
  },
});
