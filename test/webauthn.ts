// A software authenticator for the passkey tests: a P-256 key from node:crypto, `none` attestation,
// the attestation object CBOR-encoded here, assertions signed here. Nothing of @simplewebauthn is
// used, so a bug in how the service calls it cannot make these answers pass.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

// ---- a minimal CBOR encoder (RFC 8949): what an attestation object and a COSE key need --------

type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor> | { [k: string]: Cbor };

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

// ---- the authenticator ------------------------------------------------------------------------

const b64u = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface CeremonyOptions {
  /** The origin the browser would put in clientDataJSON (default: the harness's APP_ORIGIN). */
  origin?: string;
  /** The rp id whose hash goes into authenticatorData (default: the options', else app.test). */
  rpId?: string;
  /** User verification (a PIN, a biometric): default true. */
  uv?: boolean;
  /** The signature counter to report (default: the authenticator's next). */
  counter?: number;
}

interface CreationOptionsJSON {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}
interface RequestOptionsJSON {
  challenge: string;
  rpId?: string;
}

/** The form of what an authenticator makes: its credential ids' length and the transports it reports. */
export interface AuthenticatorForm {
  /** Bytes of the credential id (default 16). */
  idBytes?: number;
  /** What the browser reports at registration (default ['internal']). */
  transports?: string[];
}

export class SoftAuthenticator {
  readonly credentialId: Buffer;
  private readonly transports: string[];
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  /** The counter of the last assertion (0 after registration, then 1, 2, …). */
  counter = 0;
  /** The user handle (options.user.id) of the registration, for discoverable assertions. */
  userHandle: string | null = null;

  constructor(
    private readonly defaultOrigin = 'http://app.test',
    form: AuthenticatorForm = {},
  ) {
    this.credentialId = randomBytes(form.idBytes ?? 16);
    this.transports = form.transports ?? ['internal'];
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicKey = publicKey;
  }

  get id(): string {
    return b64u(this.credentialId);
  }

  private coseKey(): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    return cbor(
      new Map<Cbor, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
  }

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** The RegistrationResponseJSON of navigator.credentials.create() for these options. */
  create(options: CreationOptionsJSON, opts: CeremonyOptions = {}) {
    const rpId = opts.rpId ?? options.rp.id ?? 'app.test';
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLen, this.credentialId, this.coseKey()]);
    const flags = FLAG_UP | FLAG_AT | (opts.uv === false ? 0 : FLAG_UV);
    const authData = this.authData(rpId, flags, opts.counter ?? 0, attested);
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData });
    this.userHandle = options.user.id;
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(this.clientData('webauthn.create', options.challenge, opts.origin ?? this.defaultOrigin)),
        attestationObject: b64u(attestationObject),
        transports: this.transports,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** The AuthenticationResponseJSON of navigator.credentials.get(), signed with the key. */
  get(options: RequestOptionsJSON, opts: CeremonyOptions = {}) {
    const rpId = opts.rpId ?? options.rpId ?? 'app.test';
    const counter = opts.counter ?? this.counter + 1;
    this.counter = Math.max(this.counter, counter);
    const flags = FLAG_UP | (opts.uv === false ? 0 : FLAG_UV);
    const authenticatorData = this.authData(rpId, flags, counter);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, opts.origin ?? this.defaultOrigin);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authenticatorData),
        signature: b64u(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
