import { Type } from 'typebox';
import { Body, Nullable, NullableTimestamp } from '../../http/schemas.js';

export const Email = Type.String({ format: 'email', maxLength: 254, description: 'Compared case-insensitively' });
// Length and character rules of the policy are checked in the service, so the error names the rule.
export const Password = Type.String({ minLength: 1, maxLength: 128 });
export const Token = Type.String({ minLength: 1, maxLength: 512 });

export const RegisterBody = Body({
  email: Email,
  password: Password,
  fullName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});
export const RegisterResponse = Type.Object({ userId: Type.String() });

export const LoginBody = Body({
  email: Email,
  password: Password,
  twoFactorCode: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
});

export const LoginUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  fullName: Nullable(Type.String()),
  emailVerified: NullableTimestamp,
  twoFactorEnabled: Type.Boolean(),
});

export const TokenPair = Type.Object({
  accessToken: Type.String(),
  refreshToken: Type.String(),
  expiresIn: Type.Integer({ description: 'Access token lifetime in seconds' }),
});

export const LoginResponse = Type.Object({ ...TokenPair.properties, user: LoginUser });

export const RefreshBody = Body({ refreshToken: Token });
export const TokenBody = Body({ token: Token });
export const EmailBody = Body({ email: Email });
export const ResetBody = Body({ token: Token, newPassword: Password });

export const TwoFactorCode = Type.String({ minLength: 6, maxLength: 32, description: 'A 6-digit TOTP code or a backup code (xxxxx-xxxxx)' });
export const PasswordBody = Body({ password: Password });
export const TwoFactorSetupBody = Body({
  password: Password,
  code: Type.Optional({ ...TwoFactorCode, description: 'A current TOTP or backup code: required while two-factor is enabled' }),
});
export const TwoFactorSetupResponse = Type.Object({
  secret: Type.String({ description: 'Base32 TOTP secret' }),
  qrCode: Type.String({ description: 'otpauth:// URI to render as a QR code' }),
  backupCodes: Type.Array(Type.String({ description: 'Shown once; each works once' }), { minItems: 10, maxItems: 10 }),
});
export const CodeBody = Body({ code: Type.String({ minLength: 6, maxLength: 6, pattern: '^[0-9]{6}$' }) });
export const DisableTwoFactorBody = Body({ password: Password, code: TwoFactorCode });
export const TwoFactorState = Type.Object({ twoFactorEnabled: Type.Boolean() });
export const TwoFactorLoginBody = Body({ twoFactorToken: Token, code: TwoFactorCode });
export const MagicLinkVerifyBody = Body({ token: Token, twoFactorCode: Type.Optional(TwoFactorCode) });
export const ProviderParams = Type.Object({ provider: Type.String({ maxLength: 32 }) });
export const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 512 })),
});
