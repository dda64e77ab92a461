import { Type } from 'typebox';
import { named, ref } from '../../http/schemas.js';

const key = (description: string) => Type.Optional(Type.String({ description }));

export const Jwk = named(
  'JsonWebKey',
  Type.Object({
    kty: Type.String({ description: '`EC` (ES256), `OKP` (EdDSA) or `RSA` (RS256)' }),
    kid: Type.String({ description: 'The `kid` header of the tokens this key signs' }),
    alg: Type.String({ description: '`ES256`, `EdDSA` or `RS256`' }),
    use: Type.Literal('sig'),
    crv: key('`P-256` or `Ed25519`'),
    x: key('EC and OKP keys'),
    y: key('EC keys'),
    n: key('RSA keys: the modulus'),
    e: key('RSA keys: the exponent'),
  }),
  { description: 'A public key that verifies access tokens (RFC 7517)' },
);

export const Jwks = named('JsonWebKeySet', Type.Object({ keys: Type.Array(ref(Jwk)) }), {
  description:
    'The public keys of the access tokens: the one signing, the one about to, and retired ones until their tokens have expired. Empty under HS256.',
  examples: [
    {
      keys: [
        {
          kty: 'EC',
          crv: 'P-256',
          x: '33I5neYUYPZZCpfpfsjUxb8k4DV6N9DshldruA4kVKM',
          y: 'Ljf2tpf7DK7kaUXJbXuHnUL6f1S5JQmMJqUxYqV4ss0',
          kid: 'jwk_01jq3bn9zs0a7awy2w2vc6bte1',
          alg: 'ES256',
          use: 'sig',
        },
      ],
    },
  ],
});
