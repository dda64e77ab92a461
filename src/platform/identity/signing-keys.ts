// The keys that sign access tokens under an asymmetric JWT_ALGORITHM (docs/tokens.md): private keys
// in the database, encrypted under ENCRYPTION_KEY; public keys published at /.well-known/jwks.json.
//
// A key's life, on the clock (db/tables/auth.ts, signing_keys):
//   created ──(published)──> activeFrom ──(signs)──> retiresAt ──(published, accepted)──> retiresAt + accessTtl + REFRESH
// The first start with an asymmetric algorithm creates a key that signs at once; `rotate-signing-key`
// adds one that signs `delay` seconds later, and that moment retires the current one. Which key signs
// is decided by the clock alone, so every instance that knows the keys switches at the same moment.
//
// How an instance learns of a key another process added (every instance reads the same table): its
// view is read again when it is older than REFRESH_MS (at the next signature, JWKS request or
// verification), and at once, at most once a second, when a token names a kid it does not know (a
// key rotated with a delay shorter than REFRESH_MS signs elsewhere before this instance read it).
// A key retired by a rotation this instance has not yet read may still sign here for up to
// REFRESH_MS past its retirement: that is why a retired key stays accepted REFRESH_MS longer than
// its tokens' lifetime.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { and, eq, gt, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { AsymmetricAlgorithm, Config } from '../../config.js';
import type { Db, Tx } from '../../db/client.js';
import { signingKeys, type SigningKeyRow } from '../../db/tables/auth.js';
import { transaction } from '../../db/transaction.js';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { decrypt, DecryptError, encrypt } from '../../lib/secrets.js';

/** How stale an instance's view of the keys may get. */
export const REFRESH_MS = 60_000;
/** At most one reload for unknown kids per this many milliseconds (a flood of made-up kids costs one query a second). */
const UNKNOWN_KID_RELOAD_MS = 1_000;
/** The default publish-before-sign delay of a rotation: past the JWKS's max-age (300 s) and REFRESH_MS. */
export const DEFAULT_ROTATION_DELAY_S = 600;
export const ASYMMETRIC_ALGORITHMS: readonly AsymmetricAlgorithm[] = ['ES256', 'EdDSA', 'RS256'];

export interface PublicJwk {
  kty: string;
  kid: string;
  alg: string;
  use: 'sig';
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
}

interface RingKey {
  kid: string;
  alg: AsymmetricAlgorithm;
  jwk: PublicJwk;
  publicKey: KeyObject;
  privateKeyEnc: string;
  privateKey: KeyObject | null;
  activeFrom: number;
  retiresAt: number | null;
  /** When it stops being published and accepted (null: not retired). */
  until: number | null;
}

/** The moment a key retired at `retiresAt` stops being published and accepted. */
export const publishedUntil = (config: Config, retiresAt: Date) =>
  new Date(retiresAt.getTime() + config.auth.accessTtlS * 1000 + REFRESH_MS);

function generate(alg: AsymmetricAlgorithm): { privateKey: KeyObject; publicKey: KeyObject } {
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' });
  if (alg === 'EdDSA') return generateKeyPairSync('ed25519');
  return generateKeyPairSync('rsa', { modulusLength: 2048 });
}

/** A new key of `alg`, stored encrypted; published now, signing from `activeFrom`. */
export async function insertSigningKey(
  tx: Tx | Db,
  config: Config,
  alg: AsymmetricAlgorithm,
  now: Date,
  activeFrom: Date,
): Promise<SigningKeyRow> {
  const { privateKey, publicKey } = generate(alg);
  const kid = newId('jwk', now.getTime());
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as Record<string, string>), kid, alg, use: 'sig' };
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const [row] = await tx
    .insert(signingKeys)
    .values({
      id: kid,
      algorithm: alg,
      publicJwk: jwk,
      privateKeyEnc: encrypt(config.encryptionKey, pem),
      createdAt: now,
      activeFrom,
      retiresAt: null,
    })
    .returning();
  return row!;
}

/** Serializes the changes to the key set of every process (first starts, rotations). */
const lockKeys = (tx: Tx) => tx.execute(sql`lock table signing_keys in exclusive mode`);

