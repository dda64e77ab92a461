// The OpenAPI prose of the auth routes (routes.ts, session, two-factor, link and account routes), by
// operationId: each operation's summary, description and the error examples its services answer. The
// errors every sign-in shares, and the cookie-mode sentence, are route-options.ts's.
import {
  COOKIE_MODE,
  INVALID_SECOND_FACTOR,
  NOT_A_MEMBER,
  INVALID_TOKEN,
  LOCKED,
  TWO_FACTOR_REQUIRED,
  USER_NOT_FOUND,
  WEAK_PASSWORD,
  INVALID_CODE,
} from './route-options.js';
import { type ErrorExample, invalidBody, reauthenticate, WRONG_PASSWORD } from '../../http/errors-doc.js';
import { routeDocs } from '../../http/route.js';

export const NO_REFRESH_TOKEN = {
  code: 'AUTHENTICATION_ERROR',
  name: 'noRefreshToken',
  message: 'Refresh token required',
  details: 'Send refreshToken in the body, or the tenantry_refresh cookie with X-Session-Mode: cookie',
} as const;
const PROVIDER_UNAVAILABLE = {
  code: 'NOT_FOUND',
  message: 'Route not found',
  details: 'Sign-in with gitlab is not available',
} as const;
const WRONG_PROOF = reauthenticate(WRONG_PASSWORD);
const WRONG_CODE = reauthenticate(INVALID_SECOND_FACTOR);
const CANNOT_PROVE = reauthenticate({
  code: 'AUTHENTICATION_ERROR',
  name: 'signInAgain',
  message: 'Re-authentication required',
  details:
    'This account has no password or two-factor code to confirm with: sign in again, and do this within 600 seconds',
});
const TAKEN: ErrorExample = {
  code: 'CONFLICT',
  message: 'An account with this email already exists',
  details: 'newEmail: is already registered',
};

