import { Type } from 'typebox';
import { Body, named, Nullable, NullableTimestamp, ref, Token } from '../../http/schemas.js';

export const Email = Type.String({ format: 'email', maxLength: 254, description: 'Compared case-insensitively' });
// Length and character rules of the policy are checked in the service, so the error names the rule.
export const Password = Type.String({ minLength: 1, maxLength: 128 });
export { Token };

const ADA = 'ada@example.com';
const PASSWORD = 'Analytical-Engine-1';
const ACCESS =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1c2VySWQiOiJ1c3JfMDFqcTNibjl6czBhN2F3eTJ3MnZjNmJ0ZTEifQ.c2lnbmF0dXJl';
const REFRESH =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzZXNzaW9uSWQiOiJzZXNfMDFqcTNicDJhN3I1eHE5ZGRmMGtqdDhnMGMifQ.c2lnbmF0dXJl';
const USER_ID = 'usr_01jq3bn9zs0a7awy2w2vc6bte1';
const ORG_ID = 'org_01jq3bz8n6m4k2j0h8g6f4d2c0';

/** An organization to act in (docs/api.md#active-organization): a string makes it active, null clears it. */
const ActiveOrganization = Nullable(Type.String({ minLength: 1, maxLength: 64 }));

export const RegisterBody = named(
  'RegisterRequest',
  Body({
    email: Email,
    password: { ...Password, description: 'Checked against the password policy (docs/api.md#password-policy)' },
    fullName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  }),
  { examples: [{ email: ADA, password: PASSWORD, fullName: 'Ada Lovelace' }] },
);
export const RegisterResponse = named('RegisterResponse', Type.Object({ userId: Type.String() }), {
  examples: [{ userId: USER_ID }],
});

export const LoginBody = named(
  'LoginRequest',
  Body({
    email: Email,
    password: Password,
    twoFactorCode: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 32,
        description: 'A TOTP code or an unused backup code, when two-factor is enabled',
      }),
    ),
    organizationId: Type.Optional({
      ...ActiveOrganization,
      description:
        'The organization the new session acts in (its tokens carry org_id, org_role, org_permissions); 403 when the account is not a member of it',
    }),
  }),
  {
    examples: [
      { email: ADA, password: PASSWORD },
      { email: ADA, password: PASSWORD, organizationId: ORG_ID },
    ],
  },
);

export const LoginUser = named(
  'SignedInUser',
  Type.Object({
    id: Type.String(),
    email: Type.String(),
    fullName: Nullable(Type.String()),
    emailVerified: NullableTimestamp,
    twoFactorEnabled: Type.Boolean(),
  }),
  { description: 'The person a sign-in answers for' },
);

const tokenFields = {
  accessToken: Type.String({ description: 'Send as Authorization: Bearer <accessToken>; valid 15 minutes' }),
  refreshToken: Type.Optional(
    Type.String({
      description:
        'Single use: POST /auth/refresh answers a new pair; valid 7 days. Absent in cookie mode (`X-Session-Mode: cookie`): it is in the HttpOnly `tenantry_refresh` cookie (docs/api.md#cookie-mode)',
    }),
  ),
  expiresIn: Type.Integer({ description: 'Access token lifetime in seconds' }),
  organizationId: Nullable(
    Type.String({ description: "The session's active organization (docs/api.md#active-organization), or null" }),
  ),
};

export const TokenPair = named('TokenPair', Type.Object(tokenFields), {
  examples: [{ accessToken: ACCESS, refreshToken: REFRESH, expiresIn: 900, organizationId: ORG_ID }],
});

export const LoginResponse = named('LoginResponse', Type.Object({ ...tokenFields, user: ref(LoginUser) }), {
  description: 'What every sign-in method answers (docs/api.md#sign-in-with-email-and-password)',
  examples: [
    {
      accessToken: ACCESS,
      refreshToken: REFRESH,
      expiresIn: 900,
      organizationId: null,
      user: {
        id: USER_ID,
        email: ADA,
        fullName: 'Ada Lovelace',
        emailVerified: '2026-03-01T12:00:00.000Z',
        twoFactorEnabled: false,
      },
    },
  ],
});

