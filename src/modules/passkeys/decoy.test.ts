// The decoy an email-targeted passkey sign-in answers for an address without passkeys takes the form
// of the passkeys registered here (docs/api.md#passkeys): this file's database starts with none, then
// gets authenticators of another form than the test authenticator's default.
import { describe, expect, it } from 'vitest';
import { signedInUser } from '../../../test/factories.js';
import { authenticationOptions, registerPasskey, t, usePasskeyApp } from '../../../test/fixtures/passkeys.js';

usePasskeyApp();

const entryOf = async (email: string) => {
  const { options } = await authenticationOptions(email);
  expect(options.allowCredentials).toHaveLength(1);
  return options.allowCredentials![0] as { id: string; type: string; transports: string[] };
};
const bytes = (id: string) => Buffer.from(id, 'base64url').length;

describe('the decoy of an address without passkeys', () => {
  it('before any passkey exists: a 16-byte id with the transports of a platform passkey', async () => {
    const decoy = await entryOf('nobody-yet@example.com');
    expect(Object.keys(decoy)).toEqual(['id', 'type', 'transports']);
    expect(bytes(decoy.id)).toBe(16);
    expect(decoy).toMatchObject({ type: 'public-key', transports: ['hybrid', 'internal'] });
  });

  it('then the most common form among the passkeys registered: the same fields, id length and transports as those entries', async () => {
    const form = { idBytes: 32, transports: ['hybrid', 'internal'] };
    const users = [
      await signedInUser(t, 'decoy-a'),
      await signedInUser(t, 'decoy-b'),
      await signedInUser(t, 'decoy-c'),
    ];
    await registerPasskey(users[0]!.accessToken, { form });
    await registerPasskey(users[1]!.accessToken, { form });
    await registerPasskey(users[2]!.accessToken, { form: { idBytes: 20, transports: ['internal'] } });
    const real = await entryOf(users[0]!.email);
    expect(bytes(real.id)).toBe(32);
    const decoy = await entryOf('nobody-yet@example.com');
    expect(Object.keys(decoy)).toEqual(Object.keys(real));
    expect(bytes(decoy.id)).toBe(32);
    expect(decoy.id).toHaveLength(real.id.length);
    expect(decoy.transports).toEqual(real.transports);
    expect(decoy.type).toBe(real.type);
    // Stable: asking again answers the same entry.
    expect(await entryOf('NOBODY-YET@example.com')).toEqual(decoy);
  });
});
