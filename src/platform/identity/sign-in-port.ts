// What a feature other than auth needs of the sign-in sequence (docs/architecture.md: features never
// import one another). The auth feature implements it (modules/auth/sign-in-port.ts) and app.ts, the
// composition, hands it to the features that take it (passkeys). The sequence itself, its lockout
// and its answer stay in auth/sign-in.ts: one code path for every sign-in method.
import type { TSchema } from 'typebox';
import type { UserRow } from '../../db/tables/users.js';

export interface SignInClient {
  userAgent: string | null;
  ipAddress: string | null;
}

/** The answer of every sign-in (POST /auth/login's 200). */
export interface SignInAnswer {
  accessToken: string;
  refreshToken?: string;
  expiresIn: number;
  organizationId: string | null;
  user: { id: string; email: string; fullName: string | null; emailVerified: string | null; twoFactorEnabled: boolean };
}

export interface SignInPort {
  /** The named schema of that answer (LoginResponse), for a route's 200. */
  answerSchema: TSchema;
  /**
   * Ends a sign-in whose first factor proved `user` (active): 423 while locked, 403 when the address
   * must be verified first, 401 requiresTwoFactor + twoFactorToken when the account has two-factor and
   * the first factor was not also a second one (`secondFactorProven`); else a session starts and the
   * failures are cleared, as for any sign-in.
   */
  finish(user: UserRow, client: SignInClient, opts: { secondFactorProven: boolean }): Promise<SignInAnswer>;
}