const refreshTokenField = Type.Optional({
  ...Token,
  description:
    'Left out in cookie mode (`X-Session-Mode: cookie`): the `tenantry_refresh` cookie is used instead (docs/api.md#cookie-mode)',
});
export const RefreshBody = named(
  'RefreshRequest',
  Body({
    refreshToken: refreshTokenField,
    organizationId: Type.Optional({
      ...ActiveOrganization,
      description:
        "A string makes that organization the session's active one (403 when the account is not a member: the refresh token stays unspent), null clears it; left out, the session's is kept (cleared if the membership has ended)",
    }),
  }),
  { examples: [{ refreshToken: REFRESH }, {}, { refreshToken: REFRESH, organizationId: ORG_ID }] },
);
export const LogoutBody = named('LogoutRequest', Body({ refreshToken: refreshTokenField }), {
  description: 'Needed only without an access token: the refresh token of the session to end, or none in cookie mode',
  examples: [{}, { refreshToken: REFRESH }],
});
export const TokenBody = named(
  'TokenRequest',
  Body({ token: { ...Token, description: 'The token of the mailed link' } }),
  {
    description: 'A single-use token from a mailed link (docs/api.md#mailed-links)',
  },
);
export const EmailBody = named('EmailRequest', Body({ email: Email }), { examples: [{ email: ADA }] });
export const ResetBody = named('PasswordResetRequest', Body({ token: Token, newPassword: Password }));

export const TwoFactorCode = Type.String({
  minLength: 6,
  maxLength: 32,
  description: 'A 6-digit TOTP code or a backup code (8 hexadecimal characters, any case)',
});
export const TwoFactorSetupBody = named(
  'TwoFactorSetupRequest',
  Body({
    password: Password,
    code: Type.Optional({
      ...TwoFactorCode,
      description: 'A current TOTP or backup code: required while two-factor is enabled',
    }),
  }),
  { examples: [{ password: PASSWORD }] },
);
const OTPAUTH =
  'otpauth://totp/Tenantry:ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Tenantry&algorithm=SHA1&digits=6&period=30';
