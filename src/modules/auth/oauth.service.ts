// Social sign-in with Google and GitHub: OAuth 2.0 authorization code flow with PKCE and state, through
// arctic's OAuth2Client (endpoints from configuration, so a local OAuth server can stand in).
// The callback links by provider identity, else by the provider's *verified* email, else creates the
// account, and then answers as login does (lockout, email verification, two-factor step, session
// cap), or, for a flow started with redirectTo, hands the sign-in to the web app (oauth-handoff.ts).
// An email the provider does not mark verified proves nothing: it neither creates nor links.
import { and, eq, sql } from 'drizzle-orm';
import Format from 'typebox/format';
import {
  ArcticFetchError,
  CodeChallengeMethod,
  generateCodeVerifier,
  generateState,
  OAuth2Client,
  OAuth2RequestError,
} from 'arctic';
import type { OAuthProviderConfig } from '../../config.js';
import type { Infra } from '../../infra.js';
import { isUniqueViolation } from '../../db/client.js';
import { AppError, authenticationError, notFound, validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { sha256 } from '../../lib/secrets.js';
import { defaultPreferences, users, type UserRow } from '../../db/tables/users.js';
import { claimUnverifiedAccount } from './claim.js';
import { findUserByEmail } from './service.js';
import {
  assertCanSignIn,
  assertNotLocked,
  type ClientMeta,
  needsSecondFactor,
  startSession,
  type SignInDeps,
} from './sign-in.js';
import { oauthAccounts, oauthStates } from '../../db/tables/auth.js';
import { handoffTarget, issueHandoffCode, takeHandoffCode, invalidHandoffCode } from './oauth-handoff.js';
import { startTwoFactorChallenge } from './two-factor-login.service.js';
import { transaction } from '../../db/transaction.js';

/** What finding, linking or creating the account of a provider identity uses. */
type AccountLinkDeps = Pick<Infra, 'clock' | 'db' | 'sessions' | 'userCache'>;

/** What ending a provider round trip in an account uses. */
type OAuthAccountDeps = Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'sessions' | 'userCache'>;

/** What a social sign-in that starts a session uses. */
type SocialSignInDeps = Pick<Infra, 'config' | 'clock' | 'db' | 'sessions' | 'tokens' | 'checkWaits' | 'permissions'>;

export type Provider = 'google' | 'github';
export const PROVIDERS: Provider[] = ['google', 'github'];
export const STATE_COOKIE = 'tenantry_oauth_state';
const STATE_TTL_MS = 10 * 60 * 1000;
const SCOPES: Record<Provider, string[]> = {
  google: ['openid', 'email', 'profile'],
  github: ['read:user', 'user:email'],
};

interface Profile {
  id: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  avatarUrl: string | null;
}

function providerConfig(deps: Pick<Infra, 'config'>, provider: string): OAuthProviderConfig {
  const cfg = PROVIDERS.includes(provider as Provider) ? deps.config.auth.oauth[provider as Provider] : null;
  if (!cfg) throw notFound('Route not found', `Sign-in with ${provider} is not available`);
  return cfg;
}

export const redirectUri = (deps: Pick<Infra, 'config'>, provider: string) =>
  `${deps.config.publicApiUrl}/api/v1/auth/oauth/${provider}/callback`;

const client = (deps: Pick<Infra, 'config'>, provider: string, cfg: OAuthProviderConfig) =>
  new OAuth2Client(cfg.clientId, cfg.clientSecret, redirectUri(deps, provider));

/** A new flow: its state and PKCE verifier stored (with the hand-off's page, if any), the provider's URL. */
export async function startOAuth(
  deps: Pick<Infra, 'config' | 'clock' | 'db'>,
  provider: string,
  redirectTo?: string,
  codeChallenge?: string,
): Promise<{ url: string; state: string }> {
  const cfg = providerConfig(deps, provider);
  const target = redirectTo === undefined ? null : handoffTarget(deps.config.appOrigin, redirectTo);
  if (codeChallenge !== undefined && target === null)
    throw validationError(
      'Invalid codeChallenge',
      'codeChallenge: only with redirectTo (it binds the hand-off’s code)',
    );
  const state = generateState();
  const verifier = generateCodeVerifier();
  const now = deps.clock.now();
  await deps.db.delete(oauthStates).where(sql`${oauthStates.expiresAt} < ${now.toISOString()}::timestamptz`);
  await deps.db.insert(oauthStates).values({
    stateHash: sha256(state),
    provider,
    codeVerifier: verifier,
    redirectTo: target,
    handoffChallenge: codeChallenge ?? null,
    expiresAt: new Date(now.getTime() + STATE_TTL_MS),
    createdAt: now,
  });
  const url = client(deps, provider, cfg).createAuthorizationURLWithPKCE(
    cfg.authorizationUrl,
    state,
    CodeChallengeMethod.S256,
    verifier,
    SCOPES[provider as Provider],
  );
  return { url: url.toString(), state };
}

async function fetchJson(url: string, accessToken: string): Promise<unknown> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'Tenantry' },
  });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.json();
}

