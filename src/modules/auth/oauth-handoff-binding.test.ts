// The hand-off's code bound to the browser that started the flow (docs/api.md#social-sign-in): a
// flow started with codeChallenge (S256 of a verifier the page keeps) hands over a code that only its
// verifier exchanges. The attack it stops: someone finishes a sign-in in their own browser and sends
// the victim the callback page with their code, signing the victim's web app into the attacker's
// account (login CSRF).
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { json } from '../../../test/harness.js';
import { uniqueEmail } from '../../../test/factories.js';
import type { Identity } from '../../../test/oauth-server.js';
import { callback, identity, o, t, useOAuthApp } from '../../../test/fixtures/oauth.js';
import { expectError } from '../../../test/expect.js';

useOAuthApp();

const PAGE = 'http://app.test/auth/callback';
const newVerifier = () => randomBytes(32).toString('base64url');
const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** A whole hand-off started with `query` (redirectTo and maybe codeChallenge): the code it hands over. */
async function handoffCode(who: Identity, query: Record<string, string>): Promise<string> {
  const start = await t.request({ method: 'GET', url: '/api/v1/auth/oauth/google', query });
  expect(start.statusCode, start.body).toBe(302);
  const cookie = /^tenantry_oauth_state=([^;]+)/.exec(String(start.headers['set-cookie']))![1]!;
  const back = await o.authorize(String(start.headers.location), who);
  const res = await callback('google', { code: back.code, state: back.state }, cookie);
  expect(res.statusCode, res.body).toBe(302);
  const code = new URLSearchParams(new URL(res.headers.location as string).hash.slice(1)).get('code');
  expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return code!;
}

const exchange = (payload: Record<string, unknown>) =>
  t.request({ method: 'POST', url: '/api/v1/auth/oauth/exchange', payload });

describe('a hand-off started with codeChallenge', () => {
  it('exchanges with its verifier, in the standard S256 form (RFC 7636 appendix B)', async () => {
    // The RFC's own example pair: the service computes the challenge as every PKCE client does.
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    expect(challengeOf(verifier)).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
    const email = uniqueEmail('bind-ok');
    const code = await handoffCode(identity(email), { redirectTo: PAGE, codeChallenge: challengeOf(verifier) });
    const res = await exchange({ code, codeVerifier: verifier });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).user).toMatchObject({ email });
  });

  it('the attack: the attacker’s code in the victim’s browser (another verifier, or none) is 400 and dies there', async () => {
    const attackerVerifier = newVerifier();
    const code = await handoffCode(identity(uniqueEmail('bind-attacker')), {
      redirectTo: PAGE,
      codeChallenge: challengeOf(attackerVerifier),
    });
    // The victim's page holds a verifier of its own (or none at all): no session either way.
    const refused = expectError(await exchange({ code, codeVerifier: newVerifier() }), 400, 'VALIDATION_ERROR');
    expect(refused.message).toBe('Invalid code verifier');
    // The refusal spent the code: even its own verifier can no longer use it.
    expect(expectError(await exchange({ code, codeVerifier: attackerVerifier }), 400, 'VALIDATION_ERROR').message).toBe(
      'Invalid or expired code',
    );

    const other = await handoffCode(identity(uniqueEmail('bind-attacker-2')), {
      redirectTo: PAGE,
      codeChallenge: challengeOf(newVerifier()),
    });
    expect(expectError(await exchange({ code: other }), 400, 'VALIDATION_ERROR').message).toBe('Invalid code verifier');
  });

  it('a code started without a challenge refuses a verifier (so the web app, which always sends one, never takes it)', async () => {
    const code = await handoffCode(identity(uniqueEmail('bind-none')), { redirectTo: PAGE });
    const refused = expectError(await exchange({ code, codeVerifier: newVerifier() }), 400, 'VALIDATION_ERROR');
    expect(refused.details).toMatch(/without a codeChallenge/);
    // Without a challenge and without a verifier, the plain exchange of the contract still works.
    const plain = await handoffCode(identity(uniqueEmail('bind-plain')), { redirectTo: PAGE });
    expect((await exchange({ code: plain })).statusCode).toBe(200);
  });

  it('malformed challenges and verifiers are 400; a challenge without redirectTo is 400; none stores a flow', async () => {
    for (const codeChallenge of [
      'short',
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c=',
      `${'a'.repeat(43)}b`,
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM',
    ]) {
      const res = await t.request({
        method: 'GET',
        url: '/api/v1/auth/oauth/google',
        query: { redirectTo: PAGE, codeChallenge },
      });
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    const alone = await t.request({
      method: 'GET',
      url: '/api/v1/auth/oauth/google',
      query: { codeChallenge: challengeOf(newVerifier()) },
    });
    expect(expectError(alone, 400, 'VALIDATION_ERROR').details).toMatch(/only with redirectTo/);
    expect(alone.headers['set-cookie']).toBeUndefined();

    const verifier = newVerifier();
    const code = await handoffCode(identity(uniqueEmail('bind-malformed')), {
      redirectTo: PAGE,
      codeChallenge: challengeOf(verifier),
    });
    for (const codeVerifier of ['x'.repeat(42), 'x'.repeat(129), `${verifier.slice(0, 42)} `, 42]) {
      expectError(await exchange({ code, codeVerifier }), 400, 'VALIDATION_ERROR');
    }
    // Refused by validation before it was looked at, the code still works with its verifier.
    expect((await exchange({ code, codeVerifier: verifier })).statusCode).toBe(200);
  });
});