/** Keys whose publication has ended are deleted: nothing they signed is still valid. */
async function dropSpentKeys(tx: Tx, config: Config, now: Date) {
  const cutoff = new Date(now.getTime() - config.auth.accessTtlS * 1000 - REFRESH_MS);
  return tx.delete(signingKeys).where(lte(signingKeys.retiresAt, cutoff)).returning({ id: signingKeys.id });
}

/**
 * At start: a key of the configured algorithm that signs now, created if there is none (under a
 * lock, so instances starting together create one). Keys of another algorithm (JWT_ALGORITHM was
 * changed) retire now: their tokens stay valid until they expire.
 */
export async function ensureSigningKey(db: Db, config: Config, clock: Clock, alg: AsymmetricAlgorithm): Promise<void> {
  await transaction(db, async (tx) => {
    await lockKeys(tx);
    const now = clock.now();
    await tx
      .update(signingKeys)
      .set({ retiresAt: now })
      .where(
        and(sql`${signingKeys.algorithm} <> ${alg}`, or(isNull(signingKeys.retiresAt), gt(signingKeys.retiresAt, now))),
      );
    const [live] = await tx
      .select({ id: signingKeys.id })
      .from(signingKeys)
      .where(and(eq(signingKeys.algorithm, alg), or(isNull(signingKeys.retiresAt), gt(signingKeys.retiresAt, now))))
      .limit(1);
    if (!live) await insertSigningKey(tx, config, alg, now, now);
    await dropSpentKeys(tx, config, now);
  });
}

export interface Rotation {
  kid: string;
  activeFrom: Date;
  /** The keys the new one retires, and until when they stay published. */
  retired: Array<{ kid: string; retiresAt: Date; publishedUntil: Date }>;
  deleted: string[];
}

/**
 * A new key, published now and signing from `delayS` seconds later; the keys of the algorithm it
 * replaces stop signing at that moment (never later than they were already due to) and stay
 * published until their last token has expired. Keys past their publication are deleted.
 */
export async function rotateSigningKey(
  db: Db,
  config: Config,
  clock: Clock,
  alg: AsymmetricAlgorithm,
  delayS: number,
): Promise<Rotation> {
  return transaction(db, async (tx) => {
    await lockKeys(tx);
    const now = clock.now();
    const activeFrom = new Date(now.getTime() + delayS * 1000);
    const retired = await tx
      .update(signingKeys)
      .set({ retiresAt: activeFrom })
      .where(
        and(eq(signingKeys.algorithm, alg), or(isNull(signingKeys.retiresAt), gt(signingKeys.retiresAt, activeFrom))),
      )
      .returning({ kid: signingKeys.id, retiresAt: signingKeys.retiresAt });
    const key = await insertSigningKey(tx, config, alg, now, activeFrom);
    const deleted = await dropSpentKeys(tx, config, now);
    return {
      kid: key.id,
      activeFrom,
      retired: retired.map((r) => ({
        kid: r.kid,
        retiresAt: r.retiresAt!,
        publishedUntil: publishedUntil(config, r.retiresAt!),
      })),
      deleted: deleted.map((d) => d.id),
    };
  });
}

const unreadableKey = () =>
  new AppError(
    'INTERNAL_ERROR',
    'The token signing key cannot be read',
    'It was encrypted with a key that ENCRYPTION_KEY no longer lists: list that key again, or run rotate-signing-key --delay-s 0',
  );

