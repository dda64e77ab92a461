// Passkeys (docs/api.md#passkeys): registering one for the signed-in user, managing them, and signing
// in with one. The ceremonies are @simplewebauthn/server's; the relying party is APP_ORIGIN (its
// host is the rp id, the origin the only one accepted). A challenge is single use and lives 5
// minutes on the app clock: its first verify spends it, whatever the outcome.
import { createHmac } from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { and, asc, desc, eq, gt, inArray, isNull, lte, sql } from 'drizzle-orm';
import { isUniqueViolation } from '../../db/client.js';
import { passkeys, webauthnChallenges, type PasskeyRow } from '../../db/tables/passkeys.js';
import { users } from '../../db/tables/users.js';
import type { Infra } from '../../infra.js';
import { authenticationError, conflict, notFound, validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { sendLater } from '../../providers/mail/mailer.js';
import { passkeyAddedMail } from '../../providers/mail/templates.js';
import type { UserActor } from '../../platform/identity/actor.js';
import type { SignInClient, SignInPort } from '../../platform/identity/sign-in-port.js';

/** What a passkey sign-in ceremony uses. */
type PasskeySignInDeps = Pick<Infra, 'config' | 'clock' | 'db'>;

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
const RP_NAME = 'Tenantry';

const relyingParty = (deps: Pick<Infra, 'config'>) => ({
  origin: deps.config.appOrigin,
  rpId: new URL(deps.config.appOrigin).hostname,
});

/** What a registration or an authentication response must match: our challenge, origin and rp id (user verification is not required). */
function expected(deps: Pick<Infra, 'config'>, challenge: string) {
  const { origin, rpId } = relyingParty(deps);
  return { expectedChallenge: challenge, expectedOrigin: origin, expectedRPID: rpId, requireUserVerification: false };
}

export const presentPasskey = (p: PasskeyRow) => ({
  id: p.id,
  name: p.name,
  createdAt: p.createdAt.toISOString(),
  lastUsedAt: p.lastUsedAt?.toISOString() ?? null,
});

const transportsOf = (p: PasskeyRow) => p.transports as AuthenticatorTransport[];
const passkeysOf = (deps: Pick<Infra, 'db'>, userId: string) =>
  deps.db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id));

// Each new challenge also deletes a few expired ones: the table stays the size of the last 5 minutes'
// ceremonies without a job of its own.
const SWEEP = 20;

async function saveChallenge(
  deps: Pick<Infra, 'clock' | 'db'>,
  userId: string | null,
  challenge: string,
  kind: 'registration' | 'authentication',
  byEmail = false,
) {
  const now = deps.clock.now();
  const id = newId('chl', now.getTime());
  await deps.db.insert(webauthnChallenges).values({
    id,
    userId,
    challenge,
    kind,
    byEmail,
    expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS),
    createdAt: now,
  });
  const expired = deps.db
    .select({ id: webauthnChallenges.id })
    .from(webauthnChallenges)
    .where(lte(webauthnChallenges.expiresAt, now))
    .limit(SWEEP);
  await deps.db.delete(webauthnChallenges).where(inArray(webauthnChallenges.id, expired));
  return id;
}

/** Spends a live challenge matching `where` (one guarded UPDATE: of concurrent verifies one wins). */
async function spendChallenge(deps: Pick<Infra, 'clock' | 'db'>, where: ReturnType<typeof and>) {
  const now = deps.clock.now();
  const [row] = await deps.db
    .update(webauthnChallenges)
    .set({ usedAt: now })
    .where(and(where, isNull(webauthnChallenges.usedAt), gt(webauthnChallenges.expiresAt, now)))
    .returning();
  return row;
}

/** The challenge a client's clientDataJSON carries (base64url JSON), or null when unreadable. */
function challengeOf(clientDataJSON: string): string | null {
  try {
    const data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof data.challenge === 'string' ? data.challenge : null;
  } catch {
    return null;
  }
}

// ---- registration ------------------------------------------------------------------------------

async function activeUser(deps: Pick<Infra, 'userCache'>, userId: string) {
  const user = await deps.userCache.row(userId);
  if (!user || !user.isActive) throw notFound('User not found');
  return user;
}

export async function registrationOptions(
  deps: Pick<Infra, 'config' | 'clock' | 'db' | 'userCache'>,
  actor: UserActor,
) {
  const user = await activeUser(deps, actor.userId);
  const { rpId } = relyingParty(deps);
  const existing = await passkeysOf(deps, user.id);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rpId,
    userName: user.email,
    userID: new TextEncoder().encode(user.id),
    userDisplayName: user.fullName ?? user.email,
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: transportsOf(p) })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  await saveChallenge(deps, user.id, options.challenge, 'registration');
  return options;
}