export const TwoFactorSetupResponse = named(
  'TwoFactorSetupResponse',
  Type.Object({
    secret: Type.String({ description: 'Base32 TOTP secret' }),
    otpauthUrl: Type.String({ description: 'otpauth:// URI to render as a QR code (issuer Tenantry)' }),
    qrCode: Type.String({
      description: 'The same otpauth:// URI as otpauthUrl, under its former name: use otpauthUrl',
      deprecated: true,
    }),
    backupCodes: Type.Array(
      Type.String({
        description: '8 lowercase hexadecimal characters, accepted in any case; shown once, each works once',
        pattern: '^[0-9a-f]{8}$',
      }),
      { minItems: 10, maxItems: 10 },
    ),
  }),
  {
    examples: [
      {
        secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
        otpauthUrl: OTPAUTH,
        qrCode: OTPAUTH,
        backupCodes: [
          '3f9a0c1e',
          'b72d4e95',
          '0c8e61fa',
          'e4a19b3d',
          '5d06c2b8',
          '9a3ef710',
          '71bc58d2',
          'c6e2049f',
          '28fd3a6b',
          'f0471e5c',
        ],
      },
    ],
  },
);
export const CodeBody = named(
  'TwoFactorVerifyRequest',
  Body({ code: Type.String({ minLength: 6, maxLength: 6, pattern: '^[0-9]{6}$' }) }),
  { examples: [{ code: '492039' }] },
);
export const DisableTwoFactorBody = named(
  'TwoFactorDisableRequest',
  Body({ password: Password, code: TwoFactorCode }),
  { examples: [{ password: PASSWORD, code: '492039' }] },
);
export const TwoFactorState = named('TwoFactorState', Type.Object({ twoFactorEnabled: Type.Boolean() }), {
  examples: [{ twoFactorEnabled: true }],
});
export const TwoFactorLoginBody = named('TwoFactorLoginRequest', Body({ twoFactorToken: Token, code: TwoFactorCode }));
export const MagicLinkVerifyBody = named(
  'MagicLinkVerifyRequest',
  Body({ token: Token, twoFactorCode: Type.Optional(TwoFactorCode) }),
);
export const StartSocialQuery = Type.Object({
  redirectTo: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        'A page of the web app (its origin exactly APP_ORIGIN) that the callback hands the sign-in to, with #code=… or #error=…',
      examples: ['https://app.example.com/sign-in/callback'],
    }),
  ),
  codeChallenge: Type.Optional(
    Type.String({
      minLength: 43,
      maxLength: 43,
      pattern: '^[A-Za-z0-9_-]{43}$',
      description:
        'With redirectTo only: the base64url SHA-256 (no padding) of a random codeVerifier the page keeps. The exchange of the hand-off’s code then needs that verifier, so a code can only sign in the browser that started the flow (docs/api.md#social-sign-in).',
      examples: ['E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'],
    }),
  ),
});
export const HandoffExchangeBody = named(
  'SocialSignInExchangeRequest',
  Body({
    code: { ...Token, description: 'The one-time code from the hand-off’s #code=…' },
    codeVerifier: Type.Optional(
      Type.String({
        minLength: 43,
        maxLength: 128,
        pattern: '^[A-Za-z0-9._~-]{43,128}$',
        description: 'The verifier of the codeChallenge the flow was started with: required then, refused otherwise.',
      }),
    ),
  }),
  {
    examples: [
      {
        code: 'pX7vQ2mN9kR4tY8wB3cF6hJ1sL5dG0aZeU7iO2yT4qW',
        codeVerifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      },
    ],
  },
);
export const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 512 })),
});

export const ChangePasswordBody = named(
  'ChangePasswordRequest',
  Body({
    currentPassword: Type.String({ minLength: 8, maxLength: 128 }),
    newPassword: Type.String({ minLength: 8, maxLength: 128 }),
  }),
  { examples: [{ currentPassword: PASSWORD, newPassword: 'Difference-Engine-2' }] },
);

export const AuthMethod = Type.Enum(['pwd', 'otp', 'webauthn', 'magic_link', 'oauth', 'sso']);

export const SessionNow = named(
  'SessionNow',
  Type.Object({
    userId: Type.String(),
    sessionId: Type.String(),
    organizationId: Nullable(
      Type.String({ description: 'The active organization, or null (none, or the membership has ended)' }),
    ),
    role: Nullable(Type.String({ description: "The caller's role key in the active organization" })),
    permissions: Type.Array(Type.String(), { description: 'What that role grants: built-in and product permissions' }),
    amr: Type.Array(AuthMethod, {
      description: 'How the session signed in: its first factor, then `otp` when a second factor was used',
    }),
    impersonatorId: Nullable(Type.String({ description: 'The platform administrator acting as the user, or null' })),
    expiresAt: Type.String({ format: 'date-time', description: 'When the session ends unless refreshed' }),
  }),
  {
    description: "The caller's session as it stands now (docs/api.md#the-session-now)",
    examples: [
      {
        userId: USER_ID,
        sessionId: 'ses_01jq3bp2a7r5xq9ddf0kjt8g0c',
        organizationId: ORG_ID,
        role: 'admin',
        permissions: ['org:read', 'members:read', 'projects:read', 'projects:write'],
        amr: ['pwd', 'otp'],
        impersonatorId: null,
        expiresAt: '2026-03-08T12:00:00.000Z',
      },
    ],
  },
);
