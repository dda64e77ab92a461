// Passkey registration and management over HTTP, with a software authenticator (test/webauthn.ts).
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { signedInUser } from '../../../test/factories.js';
import { bearer } from '../../../test/fixtures/auth.js';
import { SoftAuthenticator } from '../../../test/webauthn.js';
import {
  listPasskeys,
  post,
  registerPasskey,
  registrationOptions,
  t,
  usePasskeyApp,
} from '../../../test/fixtures/passkeys.js';
import { expectError } from '../../../test/expect.js';

usePasskeyApp();

const verify = (accessToken: string, response: unknown, name?: string) =>
  post('/auth/passkeys/registration/verify', { response, ...(name === undefined ? {} : { name }) }, accessToken);

describe('registration', () => {
  it('answers creation options for the APP_ORIGIN host, then stores the passkey (201) without its key material', async () => {
    const user = await signedInUser(t, 'pk-reg');
    const options = await registrationOptions(user.accessToken);
    expect(options.rp).toEqual({ id: 'app.test', name: 'Tenantry' });
    expect(options.user.name).toBe(user.email);
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    const authenticator = new SoftAuthenticator();
    const res = await verify(user.accessToken, authenticator.create(options), 'MacBook');
    expect(res.statusCode, res.body).toBe(201);
    const body = json(res);
    expect(body).toEqual({
      id: expect.stringMatching(/^pk_/),
      name: 'MacBook',
      createdAt: t.clock.now().toISOString(),
      lastUsedAt: null,
    });
    expect(await listPasskeys(user.accessToken)).toEqual([body]);
    // The next options exclude it.
    const next = await registrationOptions(user.accessToken);
    expect(next.excludeCredentials?.map((c) => c.id)).toEqual([authenticator.id]);
    // The owner is told, with a link to the list.
    const notice = await t.mail.waitFor(user.email, /A passkey was added to your account/);
    expect(notice.decoded).toContain('MacBook');
    expect(notice.decoded).toContain('http://app.test/account');
  });

  it('names a passkey "Passkey" by default', async () => {
    const user = await signedInUser(t, 'pk-default');
    const { passkey } = await registerPasskey(user.accessToken);
    expect(passkey.name).toBe('Passkey');
  });

  it('refuses a replayed challenge (400)', async () => {
    const user = await signedInUser(t, 'pk-replay');
    const options = await registrationOptions(user.accessToken);
    expect((await verify(user.accessToken, new SoftAuthenticator().create(options))).statusCode).toBe(201);
    expectError(await verify(user.accessToken, new SoftAuthenticator().create(options)), 400, 'VALIDATION_ERROR');
    expect(await listPasskeys(user.accessToken)).toHaveLength(1);
  });

  it('refuses a wrong origin, a wrong rp id, and an expired challenge (400), storing nothing', async () => {
    const user = await signedInUser(t, 'pk-refuse');
    const wrongOrigin = await verify(
      user.accessToken,
      new SoftAuthenticator().create(await registrationOptions(user.accessToken), { origin: 'http://evil.test' }),
    );
    expectError(wrongOrigin, 400, 'VALIDATION_ERROR');
    const wrongRp = await verify(
      user.accessToken,
      new SoftAuthenticator().create(await registrationOptions(user.accessToken), { rpId: 'evil.test' }),
    );
    expectError(wrongRp, 400, 'VALIDATION_ERROR');
    const options = await registrationOptions(user.accessToken);
    t.clock.advance(5 * 60 * 1000);
    expectError(await verify(user.accessToken, new SoftAuthenticator().create(options)), 400, 'VALIDATION_ERROR');
    expect(await listPasskeys(user.accessToken)).toEqual([]);
  });

  it("refuses another user's challenge (400)", async () => {
    const a = await signedInUser(t, 'pk-a');
    const b = await signedInUser(t, 'pk-b');
    const options = await registrationOptions(a.accessToken);
    expectError(await verify(b.accessToken, new SoftAuthenticator().create(options)), 400, 'VALIDATION_ERROR');
  });

  it('refuses the same credential twice (409)', async () => {
    const user = await signedInUser(t, 'pk-twice');
    const { authenticator } = await registerPasskey(user.accessToken);
    const again = await verify(user.accessToken, authenticator.create(await registrationOptions(user.accessToken)));
    expectError(again, 409, 'CONFLICT');
  });

  it('refuses a malformed body (400) and an anonymous caller (401)', async () => {
    const user = await signedInUser(t, 'pk-malformed');
    expectError(
      await post('/auth/passkeys/registration/verify', { name: 'x' }, user.accessToken),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await post('/auth/passkeys/registration/verify', { response: { id: 'x' } }, user.accessToken),
      400,
      'VALIDATION_ERROR',
    );
    const garbage = {
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: { clientDataJSON: 'not-json', attestationObject: 'AAAA' },
    };
    expectError(await verify(user.accessToken, garbage), 400, 'VALIDATION_ERROR');
    expectError(await post('/auth/passkeys/registration/options'), 401, 'AUTHENTICATION_ERROR');
  });
});

describe('the list, rename and delete', () => {
  it('renames and deletes one of your passkeys', async () => {
    const user = await signedInUser(t, 'pk-manage');
    const { passkey } = await registerPasskey(user.accessToken);
    const renamed = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/me/passkeys/${passkey.id}`,
      headers: bearer(user.accessToken),
      payload: { name: ' Work laptop ' },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(json(renamed)).toEqual({ ...passkey, name: 'Work laptop' });
    const blank = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/me/passkeys/${passkey.id}`,
      headers: bearer(user.accessToken),
      payload: { name: '   ' },
    });
    expectError(blank, 400, 'VALIDATION_ERROR');
    const deleted = await t.request({
      method: 'DELETE',
      url: `/api/v1/users/me/passkeys/${passkey.id}`,
      headers: bearer(user.accessToken),
    });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await listPasskeys(user.accessToken)).toEqual([]);
    const again = await t.request({
      method: 'DELETE',
      url: `/api/v1/users/me/passkeys/${passkey.id}`,
      headers: bearer(user.accessToken),
    });
    expectError(again, 404, 'NOT_FOUND');
  });

  it("answers 404 for someone else's passkey on PATCH and DELETE, and leaves it alone", async () => {
    const owner = await signedInUser(t, 'pk-owner');
    const other = await signedInUser(t, 'pk-other');
    const { passkey } = await registerPasskey(owner.accessToken, { name: 'Mine' });
    const patch = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/me/passkeys/${passkey.id}`,
      headers: bearer(other.accessToken),
      payload: { name: 'Stolen' },
    });
    expectError(patch, 404, 'NOT_FOUND');
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v1/users/me/passkeys/${passkey.id}`,
      headers: bearer(other.accessToken),
    });
    expectError(del, 404, 'NOT_FOUND');
    expect(await listPasskeys(owner.accessToken)).toEqual([passkey]);
  });
});
