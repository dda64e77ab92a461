// The lockout, exact under concurrency (docs/security.md). Every check of a secret that an attacker
// could guess (a password, a two-factor code) first reserves a place on the account with one atomic
// UPDATE, before any hashing. Failures counted so far plus checks under way never exceed
// MAX_FAILED_CHECKS, however many requests race: a request past that answers 423 without checking
// anything, even with the right password. The check that makes the 5th failure locks the account
// for LOCK_MS; an expired lock starts a new count.
//
// The outcomes of a reserved check:
// - wrong: `failCheck` turns the place into a failure (and locks at the 5th);
// - right, and a session starts: tenantry_start_session ends the check and clears the failures (but
//   not a lock that parallel failures set meanwhile);
// - right without a session, or not decided (an error, a missing second factor, an unverified
//   email): `releaseCheck` gives the place back.
// A check's place is only held while it runs: a count of checks not renewed for CHECK_STALE_MS is
// taken as left behind by a process that died mid-check, so it can never lock an account for good.
import { sql } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';

export const MAX_FAILED_CHECKS = 5;
export const LOCK_MS = 15 * 60 * 1000;
const CHECK_STALE_MS = 60 * 1000;

export interface Reservation {
  userId: string;
}

type Row = Record<string, unknown>;
const rowsOf = (result: unknown) => (result as { rows: Row[] }).rows;

export function lockedError(retryAfterS: number) {
  return new AppError(423, 'ACCOUNT_LOCKED', 'Account is temporarily locked after too many failed sign-in attempts', `Try again in ${retryAfterS} seconds`, {
    'Retry-After': String(retryAfterS),
  });
}

/** 423 with the seconds left of a lock. */
export const lockedUntilError = (lockedUntil: Date, now: Date) => lockedError(Math.max(1, Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000)));

/**
 * Reserves one check of the account's secrets, or answers 423: locked (Retry-After: the rest of the
 * lock), or every place taken by checks under way (Retry-After: 1, they end within a second).
 */
export async function reserveCheck(deps: Deps, userId: string): Promise<Reservation> {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const staleIso = new Date(now.getTime() - CHECK_STALE_MS).toISOString();
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
  if (reserved.length === 1) return { userId };
  const [current] = rowsOf(await deps.db.execute(sql`select locked_until from users where id = ${userId}`));
  const lockedUntil = current?.locked_until ? new Date(current.locked_until as string | Date) : null;
  throw lockedUntil && lockedUntil > now ? lockedUntilError(lockedUntil, now) : lockedError(1);
}

/** The reserved check failed: one more failure; the 5th locks the account. */
export async function failCheck(deps: Deps, reservation: Reservation): Promise<void> {
  const lockUntil = new Date(deps.clock.now().getTime() + LOCK_MS).toISOString();
  await deps.db.execute(sql`
    update users set
      checks_in_flight = greatest(checks_in_flight - 1, 0),
      failed_login_attempts = failed_login_attempts + 1,
      locked_until = case when failed_login_attempts + 1 >= ${MAX_FAILED_CHECKS} then ${lockUntil}::timestamptz else locked_until end
    where id = ${reservation.userId}`);
}

/** The reserved check did not fail (or decided nothing): its place is given back. */
export async function releaseCheck(deps: Deps, reservation: Reservation): Promise<void> {
  await deps.db.execute(sql`update users set checks_in_flight = greatest(checks_in_flight - 1, 0) where id = ${reservation.userId}`);
}

/**
 * Runs `check` under a reservation. Answers the reservation when the check passed (to start a
 * session with, or to release); false when it failed (counted). An error thrown by the check
 * releases the reservation: nothing was decided.
 */
export async function reservedCheck(deps: Deps, userId: string, check: () => Promise<boolean>): Promise<Reservation | false> {
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
