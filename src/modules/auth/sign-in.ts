// The one sign-in sequence, for every method (password, magic link, social, two-factor ticket):
// the lock → the first factor → a verified email → the second factor → the session; and the lockout
// rule it applies, which the other checks of a secret (two-factor setup and disable, password change)
// share.
//
// The lockout, exact under concurrency and without false locks (docs/security.md). Every check of a
// secret that an attacker could guess (a password, a two-factor code) first reserves a place on the
// account with one atomic UPDATE, before any hashing. Failures counted so far plus checks under way
// never exceed MAX_FAILED_CHECKS, however many requests race, on however many instances: that is what
// keeps a parallel brute force within the budget. A check that finds every remaining place taken by
// checks under way waits for them (platform/identity/check-waits.ts) and asks again, up to
// CHECK_WAIT_MS: if they were right, the places come back and it goes on; if they were wrong, the one
// that makes the 5th failure locks the account for LOCK_MS, and every waiting check answers 423. So
// 423 means locked, never merely busy; a wait that outlasts CHECK_WAIT_MS answers 503. An expired lock
// starts a new count.
//
// The outcomes of a reserved check:
// - wrong: `failCheck` turns the place into a failure (and locks at the 5th);
// - right, and a session starts: `passCheck` ends the check and clears the failures (but not a
//   lock that parallel failures set meanwhile);
// - right without a session, or not decided (an error, a missing second factor, an unverified
//   email): `releaseCheck` gives the place back.
// Each of them tells the waiting checks how many places are now free (all of them, when locked).
// A check's place is only held while it runs: a count of checks not renewed for CHECK_STALE_MS is
// taken as left behind by a process that died mid-check, so it can never lock an account for good.
import { sql } from 'drizzle-orm';
import type { UserRow } from '../../db/tables/users.js';
import type { Infra } from '../../infra.js';
import { AppError, authenticationError } from '../../lib/errors.js';
import { isForeignKeyViolation } from '../../db/client.js';
import type { AuthMethod } from '../../db/tables/auth.js';
import { notAMember, organizationClaims } from './active-organization.js';
import { newId } from '../../lib/ids.js';
import { reserveTokenCheck } from './email-tokens.js';
import { findUserByEmail, invalidToken } from './service.js';
import { consumeSecondFactor, invalidSecondFactor, twoFactorRequired } from './second-factor.js';

/** What the lockout budget's reservations read and write. */
type LockoutDeps = Pick<Infra, 'clock' | 'db' | 'checkWaits'>;

/** What every sign-in method uses to end its sign-in (a second factor checked, a session started). */
export type SignInDeps = Pick<
  Infra,
  'config' | 'logger' | 'clock' | 'db' | 'sessions' | 'tokens' | 'checkWaits' | 'permissions'
>;

const INVALID_CREDENTIALS = 'Invalid email or password';

export interface ClientMeta {
  userAgent: string | null;
  ipAddress: string | null;
}

export const MAX_FAILED_CHECKS = 5;
export const LOCK_MS = 15 * 60 * 1000;
const CHECK_STALE_MS = 60 * 1000;
/** How long a check waits for the checks under way to give places back before answering 503. */
export const CHECK_WAIT_MS = 10 * 1000;
// A waiting check is woken when a place frees (check-waits.ts); it also asks the database on its own
// every FIRST_POLL_MS, doubling up to MAX_POLL_MS, in case no word reaches it.
const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 250;

export interface Reservation {
  userId: string;
}

type Row = Record<string, unknown>;
const rowsOf = (result: unknown) => (result as { rows: Row[] }).rows;

export function lockedError(retryAfterS: number) {
  return new AppError(
    'ACCOUNT_LOCKED',
    'Account is temporarily locked after too many failed sign-in attempts',
    `Try again in ${retryAfterS} seconds`,
    {
      'Retry-After': String(retryAfterS),
    },
  );
}

/** 423 with the seconds left of a lock. */
export const lockedUntilError = (lockedUntil: Date, now: Date) =>
  lockedError(Math.max(1, Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000)));

const checksBusy = () =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    'Too many sign-in attempts in progress for this account',
    'Try again in a moment',
    { 'Retry-After': '1' },
  );

