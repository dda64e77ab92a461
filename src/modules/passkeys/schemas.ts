import { Type } from 'typebox';
import { Body, named, NullableTimestamp, Timestamp } from '../../http/schemas.js';

const PASSKEY_ID = 'pk_01jq3bn9zs0a7awy2w2vc6bte1';
const passkeyName = Type.String({ minLength: 1, maxLength: 100 });

export const Passkey = named(
  'Passkey',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    createdAt: Timestamp,
    lastUsedAt: NullableTimestamp,
  }),
  {
    description: 'A passkey of the signed-in user; its key material is never answered (docs/api.md#passkeys)',
    examples: [{ id: PASSKEY_ID, name: 'MacBook', createdAt: '2026-03-01T12:00:00.000Z', lastUsedAt: null }],
  },
);

export const PasskeyList = named('PasskeyList', Type.Object({ passkeys: Type.Array(Passkey) }), {
  examples: [
    {
      passkeys: [
        {
          id: PASSKEY_ID,
          name: 'MacBook',
          createdAt: '2026-03-01T12:00:00.000Z',
          lastUsedAt: '2026-03-02T08:00:00.000Z',
        },
      ],
    },
  ],
});

// The WebAuthn JSON shapes are the browser's (PublicKeyCredential.toJSON()); @simplewebauthn/server
// checks them field by field, so the schema only asks for what routing needs.
const credentialJson = (description: string) =>
  Type.Object(
    {
      id: Type.String({ minLength: 1, maxLength: 1024 }),
      rawId: Type.String({ minLength: 1, maxLength: 1024 }),
      type: Type.String({ maxLength: 32 }),
      response: Type.Object(
        { clientDataJSON: Type.String({ minLength: 1, maxLength: 16384 }) },
        { additionalProperties: true },
      ),
    },
    { additionalProperties: true, description },
  );

export const CreationOptions = named(
  'PasskeyCreationOptions',
  Type.Object(
    {
      challenge: Type.String(),
      rp: Type.Object({ id: Type.Optional(Type.String()), name: Type.String() }),
      user: Type.Object({ id: Type.String(), name: Type.String(), displayName: Type.String() }),
    },
    { additionalProperties: true },
  ),
  { description: 'PublicKeyCredentialCreationOptionsJSON, for navigator.credentials.create() (docs/api.md#passkeys)' },
);

export const RegistrationOptionsBody = named(
  'PasskeyRegistrationOptionsRequest',
  Body({
    password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'The account’s password: needed unless this session signed in or re-authenticated recently',
      }),
    ),
    twoFactorCode: Type.Optional(
      Type.String({
        minLength: 6,
        maxLength: 32,
        description: 'For an account without a password: a TOTP or backup code, instead',
      }),
    ),
  }),
  {
    description:
      'A proof of the person, or no body at all within AUTH_REAUTH_WINDOW_S of the session’s sign-in (docs/api.md#passkeys)',
    examples: [{ password: 'Analytical-Engine-1' }, {}],
  },
);

export const RegistrationBody = named(
  'PasskeyRegistrationRequest',
  Body({
    response: credentialJson('The RegistrationResponseJSON of navigator.credentials.create()'),
    name: Type.Optional({ ...passkeyName, description: 'Defaults to "Passkey"' }),
  }),
);

export const RenameBody = named('RenamePasskeyRequest', Body({ name: passkeyName }), {
  examples: [{ name: 'Work laptop' }],
});

export const PasskeyParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'A passkey (`pk_…`)' }),
});

export const AuthenticationOptionsBody = named(
  'PasskeyAuthenticationOptionsRequest',
  Body({
    email: Type.Optional(
      Type.String({
        format: 'email',
        maxLength: 254,
        description: 'Compared case-insensitively; without it the passkey is discoverable',
      }),
    ),
  }),
);

export const AuthenticationOptions = named(
  'PasskeyAuthenticationOptions',
  Type.Object({
    challengeId: Type.String({ description: 'Send it back with the assertion; single use, 5 minutes' }),
    options: Type.Object(
      {
        challenge: Type.String(),
        rpId: Type.Optional(Type.String()),
        allowCredentials: Type.Optional(
          Type.Array(Type.Object({ id: Type.String(), type: Type.String() }, { additionalProperties: true })),
        ),
      },
      {
        additionalProperties: true,
        description: 'PublicKeyCredentialRequestOptionsJSON, for navigator.credentials.get()',
      },
    ),
  }),
);

export const AuthenticationBody = named(
  'PasskeySignInRequest',
  Body({
    challengeId: Type.String({ minLength: 1, maxLength: 64 }),
    response: credentialJson('The AuthenticationResponseJSON of navigator.credentials.get()'),
  }),
);