async function fetchProfile(provider: Provider, cfg: OAuthProviderConfig, accessToken: string): Promise<Profile> {
  if (provider === 'google') {
    const u = (await fetchJson(cfg.userInfoUrl, accessToken)) as Record<string, unknown>;
    return {
      id: String(u.sub),
      email: typeof u.email === 'string' ? u.email : null,
      emailVerified: u.email_verified === true || u.email_verified === 'true',
      name: typeof u.name === 'string' ? u.name : null,
      avatarUrl: typeof u.picture === 'string' ? u.picture : null,
    };
  }
  const u = (await fetchJson(`${cfg.userInfoUrl}/user`, accessToken)) as Record<string, unknown>;
  const listed = await fetchJson(`${cfg.userInfoUrl}/user/emails`, accessToken);
  const emails = (Array.isArray(listed) ? listed : []) as Array<{
    email?: unknown;
    primary?: unknown;
    verified?: unknown;
  }>;
  // The primary address if GitHub verified it, else another verified one; never an unverified one.
  const verified = emails.filter((e) => e.verified === true && typeof e.email === 'string');
  const chosen = verified.find((e) => e.primary === true) ?? verified[0];
  const primary = emails.find((e) => e.primary === true && typeof e.email === 'string');
  return {
    id: String(u.id),
    email: ((chosen ?? primary)?.email as string | undefined) ?? null,
    emailVerified: Boolean(chosen),
    name: typeof u.name === 'string' && u.name ? u.name.slice(0, 100) : null,
    avatarUrl: typeof u.avatar_url === 'string' ? u.avatar_url : null,
  };
}

/**
 * The provider's email checked as a request body's is (the same format check, at most 254
 * characters, ASCII only: `\u212A`, the Kelvin sign, lowercases to `k` and must not reach the
 * account spelled with k), then normalized; null when it is not an address this service accepts.
 */
function providerEmail(raw: string): string | null {
  const email = raw.trim();
  return email.length <= 254 && Format.Test('email', email) ? email.toLowerCase() : null;
}

/** The account for a provider identity: linked before, or linked now by verified email, or new. */
async function resolveAccount(
  deps: AccountLinkDeps,
  provider: Provider,
  profile: Profile,
): Promise<{ user: UserRow; created: boolean }> {
  const [linked] = await deps.db
    .select({ user: users })
    .from(oauthAccounts)
    .innerJoin(users, eq(users.id, oauthAccounts.userId))
    .where(and(eq(oauthAccounts.provider, provider), eq(oauthAccounts.providerAccountId, profile.id)));
  if (linked) return { user: linked.user, created: false };
  if (!profile.email)
    throw validationError(
      'The provider did not share an email address',
      'Allow access to your email address and try again',
    );
  const email = providerEmail(profile.email);
  if (!email)
    throw validationError(
      'The provider’s email address is not valid',
      'Sign in another way, or use another address at the provider',
    );
  if (!profile.emailVerified) {
    // Whoever controls this provider account has not proven the address: nothing is created or linked.
    throw new AppError(
      'EMAIL_NOT_VERIFIED',
      'The provider has not verified this email address',
      'Verify the address with the provider, then sign in again',
    );
  }
  const existing = await findUserByEmail(deps, email);
  try {
    return existing
      ? { user: await linkExisting(deps, existing.id, provider, profile.id, email), created: false }
      : await createAccount(deps, provider, profile, email);
  } catch (err) {
    // A parallel callback for the same identity or email won the race: use what it made.
    if (isUniqueViolation(err)) return resolveAccount(deps, provider, profile);
    throw err;
  }
}