const staleBefore = (now: Date) => new Date(now.getTime() - CHECK_STALE_MS).toISOString();

/**
 * The places a new check could take now, read from the row an UPDATE … RETURNING just wrote: the
 * budget less the failures of an unexpired count and the checks under way (not stale); -1 when the
 * account is locked (every waiting check must hear it, to answer 423).
 */
const placesAfter = (nowIso: string, staleIso: string) => sql`
  case when locked_until > ${nowIso}::timestamptz then -1
    else greatest(0, ${MAX_FAILED_CHECKS}
      - (case when locked_until is null then failed_login_attempts else 0 end)
      - (case when checks_reserved_at is null or checks_reserved_at < ${staleIso}::timestamptz then 0 else checks_in_flight end))
  end as places`;

function wakeWaiting(deps: Pick<Infra, 'checkWaits'>, userId: string, result: unknown) {
  const [row] = rowsOf(result);
  if (!row) return;
  const places = Number(row.places);
  deps.checkWaits.freed(userId, places < 0 ? Infinity : places);
}

/** One attempt at a place: reserved, the end of the account's lock, or 'busy' (every place taken by checks under way). */
async function tryReserve(deps: Pick<Infra, 'clock' | 'db'>, userId: string): Promise<'reserved' | 'busy' | Date> {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const staleIso = staleBefore(now);
  // One UPDATE, whose SET and WHERE read the row version it writes (the latest, after any parallel
  // reservation): no two reservations can take the same place.
  const reserved = rowsOf(
    await deps.db.execute(sql`
      update users set
        checks_in_flight = case when checks_reserved_at is null or checks_reserved_at < ${staleIso}::timestamptz then 1 else checks_in_flight + 1 end,
        checks_reserved_at = ${nowIso}::timestamptz,
        failed_login_attempts = case when locked_until is null then failed_login_attempts else 0 end,
        locked_until = null
      where id = ${userId}
        and (locked_until is null or locked_until <= ${nowIso}::timestamptz)
        and (case when locked_until is null then failed_login_attempts else 0 end)
          + (case when checks_reserved_at is null or checks_reserved_at < ${staleIso}::timestamptz then 0 else checks_in_flight end)
          < ${MAX_FAILED_CHECKS}
      returning 1 as reserved`),
  );
  if (reserved.length === 1) return 'reserved';
  const [current] = rowsOf(await deps.db.execute(sql`select locked_until from users where id = ${userId}`));
  // The account is gone (deleted while signing in): nothing to check a secret against.
  if (!current) throw authenticationError();
  const lockedUntil = current.locked_until ? new Date(current.locked_until as string | Date) : null;
  return lockedUntil && lockedUntil > now ? lockedUntil : 'busy';
}

/**
 * Reserves one check of the account's secrets. While every remaining place is taken by checks under
 * way, waits for them to end (CHECK_WAIT_MS at most, then 503). Locked, now or once the checks it
 * waited for have failed: 423 with the rest of the lock in Retry-After.
 */
export async function reserveCheck(deps: LockoutDeps, userId: string): Promise<Reservation> {
  // In this process's line before the first question, so a place freed between the answer and the
  // wait is not missed, and a new check does not jump a crowd of checks already waiting.
  const ticket = deps.checkWaits.ticket(userId, MAX_FAILED_CHECKS);
  try {
    const deadline = deps.clock.now().getTime() + CHECK_WAIT_MS;
    let ask = ticket.front;
    for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
      if (ask) {
        const outcome = await tryReserve(deps, userId);
        if (outcome === 'reserved') return { userId };
        if (outcome instanceof Date) throw lockedUntilError(outcome, deps.clock.now());
      }
      if (deps.clock.now().getTime() >= deadline) throw checksBusy();
      // Jittered, so the checks of a burst do not all ask at the same instant.
      ask = await ticket.wait(poll * (0.5 + Math.random()));
    }
  } finally {
    ticket.leave();
  }
}