const invalidRegistration = (details: string) => validationError('Invalid passkey registration', details);

export async function registrationVerify(
  deps: Pick<Infra, 'config' | 'logger' | 'clock' | 'db' | 'mailer' | 'userCache'>,
  actor: UserActor,
  input: { response: RegistrationResponseJSON; name?: string },
) {
  const user = await activeUser(deps, actor.userId);
  const challenge = challengeOf(input.response.response.clientDataJSON);
  const spent =
    challenge &&
    (await spendChallenge(
      deps,
      and(
        eq(webauthnChallenges.userId, user.id),
        eq(webauthnChallenges.kind, 'registration'),
        eq(webauthnChallenges.challenge, challenge),
      ),
    ));
  if (!spent) throw invalidRegistration('response: its challenge is unknown, already used or expired');
  let verified;
  try {
    verified = await verifyRegistrationResponse({ response: input.response, ...expected(deps, spent.challenge) });
  } catch (err) {
    throw invalidRegistration(`response: ${(err as Error).message}`);
  }
  if (!verified.verified) throw invalidRegistration('response: does not verify');
  const { credential, credentialBackedUp } = verified.registrationInfo;
  const now = deps.clock.now();
  try {
    const [row] = await deps.db
      .insert(passkeys)
      .values({
        id: newId('pk', now.getTime()),
        userId: user.id,
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: credential.transports ?? [],
        name: input.name?.trim() || 'Passkey',
        backedUp: credentialBackedUp,
        createdAt: now,
      })
      .returning();
    // The owner hears of every new way into the account (one added with a stolen token included).
    sendLater(
      deps.mailer,
      deps.logger,
      passkeyAddedMail(deps.config.branding, user.email, row!.name, `${deps.config.appOrigin}/account`),
    );
    return presentPasskey(row!);
  } catch (err) {
    if (isUniqueViolation(err))
      throw conflict('This passkey is already registered', 'response: the credential is registered already');
    throw err;
  }
}

// ---- management -------------------------------------------------------------------------------

export async function listPasskeys(deps: Pick<Infra, 'db'>, actor: UserActor) {
  return { passkeys: (await passkeysOf(deps, actor.userId)).map(presentPasskey) };
}

const passkeyNotFound = () => notFound('Passkey not found');

export async function renamePasskey(deps: Pick<Infra, 'db'>, actor: UserActor, id: string, name: string) {
  if (!name.trim()) throw validationError('Invalid request body', 'name: must not be blank');
  const [row] = await deps.db
    .update(passkeys)
    .set({ name: name.trim() })
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, actor.userId)))
    .returning();
  if (!row) throw passkeyNotFound();
  return presentPasskey(row);
}

export async function deletePasskey(deps: Pick<Infra, 'db'>, actor: UserActor, id: string) {
  const [row] = await deps.db
    .delete(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, actor.userId)))
    .returning({ id: passkeys.id });
  if (!row) throw passkeyNotFound();
}

// ---- sign-in ----------------------------------------------------------------------------------

// Decoys take the form real entries take here: the credential id length and transports most common
// among the latest passkeys registered (one indexed read, the same for every instance), so a decoy
// looks like the entry of a typical account. Before any passkey exists: a 16-byte id and the
// transports browsers report for a platform passkey.
const FORM_SAMPLE = 1000;
const FIRST_FORM = { bytes: 16, transports: ['hybrid', 'internal'] as AuthenticatorTransport[] };

async function decoyForm(deps: Pick<Infra, 'db'>) {
  const recent = await deps.db
    .select({ credentialId: passkeys.credentialId, transports: passkeys.transports })
    .from(passkeys)
    .orderBy(desc(passkeys.id))
    .limit(FORM_SAMPLE);
  const counts = new Map<string, { n: number; bytes: number; transports: AuthenticatorTransport[] }>();
  for (const r of recent) {
    const bytes = Buffer.from(r.credentialId, 'base64url').length;
    const key = `${bytes}:${r.transports.join(',')}`;
    const seen = counts.get(key) ?? { n: 0, bytes, transports: r.transports as AuthenticatorTransport[] };
    seen.n++;
    counts.set(key, seen);
  }
  // The most common form; of equally common ones the first by key, so every ask picks the same.
  const [best] = [...counts.entries()].sort(([ka, a], [kb, b]) => b.n - a.n || (ka < kb ? -1 : 1));
  return best ? best[1] : FIRST_FORM;
}

/**
 * A stand-in for an address without passkeys (unknown, deactivated, or none registered): one
 * credential id derived from the address under ENCRYPTION_KEY, the same at every ask, in the form of
 * a real entry (decoyForm), so its answer looks like that of an account with one passkey. No
 * authenticator holds it.
 */