/** The in-memory view of the keys: which one signs, which are accepted, the JWKS document. */
export function createSigningKeyRing(db: Db, config: Config, clock: Clock, logger: Logger, alg: AsymmetricAlgorithm) {
  let keys = new Map<string, RingKey>();
  let loadedAt = -Infinity;
  let loading: Promise<void> | null = null;
  let lastUnknownReload = -Infinity;
  let doc: { text: string; until: number } | null = null;
  const ttlMs = config.auth.accessTtlS * 1000;
  const now = () => clock.now().getTime();

  async function load(): Promise<void> {
    const at = now();
    const rows = await db
      .select()
      .from(signingKeys)
      .where(
        and(
          inArray(signingKeys.algorithm, [...ASYMMETRIC_ALGORITHMS]),
          or(isNull(signingKeys.retiresAt), gt(signingKeys.retiresAt, new Date(at - ttlMs - REFRESH_MS))),
        ),
      );
    const next = new Map<string, RingKey>();
    for (const r of rows) {
      const known = keys.get(r.id);
      const retiresAt = r.retiresAt?.getTime() ?? null;
      next.set(r.id, {
        kid: r.id,
        alg: r.algorithm as AsymmetricAlgorithm,
        jwk: r.publicJwk as unknown as PublicJwk,
        publicKey: known?.publicKey ?? createPublicKey({ key: r.publicJwk, format: 'jwk' }),
        privateKeyEnc: r.privateKeyEnc,
        privateKey: known && known.privateKeyEnc === r.privateKeyEnc ? known.privateKey : null,
        activeFrom: r.activeFrom.getTime(),
        retiresAt,
        until: retiresAt === null ? null : retiresAt + ttlMs + REFRESH_MS,
      });
    }
    keys = next;
    loadedAt = at;
    doc = null;
  }

  /** One load at a time; callers arriving meanwhile wait for it. */
  function reload(): Promise<void> {
    loading ??= load().finally(() => {
      loading = null;
    });
    return loading;
  }

  const stale = () => now() - loadedAt >= REFRESH_MS;
  const accepted = (k: RingKey, at: number) => k.until === null || at < k.until;

  function signingKey(at: number): RingKey | undefined {
    let best: RingKey | undefined;
    let fallback: RingKey | undefined;
    for (const k of keys.values()) {
      if (k.alg !== alg || k.activeFrom > at) continue;
      if (!fallback || k.activeFrom > fallback.activeFrom) fallback = k;
      if (k.retiresAt !== null && k.retiresAt <= at) continue;
      if (!best || k.activeFrom > best.activeFrom) best = k;
    }
    if (!best && fallback)
      logger.warn(
        { kid: fallback.kid },
        'no signing key is current for JWT_ALGORITHM; signing with the latest retired one',
      );
    return best ?? fallback;
  }

  return {
    algorithm: alg,

    /** Loads the keys (at start). */
    reload,

    /** The key that signs now, its private key decrypted once. */
    async signer(): Promise<{ kid: string; alg: AsymmetricAlgorithm; key: KeyObject }> {
      if (stale()) await reload();
      let k = signingKey(now());
      if (!k) {
        // Only a database emptied behind the service's back gets here: make a key as a first start would.
        await ensureSigningKey(db, config, clock, alg);
        await reload();
        k = signingKey(now());
        if (!k) throw unreadableKey();
      }
      if (!k.privateKey) {
        try {
          k.privateKey = createPrivateKey(decrypt(config.encryptionKeys, k.privateKeyEnc));
        } catch (err) {
          if (err instanceof DecryptError) throw unreadableKey();
          throw err;
        }
      }
      return { kid: k.kid, alg: k.alg, key: k.privateKey };
    },

    /**
     * The public key of `kid` while it is accepted; a kid this instance does not know makes it read
     * the keys again (at most once a second), for a key added by another process.
     */
    async verificationKey(kid: string): Promise<{ alg: AsymmetricAlgorithm; key: KeyObject } | null> {
      if (stale())
        void reload().catch((err: Error) =>
          logger.warn({ err: { message: err.message } }, 'reading the signing keys failed'),
        );
      let k = keys.get(kid);
      if (!k && now() - lastUnknownReload >= UNKNOWN_KID_RELOAD_MS) {
        lastUnknownReload = now();
        await reload();
        k = keys.get(kid);
      }
      if (!k || !accepted(k, now())) return null;
      return { alg: k.alg, key: k.publicKey };
    },

    /** Whether a token of `kid` verified earlier is still accepted (its key not retired past its tokens' life). */
    accepts(kid: string): boolean {
      const k = keys.get(kid);
      return k !== undefined && accepted(k, now());
    },

    /** The JWKS document, as sent: the published keys (not retired past their tokens' life). */
    async jwks(): Promise<string> {
      if (stale()) await reload();
      const at = now();
      if (doc && at < doc.until) return doc.text;
      const published = [...keys.values()].filter((k) => accepted(k, at)).sort((a, b) => b.activeFrom - a.activeFrom);
      const until = Math.min(loadedAt + REFRESH_MS, ...published.map((k) => k.until ?? Infinity));
      doc = { text: JSON.stringify({ keys: published.map((k) => k.jwk) }), until };
      return doc.text;
    },
  };
}

export type SigningKeyRing = ReturnType<typeof createSigningKeyRing>;