/** The reserved check failed: one more failure; the 5th locks the account. */
export async function failCheck(deps: LockoutDeps, reservation: Reservation): Promise<void> {
  const now = deps.clock.now();
  const lockUntil = new Date(now.getTime() + LOCK_MS).toISOString();
  const result = await deps.db.execute(sql`
    update users set
      checks_in_flight = greatest(checks_in_flight - 1, 0),
      failed_login_attempts = failed_login_attempts + 1,
      locked_until = case when failed_login_attempts + 1 >= ${MAX_FAILED_CHECKS} then ${lockUntil}::timestamptz else locked_until end
    where id = ${reservation.userId}
    returning ${placesAfter(now.toISOString(), staleBefore(now))}`);
  wakeWaiting(deps, reservation.userId, result);
}

/** The reserved check did not fail (or decided nothing): its place is given back. */
export async function releaseCheck(deps: LockoutDeps, reservation: Reservation): Promise<void> {
  const now = deps.clock.now();
  const result = await deps.db.execute(sql`
    update users set checks_in_flight = greatest(checks_in_flight - 1, 0) where id = ${reservation.userId}
    returning ${placesAfter(now.toISOString(), staleBefore(now))}`);
  wakeWaiting(deps, reservation.userId, result);
}

/**
 * A sign-in that passed every check and goes on to its session: the failures are cleared, but not a
 * lock that parallel failures set while its secret was being checked (it was refused before its
 * check if locked then), and its own reserved check, if it had one, is ended.
 */
export async function passCheck(deps: LockoutDeps, userId: string, reservation: Reservation | null): Promise<void> {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const reserved = reservation !== null;
  const result = await deps.db.execute(sql`
    update users set
      failed_login_attempts = case when locked_until is null or locked_until <= ${nowIso}::timestamptz then 0 else failed_login_attempts end,
      locked_until = case when locked_until <= ${nowIso}::timestamptz then null else locked_until end,
      checks_in_flight = case when ${reserved} then greatest(checks_in_flight - 1, 0) else checks_in_flight end
    where id = ${userId} and (failed_login_attempts <> 0 or locked_until is not null or ${reserved})
    returning ${placesAfter(nowIso, staleBefore(now))}`);
  wakeWaiting(deps, userId, result);
}

/**
 * Runs `check` under a reservation. Answers the reservation when the check passed (to start a
 * session with, or to release); false when it failed (counted). An error thrown by the check
 * releases the reservation: nothing was decided.
 */
export async function reservedCheck(
  deps: LockoutDeps,
  userId: string,
  check: () => Promise<boolean>,
): Promise<Reservation | false> {
  const reservation = await reserveCheck(deps, userId);
  let ok: boolean;
  try {
    ok = await check();
  } catch (err) {
    await releaseCheck(deps, reservation);
    throw err;
  }
  if (ok) return reservation;
  await failCheck(deps, reservation);
  return false;
}

// ---- the sequence -----------------------------------------------------------------------------

/** A fast refusal from the row already read; the reservation (reserveCheck) is what enforces the lock. */
export function assertNotLocked(deps: Pick<Infra, 'clock'>, user: UserRow) {
  const now = deps.clock.now();
  if (user.lockedUntil && user.lockedUntil > now) throw lockedUntilError(user.lockedUntil, now);
}

export function assertCanSignIn(deps: Pick<Infra, 'config'>, user: UserRow) {
  if (deps.config.auth.requireEmailVerification && !user.emailVerifiedAt) {
    throw new AppError(
      'EMAIL_NOT_VERIFIED',
      'Email address not verified',
      'Follow the link in the verification email, or ask for a new one',
    );
  }
}

export const loginUser = (user: UserRow) => ({
  id: user.id,
  email: user.email,
  fullName: user.fullName,
  emailVerified: user.emailVerifiedAt?.toISOString() ?? null,
  twoFactorEnabled: user.twoFactorEnabled,
});

/** How a session starts: how it signed in (the `amr` claim) and the organization it acts in, if any. */
export interface SessionStart {
  amr: AuthMethod[];
  organizationId?: string | null;
}

/**
 * The end of every sign-in method: the organization to make active checked (403 for a non-member:
 * nothing starts, the reserved check is released), failures cleared (and the sign-in's reserved
 * check ended, if it had one), a new session (under the cap), a token pair.
 */