async function decoyCredential(deps: Pick<Infra, 'config' | 'db'>, email: string) {
  const form = await decoyForm(deps);
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * 32 < form.bytes; i++) {
    blocks.push(
      createHmac('sha256', deps.config.encryptionKey).update(`tenantry passkey decoy v2:${i}:${email}`).digest(),
    );
  }
  return { id: Buffer.concat(blocks).subarray(0, form.bytes).toString('base64url'), transports: [...form.transports] };
}

/**
 * With an email: that account's passkeys as allowCredentials, or a decoy for an address without any
 * (decoyCredential), so the answer does not tell which addresses have passkeys; the challenge then
 * takes only that account's passkeys, and none for an address that is unknown or deactivated.
 * Without: none, for a discoverable passkey.
 */
export async function authenticationOptions(deps: PasskeySignInDeps, input: { email?: string }) {
  const { rpId } = relyingParty(deps);
  let userId: string | null = null;
  let allow: PasskeyRow[] = [];
  const byEmail = input.email !== undefined;
  if (byEmail) {
    const [user] = await deps.db
      .select({ id: users.id, isActive: users.isActive })
      .from(users)
      .where(sql`lower(${users.email}) = ${input.email!.trim().toLowerCase()}`)
      .limit(1);
    if (user?.isActive) {
      userId = user.id;
      allow = await passkeysOf(deps, user.id);
    }
  }
  const allowCredentials = allow.map((p) => ({ id: p.credentialId, transports: transportsOf(p) }));
  if (byEmail && allowCredentials.length === 0)
    allowCredentials.push(await decoyCredential(deps, input.email!.trim().toLowerCase()));
  const options = await generateAuthenticationOptions({
    rpID: rpId,
    timeout: CHALLENGE_TTL_MS,
    userVerification: 'preferred',
    allowCredentials,
  });
  const challengeId = await saveChallenge(deps, userId, options.challenge, 'authentication', byEmail);
  return { challengeId, options };
}

const refused = () =>
  authenticationError(
    'Invalid passkey',
    'The challenge is unknown, used or expired, or the passkey is unknown or does not verify',
  );

/**
 * A passkey sign-in (docs/api.md#passkeys). Every refusal of the passkey is one 401 and changes
 * nothing: the challenge is spent, but the counter, lastUsedAt and the lockout stay as they were. A
 * passkey is not a guessable secret, so a refused one does not count toward the lockout; a locked
 * account still answers 423 (the port's finish). A genuine assertion whose sign-in then stops there
 * (423, 403, or the two-factor step) has moved the counter: the authenticator counted it.
 */
export async function authenticationVerify(
  deps: PasskeySignInDeps,
  signIn: SignInPort,
  input: { challengeId: string; response: AuthenticationResponseJSON },
  client: SignInClient,
) {
  const challenge = await spendChallenge(
    deps,
    and(eq(webauthnChallenges.id, input.challengeId), eq(webauthnChallenges.kind, 'authentication')),
  );
  if (!challenge) throw refused();
  const [passkey] = await deps.db.select().from(passkeys).where(eq(passkeys.credentialId, input.response.id));
  // A challenge asked for with an email is only good for that account's passkeys: for an unknown or
  // deactivated address (userId null) it is good for none, so no passkey tells such an address from
  // an active one by being accepted.
  if (!passkey || ((challenge.byEmail || challenge.userId !== null) && challenge.userId !== passkey.userId))
    throw refused();
  const [user] = await deps.db.select().from(users).where(eq(users.id, passkey.userId));
  if (!user || !user.isActive) throw refused();
  let result;
  try {
    result = await verifyAuthenticationResponse({
      response: input.response,
      ...expected(deps, challenge.challenge),
      credential: {
        id: passkey.credentialId,
        publicKey: Buffer.from(passkey.publicKey, 'base64url'),
        counter: passkey.counter,
        transports: transportsOf(passkey),
      },
    });
  } catch {
    // Among others: a counter that did not move forward (a cloned authenticator), a wrong origin or rp id.
    throw refused();
  }
  if (!result.verified) throw refused();
  const info = result.authenticationInfo;
  // Guarded on the counter read: of two assertions racing with one counter value, one passes.
  const [moved] = await deps.db
    .update(passkeys)
    .set({ counter: info.newCounter, lastUsedAt: deps.clock.now(), backedUp: info.credentialBackedUp })
    .where(and(eq(passkeys.id, passkey.id), eq(passkeys.counter, passkey.counter)))
    .returning({ id: passkeys.id });
  if (!moved) throw refused();
  // User verification (a PIN, a biometric) makes the passkey two factors in one.
  return signIn.finish(user, client, { secondFactorProven: info.userVerified });
}