export const docs = {
  ...routeDocs(['Email and password'], {
    verifyEmail: {
      summary: 'Verify an email address with the token from the email',
      description:
        'The token comes from the link `{APP_ORIGIN}/verify-email?token=…` mailed at registration; it is single use, valid 24 hours, and verifies nothing once the password of the registration that asked for it has changed (docs/api.md#registration-and-email-verification).',
      errors: [INVALID_TOKEN],
    },
    resendVerificationEmail: {
      summary: 'Send a new verification email (200 whether or not the account exists)',
      description:
        'Mails a new link to an existing, active, unverified account and voids the unused one; the answer and its timing are the same whether or not the account exists.',
    },
    register: {
      summary: 'Create an account and send a verification email',
      description:
        'Checks the password policy (400) and mails `{APP_ORIGIN}/verify-email?token=…`. An address already registered answers 409: its owner recovers it with a magic link or a password reset (docs/api.md#claiming-an-unverified-address).',
      errors: [
        WEAK_PASSWORD,
        {
          code: 'CONFLICT',
          message: 'An account with this email already exists',
          details: 'email: is already registered',
        },
      ],
    },
    login: {
      summary: 'Sign in with email and password',
      description: `Answers a token pair and the user. Five consecutive failures lock the account for 15 minutes (423). With two-factor enabled and no \`twoFactorCode\`: 401 with \`requiresTwoFactor: true\`; send the same request again with the code. An unverified address answers 403 once the password was right (docs/api.md#sign-in-with-email-and-password). ${COOKIE_MODE}`,
      errors: [
        { code: 'AUTHENTICATION_ERROR', message: 'Invalid email or password' },
        TWO_FACTOR_REQUIRED,
        INVALID_SECOND_FACTOR,
        'EMAIL_NOT_VERIFIED',
        LOCKED,
        NOT_A_MEMBER,
        {
          code: 'INTERNAL_ERROR',
          message: 'The two-factor secret cannot be read',
          details: 'It was encrypted with a key that ENCRYPTION_KEY no longer lists',
        },
      ],
    },
    forgotPassword: {
      summary: 'Email a password reset link (200 whether or not the account exists)',
      description:
        'Mails `{APP_ORIGIN}/reset-password?token=…` (valid 1 hour) to an existing, active account; the answer and its timing are the same either way.',
    },
    resetPassword: {
      summary: 'Set a new password with a reset token; revokes every session',
      description:
        'Applies the password policy, clears the lockout, revokes every session and voids the unused mailed links of the account. On an address never verified it is also the first proof of the address (docs/api.md#password-reset).',
      errors: [INVALID_TOKEN, WEAK_PASSWORD],
    },
  }),
  ...routeDocs(['Sessions'], {
    refreshTokens: {
      summary: 'Rotate a refresh token for a new token pair',
      description: `Each refresh token works once: the answer carries a new pair and moves the session expiry 7 days ahead. A spent token replayed after the grace window (\`AUTH_REFRESH_REUSE_GRACE_S\`) revokes the whole session (docs/api.md#tokens-and-refresh). Without \`refreshToken\` in the body, the \`tenantry_refresh\` cookie counts only with \`X-Session-Mode: cookie\` and an Origin that is APP_ORIGIN or this service's own (or none): a cookie that does not count answers 401, no token at all 400 (docs/api.md#cookie-mode). ${COOKIE_MODE}`,
      errors: [
        { code: 'AUTHENTICATION_ERROR', message: 'Invalid or expired refresh token' },
        NO_REFRESH_TOKEN,
        invalidBody('refreshToken: is required'),
        NOT_A_MEMBER,
      ],
    },
    logout: {
      summary: 'Revoke the current session',
      description:
        "Ends the session of the access token, or without one the session of the refresh token (the body's, or in cookie mode the `tenantry_refresh` cookie, under the same rule as POST /auth/refresh): its access and refresh tokens stop working at once, on every instance. With an access token no body is needed. With `X-Session-Mode: cookie` a successful answer also removes the cookie (docs/api.md#logout).",
      errors: [{ code: 'AUTHENTICATION_ERROR', message: 'Invalid or expired refresh token' }, NO_REFRESH_TOKEN],
    },
    reauthenticate: {
      summary: 'Prove the person behind this session again',
      description:
        'With the password, or for an account without one a two-factor code. The session then counts as freshly signed in for `AUTH_REAUTH_WINDOW_S` seconds (600 by default), as it does after its sign-in: steps that need a recent proof (adding a passkey) take no password meanwhile. A refresh of the session never counts. A wrong password or code answers 401 with `reauthenticationRequired` and counts toward the sign-in lockout (423 once locked); an account with neither a password nor two-factor answers 401: it signs in again instead (docs/api.md#re-authentication).',
      errors: [WRONG_PROOF, WRONG_CODE, CANNOT_PROVE, invalidBody('password: is required'), USER_NOT_FOUND, LOCKED],
    },
  }),
  ...routeDocs(['Users'], {
    changePassword: {
      summary: 'Change the password; every other session is signed out',
      description:
        'A wrong current password counts toward the sign-in lockout (423 once locked); the new one must meet the policy and differ from the current one (docs/api.md#password-change).',
      errors: [
        { code: 'AUTHENTICATION_ERROR', name: 'wrongPassword', message: 'Current password is incorrect' },
        {
          code: 'VALIDATION_ERROR',
          message: 'New password must differ from the current one',
          details: 'newPassword: must differ from currentPassword',
        },
        WEAK_PASSWORD,
        USER_NOT_FOUND,
        LOCKED,
      ],
    },
    requestEmailChange: {
      summary: 'Move the account to a new email address (confirmed by a mailed link)',
      description:
        'Mails `{APP_ORIGIN}/confirm-email?token=…` (single use, 24 hours) to `newEmail`; nothing changes until POST /auth/confirm-email-change. A wrong password answers 401 and counts toward the sign-in lockout; an address already registered 409; an account without a password 400 (docs/api.md#email-change).',
      errors: [
        WRONG_PASSWORD,
        TAKEN,
        {
          code: 'VALIDATION_ERROR',
          message: 'The new address is the current one',
          details: 'newEmail: is already the address of the account',
        },
        USER_NOT_FOUND,
        LOCKED,
      ],
    },
    confirmEmailChange: {
      summary: 'Confirm an email change with the token from the mail, signed in to the account that asked',
      description:
        'Needs the access token of the account that asked for the change: without one 401, with another account’s 403 (the token stays usable). The account moves to the address the link was mailed to, which counts as verified; a notice goes to the old address. Sessions stay; sign-in and reset links still pending are voided. An address registered meanwhile answers 409 (docs/api.md#email-change).',
      errors: [
        INVALID_TOKEN,
        {
          code: 'AUTHORIZATION_ERROR',
          message: 'This link is for another account',
          details: 'Sign in to the account that asked for the change, then confirm',
        },
        TAKEN,
      ],
    },
    deleteMe: {
      summary: 'Delete your account',
      description:
        'With the password, or for an account without one a two-factor code (a wrong one answers 401 and counts toward the lockout). Refused (409) while you own an organization that has other members. Otherwise, in one transaction: the organizations where you are alone are deleted (their subscriptions canceled first), you leave the others (`member.removed`, your API keys there revoked), your sessions, passkeys, social links and keys go, and your audit entries keep only your id. The address may register again. With `X-Session-Mode: cookie` the answer also removes the refresh cookie (docs/api.md#account-deletion).',
      errors: [
        WRONG_PASSWORD,
        INVALID_SECOND_FACTOR,
        {
          code: 'CONFLICT',
          message: 'You own an organization that has other members',
          details: 'Transfer the ownership of acme, or remove its other members, first',
        },
        invalidBody('password: is required'),
        USER_NOT_FOUND,
        LOCKED,
        'PAYMENT_PROVIDER_ERROR',
      ],
    },
  }),
  ...routeDocs(['Tokens'], {
    getSession: {
      summary: "The caller's session now: its active organization, role and permissions",
      description:
        'Read from the database on each call: a revoked session answers 401, and a membership lost or a role changed since the access token was signed shows at once (the token keeps its claims until its next refresh). `role` and `permissions` are those of the active organization, else null and []; `organizationId` is null once the membership has ended. `amr` says how the session signed in; `impersonatorId` is null. API keys get 403.',
    },
  }),
  ...routeDocs(['Two-factor'], {
    setUpTwoFactor: {
      summary: 'Start (or restart) two-factor setup: a new secret and 10 new backup codes',
      description:
        'Answers a pending secret, its `otpauthUrl` to show as a QR code (`qrCode` is the same URI under its former name, deprecated) and 10 new backup codes; the old backup codes stop working at once. A wrong password counts toward the sign-in lockout (423 once locked). While two-factor is enabled a current code is required, and the current secret stays in force until a code of the new one is verified (docs/api.md#two-factor-authentication).',
      errors: [
        WRONG_PASSWORD,
        {
          code: 'VALIDATION_ERROR',
          name: 'codeRequired',
          message: 'A current two-factor code is required',
          details: 'code: is required while two-factor authentication is enabled',
        },
        INVALID_CODE,
        USER_NOT_FOUND,
        LOCKED,
      ],
    },
    verifyTwoFactor: {
      summary: 'Confirm the pending secret with a code; enables two-factor',
      description: 'Takes a 6-digit code of the secret from the last setup. No pending setup, or a wrong code: 400.',
      errors: [
        INVALID_CODE,
        {
          code: 'VALIDATION_ERROR',
          name: 'noPendingSetup',
          message: 'No two-factor setup is pending',
          details: 'Call POST /auth/two-factor/setup first',
        },
      ],
    },
    disableTwoFactor: {
      summary: 'Turn two-factor off (password and a current code or backup code)',
      description:
        'A wrong password (401) or code (400) counts toward the sign-in lockout (423 once locked). When two-factor is not on: 400.',
      errors: [
        WRONG_PASSWORD,
        INVALID_CODE,
        { code: 'VALIDATION_ERROR', name: 'notEnabled', message: 'Two-factor authentication is not enabled' },
        USER_NOT_FOUND,
        LOCKED,
      ],
    },
  }),
  ...routeDocs(['Social sign-in'], {
    completeTwoFactorLogin: {
      summary: 'Finish a social sign-in that asked for a two-factor code',
      description: `The social sign-in callback (or the hand-off's exchange) answers 401 with \`requiresTwoFactor\` and a \`twoFactorToken\` when the account has two-factor on; send that short-lived, single-use token with a TOTP or backup code. A token takes at most 5 wrong codes, each counted by the account's lockout (docs/api.md#social-sign-in). ${COOKIE_MODE}`,
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid or expired token',
          details: 'twoFactorToken: is unknown, already used or expired',
        },
        { ...INVALID_SECOND_FACTOR, name: undefined },
        LOCKED,
      ],
    },
    startSocialSignIn: {
      summary: 'Start social sign-in (google or github): redirects to the provider',
      description:
        'For a browser, not a program: sets a short-lived state cookie and answers 302 to the provider’s consent page. With `redirectTo` (a page of the web app: its origin must be exactly APP_ORIGIN, else 400), the callback hands the sign-in back to that page with a one-time code instead of answering JSON. A provider that is not configured or is switched off answers 404 (docs/api.md#social-sign-in).',
      errors: [
        PROVIDER_UNAVAILABLE,
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid redirectTo',
          details: 'redirectTo: must be a URL on https://app.example.com',
        },
      ],
    },
    finishSocialSignIn: {
      summary: 'Provider callback: links or creates the account and answers as login does, or hands it to the web app',
      description:
        'The provider sends the browser here with `code` and `state`; the state must match the cookie set by the start. Only an email the provider marks verified creates or reaches an account. With two-factor on: 401 with `requiresTwoFactor` and a `twoFactorToken` for POST /auth/two-factor/login. A flow started with `redirectTo` answers 302 to that page instead: `#code=…` (for POST /auth/oauth/exchange) or `#error=CODE&error_description=…`, never JSON (docs/api.md#social-sign-in).',
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid OAuth state',
          details: 'state: does not match this browser’s sign-in request',
        },
        {
          code: 'AUTHENTICATION_ERROR',
          message: 'Sign-in with the provider failed',
          details: 'The provider refused the authorization code (invalid_grant)',
        },
        {
          ...TWO_FACTOR_REQUIRED,
          extra: { requiresTwoFactor: true, twoFactorToken: 'k3J9x0bQ2mV7tY1cR8wN4pL6zH5dF0aS' },
        },
        {
          code: 'EMAIL_NOT_VERIFIED',
          message: 'The provider has not verified this email address',
          details: 'Verify the address with the provider, then sign in again',
        },
        PROVIDER_UNAVAILABLE,
        LOCKED,
        { code: 'SERVICE_UNAVAILABLE', message: 'The sign-in provider is unreachable', details: 'Try again shortly' },
      ],
    },
    exchangeSocialSignInCode: {
      summary: 'Turn the one-time code of a social sign-in hand-off into the sign-in',
      description: `The code comes from the fragment of the page the callback redirected to (\`#code=…\`); single use, valid 60 seconds. Answers as login does: tokens and the user, or 401 with \`requiresTwoFactor\` and a \`twoFactorToken\` for POST /auth/two-factor/login. A used, expired or unknown code answers 400 and changes nothing. A flow started with \`codeChallenge\` needs its \`codeVerifier\` here; a wrong or missing verifier (or one sent for a flow without a challenge) answers 400 and spends the code (docs/api.md#social-sign-in). ${COOKIE_MODE}`,
      errors: [
        {
          code: 'VALIDATION_ERROR',
          message: 'Invalid or expired code',
          details: 'code: is unknown, already used or expired',
        },
        {
          code: 'VALIDATION_ERROR',
          name: 'verifier',
          message: 'Invalid code verifier',
          details: 'codeVerifier: does not match the codeChallenge this sign-in was started with',
        },
        {
          ...TWO_FACTOR_REQUIRED,
          extra: { requiresTwoFactor: true, twoFactorToken: 'k3J9x0bQ2mV7tY1cR8wN4pL6zH5dF0aS' },
        },
        {
          code: 'AUTHENTICATION_ERROR',
          name: 'inactive',
          message: 'Invalid email or password',
          details: 'The account was deactivated meanwhile',
        },
        LOCKED,
      ],
    },
  }),
  ...routeDocs(['Magic link'], {
    requestMagicLink: {
      summary: 'Email a sign-in link (200 whether or not the account exists)',
      description:
        'Mails `{APP_ORIGIN}/magic-link?token=…` (single use, valid 15 minutes) to an existing, active account; the answer and its timing are the same either way (docs/api.md#magic-links).',
    },
    verifyMagicLink: {
      summary: 'Sign in with the token of a magic link',
      description: `Answers as login does. With two-factor enabled and no \`twoFactorCode\`: 401 \`requiresTwoFactor\`, and the link stays usable for the request with the code. The first use on an address never verified verifies it and claims the account (docs/api.md#claiming-an-unverified-address). ${COOKIE_MODE}`,
      errors: [INVALID_TOKEN, TWO_FACTOR_REQUIRED, INVALID_SECOND_FACTOR, LOCKED],
    },
  }),
};