export async function startSession(
  deps: Pick<Infra, 'clock' | 'db' | 'sessions' | 'tokens' | 'checkWaits' | 'permissions'>,
  user: UserRow,
  meta: ClientMeta,
  reservation: Reservation | null,
  start: SessionStart,
) {
  const organization = start.organizationId ? await organizationClaims(deps, start.organizationId, user.id) : null;
  if (start.organizationId && !organization) {
    if (reservation) await releaseCheck(deps, reservation);
    throw notAMember();
  }
  const sessionId = newId('ses', deps.clock.now().getTime());
  const refresh = deps.tokens.signRefresh(user.id, sessionId);
  // Signed first: a key that cannot be read (ENCRYPTION_KEY) fails the sign-in before anything is written.
  let accessToken;
  try {
    accessToken = await deps.tokens.signAccess({ user, sessionId, amr: start.amr, organization });
  } catch (err) {
    if (reservation) await releaseCheck(deps, reservation);
    throw err;
  }
  await passCheck(deps, user.id, reservation);
  try {
    await deps.sessions.start(
      sessionId,
      user.id,
      meta,
      refresh.jti,
      refresh.expiresAt,
      start.amr,
      organization?.id ?? null,
    );
  } catch (err) {
    // The organization was deleted since it was checked.
    if (isForeignKeyViolation(err)) throw notAMember();
    throw err;
  }
  return {
    accessToken,
    refreshToken: refresh.token,
    expiresIn: deps.tokens.accessTtlS,
    organizationId: organization?.id ?? null,
    user: loginUser(user),
  };
}

export async function login(
  deps: SignInDeps & Pick<Infra, 'passwords'>,
  input: { email: string; password: string; twoFactorCode?: string; organizationId?: string | null },
  meta: ClientMeta,
) {
  const user = await findUserByEmail(deps, input.email);
  if (!user || !user.passwordHash || !user.isActive) {
    await deps.passwords.verifyDummy(input.password);
    throw authenticationError(INVALID_CREDENTIALS);
  }
  assertNotLocked(deps, user);
  const passwordHash = user.passwordHash;
  // One reservation covers the password and the second factor: a right password with a wrong code
  // is one failure; a right password without a code, or an unverified email, none.
  let code = false;
  const reservation = await reservedCheck(deps, user.id, async () => {
    if (!(await deps.passwords.verify(passwordHash, input.password))) return false;
    if (!canSignIn(deps, user) || !needsSecondFactor(deps, user) || !input.twoFactorCode) return true;
    code = true;
    return consumeSecondFactor(deps, user.id, input.twoFactorCode);
  });
  if (!reservation) throw code ? invalidSecondFactor() : authenticationError(INVALID_CREDENTIALS);
  if (!canSignIn(deps, user) || (needsSecondFactor(deps, user) && !code)) {
    await releaseCheck(deps, reservation);
    assertCanSignIn(deps, user);
    throw twoFactorRequired();
  }
  return startSession(deps, user, meta, reservation, {
    amr: code ? ['pwd', 'otp'] : ['pwd'],
    organizationId: input.organizationId ?? null,
  });
}

export const needsSecondFactor = (deps: Pick<Infra, 'config'>, user: UserRow) =>
  user.twoFactorEnabled && deps.config.auth.methods.twoFactor;
const canSignIn = (deps: Pick<Infra, 'config'>, user: UserRow) =>
  !deps.config.auth.requireEmailVerification || Boolean(user.emailVerifiedAt);

/**
 * The two-factor step of a sign-in whose first factor was a mailed token (magic link, two-factor
 * ticket): one code check reserved on the token and on the account, so neither takes more than 5
 * wrong codes. Answers the account's reservation, for the session start.
 */
export async function checkSecondFactorOnToken(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'checkWaits'>,
  user: UserRow,
  token: string,
  purpose: 'magic_link' | 'two_factor_login',
  code: string,
) {
  if (!(await reserveTokenCheck(deps, token, purpose))) throw invalidToken();
  const reservation = await reservedCheck(deps, user.id, () => consumeSecondFactor(deps, user.id, code));
  if (!reservation) throw invalidSecondFactor();
  return reservation;
}
