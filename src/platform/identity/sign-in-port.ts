// What a feature other than auth needs of the sign-in sequence (docs/architecture.md: features never
// import one another). The auth feature implements it (modules/auth/sign-in-port.ts) and the
// composition's route table (src/routes.ts) hands it to the features that take it (passkeys). The sequence itself, its lockout
// and its answer stay in auth/sign-in.ts: one code path for every sign-in method; so does the
// re-authentication gate (auth/reauthentication.ts).
import type { TSchema } from 'typebox';
import type { UserRow } from '../../db/tables/users.js';
import type { UserActor } from './actor.js';

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

/** What re-proves the person behind a session: the password, or for an account without one a two-factor code. */
export interface Proof {
  password?: string;
  twoFactorCode?: string;
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
  /**
   * The gate of a step that must not follow from a stolen access token alone (a new passkey): passes
   * when `proof` is given and right, or, without one, when the caller's session signed in or
   * re-authenticated within AUTH_REAUTH_WINDOW_S (a refresh does not count). Otherwise 401 with
   * `reauthenticationRequired: true`; a wrong proof counts toward the lockout.
   */
  requireRecentAuthentication(actor: UserActor, proof: Proof): Promise<void>;
}
