// Asymmetric JWTs made by hand with node:crypto (no JWT library), so a bug in the token code under
// test cannot make its own forgeries pass; and the signing keys as the database holds them.
import { createHmac, createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { decrypt } from '../src/lib/secrets.js';
import { queryRows, type TestApp } from './harness.js';

export type Alg = 'ES256' | 'EdDSA' | 'RS256';
export const ALGS: Alg[] = ['ES256', 'EdDSA', 'RS256'];

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A JWS over `header.payload` with `key` (the algorithm of the key, whatever the header says). */
export function signJwt(
  alg: Alg,
  key: KeyObject,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const data = Buffer.from(input);
  const sig =
    alg === 'ES256'
      ? sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' })
      : alg === 'EdDSA'
        ? sign(null, data, key)
        : sign('sha256', data, key);
  return `${input}.${sig.toString('base64url')}`;
}

/** HS256 over `header.payload` with any bytes as the secret (the algorithm-confusion forgery). */
export function hmacJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret: string | Buffer,
): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** A fresh key pair of `alg` the service has never seen. */
export function strangerKey(alg: Alg): KeyObject {
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  if (alg === 'EdDSA') return generateKeyPairSync('ed25519').privateKey;
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
}

export interface StoredKey {
  id: string;
  algorithm: Alg;
  publicJwk: Record<string, string>;
  privateKeyEnc: string;
  createdAt: Date;
  activeFrom: Date;
  retiresAt: Date | null;
}

/** The signing keys as stored, oldest first. */
export async function storedKeys(t: TestApp): Promise<StoredKey[]> {
  const rows = await queryRows<Record<string, unknown>>(
    t,
    sql`select id, algorithm, public_jwk, private_key_enc, created_at, active_from, retires_at from signing_keys order by created_at, id`,
  );
  return rows.map((r) => ({
    id: r.id as string,
    algorithm: r.algorithm as Alg,
    publicJwk: (typeof r.public_jwk === 'string' ? JSON.parse(r.public_jwk) : r.public_jwk) as Record<string, string>,
    privateKeyEnc: r.private_key_enc as string,
    createdAt: new Date(r.created_at as string),
    activeFrom: new Date(r.active_from as string),
    retiresAt: r.retires_at === null ? null : new Date(r.retires_at as string),
  }));
}

/** A stored key's private key, decrypted with the app's ENCRYPTION_KEY. */
export const privateKeyOf = (t: TestApp, k: StoredKey) =>
  createPrivateKey(decrypt(t.deps.config.encryptionKeys, k.privateKeyEnc));

/** Access claims like the service's own for a signed-in session, valid 15 minutes from the app's clock. */
export function accessClaims(
  t: TestApp,
  of: { userId: string; email: string; sessionId: string },
): Record<string, unknown> {
  const iat = Math.floor(t.clock.now().getTime() / 1000);
  return {
    userId: of.userId,
    email: of.email,
    sessionId: of.sessionId,
    sub: of.userId,
    amr: ['pwd'],
    iss: 'tenantry',
    iat,
    exp: iat + 900,
  };
}
