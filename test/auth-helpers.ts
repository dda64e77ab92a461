// Small helpers for the auth tests: raw HTTP calls that return the response (so tests can assert
// failures), a JWT payload decoder, and forged tokens.
import { createHmac } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { json, type TestApp } from './harness.js';
import { registerUser, uniqueEmail, verifyEmailOf } from './factories.js';

export const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The header and payload of a JWT, without checking anything. */
export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>,
  };
}

/** A JWT with the given payload, signed with `secret` (HS256 unless told otherwise). */
export function signHs256(payload: Record<string, unknown>, secret: string, alg: 'HS256' | 'HS512' = 'HS256'): string {
  const head = `${b64url({ alg, typ: 'JWT' })}.${b64url(payload)}`;
  return `${head}.${createHmac(alg === 'HS256' ? 'sha256' : 'sha512', secret).update(head).digest('base64url')}`;
}

/** The same payload with `alg: none` and no signature. */
export const unsignedJwt = (payload: Record<string, unknown>) => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;

export const bearer = (accessToken: string) => ({ authorization: `Bearer ${accessToken}` });

export const loginRaw = (t: TestApp, email: string, password: string) =>
  t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });

export const refreshRaw = (t: TestApp, refreshToken: string) =>
  t.request({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken } });

export const getMe = (t: TestApp, accessToken: string) => t.request({ method: 'GET', url: '/api/v1/users/me', headers: bearer(accessToken) });

export const listSessions = (t: TestApp, accessToken: string) =>
  t.request({ method: 'GET', url: '/api/v1/users/me/sessions', headers: bearer(accessToken) });

/** A registered and verified account, not signed in (saves a password verification). */
export async function verifiedUser(t: TestApp, label = 'user') {
  const user = await registerUser(t, uniqueEmail(label));
  await verifyEmailOf(t, user.email);
  return user;
}

export function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(json(res)).toMatchObject({ success: false, error: { code, message: expect.any(String), details: expect.any(String) } });
  return json(res).error as { code: string; message: string; details: string };
}

export const MAGIC_LINK_SUBJECT = /sign-in link/i;

/** Asks for a magic link and returns the token of the new mail (waits for that very mail). */
export async function requestMagicLink(t: TestApp, email: string): Promise<{ token: string; mail: string }> {
  const mailsTo = () => t.mail.mails.filter((m) => m.to.includes(email.toLowerCase()) && MAGIC_LINK_SUBJECT.test(m.subject));
  const before = mailsTo().length;
  const res = await t.request({ method: 'POST', url: '/api/v1/auth/magic-link', payload: { email } });
  expect(res.statusCode, res.body).toBe(200);
  const deadline = Date.now() + 5000;
  while (mailsTo().length <= before) {
    if (Date.now() > deadline) throw new Error(`no sign-in mail to ${email}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const mail = mailsTo()[before]!.decoded;
  const m = /http:\/\/app\.test\/magic-link\?token=([A-Za-z0-9_%-]+)/.exec(mail);
  if (!m) throw new Error(`no magic link in: ${mail}`);
  return { token: decodeURIComponent(m[1]!), mail };
}