/**
 * Links a provider identity whose verified email is the account's. On an account whose email was
 * never verified the provider's proof of the address claims it first (claim.ts).
 */
async function linkExisting(
  deps: AccountLinkDeps,
  userId: string,
  provider: Provider,
  providerAccountId: string,
  email: string,
): Promise<UserRow> {
  const now = deps.clock.now();
  return transaction(deps.db, async (tx, afterCommit) => {
    const claimed = await claimUnverifiedAccount(deps, tx, userId, email, null);
    afterCommit(() => deps.userCache.changed(userId));
    await tx
      .insert(oauthAccounts)
      .values({ id: newId('tok', now.getTime()), userId, provider, providerAccountId, email, createdAt: now });
    const [user] = claimed ? [claimed] : await tx.select().from(users).where(eq(users.id, userId));
    return user!;
  });
}

async function createAccount(
  deps: Pick<Infra, 'clock' | 'db'>,
  provider: Provider,
  profile: Profile,
  email: string,
): Promise<{ user: UserRow; created: boolean }> {
  const now = deps.clock.now();
  const result = await transaction(deps.db, async (tx) => {
    const [u] = await tx
      .insert(users)
      .values({
        id: newId('usr', now.getTime()),
        email,
        emailVerifiedAt: now,
        passwordHash: null,
        fullName: profile.name,
        avatarUrl: profile.avatarUrl,
        preferences: defaultPreferences,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await tx.insert(oauthAccounts).values({
      id: newId('tok', now.getTime()),
      userId: u!.id,
      provider,
      providerAccountId: profile.id,
      email,
      createdAt: now,
    });
    return u!;
  });
  return { user: result, created: true };
}

/** The flow a callback ends: the one this browser started (its state cookie's), taken once. */
export interface Flow {
  provider: Provider;
  cfg: OAuthProviderConfig;
  cookieState: string | undefined;
  pending: { codeVerifier: string; expiresAt: Date } | null;
  /** Where the sign-in is handed to the web app; null: the callback answers JSON. */
  redirectTo: string | null;
  /** The web app's codeChallenge, which its hand-off code is bound to; null if none was given. */
  handoffChallenge: string | null;
}

/**
 * Takes the flow of the browser's state cookie, whatever the callback then finds wrong: the cookie is
 * cleared by the answer anyway, and its page (redirectTo) is where the hand-off reports the failure.
 */
export async function takeFlow(
  deps: Pick<Infra, 'config' | 'db'>,
  provider: string,
  cookieState: string | undefined,
): Promise<Flow> {
  const cfg = providerConfig(deps, provider);
  const [row] = cookieState
    ? await deps.db
        .delete(oauthStates)
        .where(and(eq(oauthStates.stateHash, sha256(cookieState)), eq(oauthStates.provider, provider)))
        .returning({
          codeVerifier: oauthStates.codeVerifier,
          redirectTo: oauthStates.redirectTo,
          handoffChallenge: oauthStates.handoffChallenge,
          expiresAt: oauthStates.expiresAt,
        })
    : [];
  return {
    provider: provider as Provider,
    cfg,
    cookieState,
    pending: row ? { codeVerifier: row.codeVerifier, expiresAt: row.expiresAt } : null,
    redirectTo: row?.redirectTo ?? null,
    handoffChallenge: row?.handoffChallenge ?? null,
  };
}

/** The callback's checks, the code exchange with the provider and the account it reaches. */
async function authenticate(
  deps: OAuthAccountDeps,
  flow: Flow,
  input: { code?: string; state?: string; error?: string },
): Promise<UserRow> {
  // A state that does not hold: the JSON callback's 400; the hand-off reports that no one was signed in.
  const badState = (details: string) =>
    flow.redirectTo
      ? authenticationError('Invalid OAuth state', details)
      : validationError('Invalid OAuth state', details);
  if (input.error)
    throw authenticationError(
      'Sign-in was not authorized by the provider',
      `The provider answered: ${input.error.slice(0, 100)}`,
    );
  if (!input.code || !input.state) throw validationError('Invalid request', 'code and state are required');
  // The state must come back to the browser that started the flow (login CSRF) and be one we issued.
  if (!flow.cookieState || flow.cookieState !== input.state)
    throw badState('state: does not match this browser’s sign-in request');
  if (!flow.pending || flow.pending.expiresAt.getTime() <= deps.clock.now().getTime())
    throw badState('state: is unknown, already used or expired');

  let profile: Profile;
  try {
    const tokens = await client(deps, flow.provider, flow.cfg).validateAuthorizationCode(
      flow.cfg.tokenUrl,
      input.code,
      flow.pending.codeVerifier,
    );
    profile = await fetchProfile(flow.provider, flow.cfg, tokens.accessToken());
  } catch (err) {
    if (err instanceof OAuth2RequestError)
      throw authenticationError(
        'Sign-in with the provider failed',
        `The provider refused the authorization code (${err.code})`,
      );
    if (err instanceof ArcticFetchError)
      throw new AppError('SERVICE_UNAVAILABLE', 'The sign-in provider is unreachable', 'Try again shortly', {
        'Retry-After': '5',
      });
    deps.logger.warn({ err: { message: (err as Error).message }, provider: flow.provider }, 'oauth exchange failed');
    throw authenticationError('Sign-in with the provider failed');
  }
  return (await resolveAccount(deps, flow.provider, profile)).user;
}

/** What a social sign-in requires of the account it reached, as login does. */
function assertSocialSignIn(deps: Pick<Infra, 'config' | 'clock'>, user: UserRow) {
  if (!user.isActive) throw authenticationError('Invalid email or password');
  assertNotLocked(deps, user);
  assertCanSignIn(deps, user);
}

/** The end of a social sign-in: the two-factor step (401 with a ticket), else a session. */
async function completeSocialSignIn(deps: SocialSignInDeps, user: UserRow, meta: ClientMeta) {
  assertSocialSignIn(deps, user);
  if (needsSecondFactor(deps, user)) throw await startTwoFactorChallenge(deps, user, 'oauth');
  return startSession(deps, user, meta, null, { amr: ['oauth'] });
}

/** The JSON callback: answers as login does. */
export async function finishOAuth(
  deps: SignInDeps & Pick<Infra, 'userCache'>,
  flow: Flow,
  input: { code?: string; state?: string; error?: string },
  meta: ClientMeta,
) {
  return completeSocialSignIn(deps, await authenticate(deps, flow, input), meta);
}

/** The hand-off callback: the checks of a sign-in, then a one-time code for the account. */
export async function finishOAuthHandoff(
  deps: OAuthAccountDeps,
  flow: Flow,
  input: { code?: string; state?: string; error?: string },
): Promise<string> {
  const user = await authenticate(deps, flow, input);
  assertSocialSignIn(deps, user);
  return issueHandoffCode(deps, user.id, flow.handoffChallenge);
}

/** POST /auth/oauth/exchange: the code spent, the sign-in answers as login does, checked again now. */
export async function exchangeHandoff(
  deps: SocialSignInDeps,
  body: { code: string; codeVerifier?: string },
  meta: ClientMeta,
) {
  const userId = await takeHandoffCode(deps, body.code, body.codeVerifier);
  const [user] = await deps.db.select().from(users).where(eq(users.id, userId));
  if (!user) throw invalidHandoffCode();
  return completeSocialSignIn(deps, user, meta);
}
