// Accounts made the way a user makes them: over HTTP, with the link from the real mail.
import { expect } from 'vitest';
import { json, type TestApp } from './harness.js';

export const PASSWORD = 'Correct-Horse-9';
let counter = 0;

export const uniqueEmail = (label = 'user') => `${label}-${Date.now().toString(36)}-${++counter}@example.com`;

export async function registerUser(t: TestApp, email = uniqueEmail(), password = PASSWORD, fullName = 'Test User') {
  const res = await t.request({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password, fullName } });
  expect(res.statusCode, res.body).toBe(201);
  return { email, password, userId: json(res).userId as string };
}

export async function verifyEmailOf(t: TestApp, email: string) {
  const token = await t.mail.tokenFrom(email, /Verify your email/, '/verify-email');
  const res = await t.request({ method: 'POST', url: '/api/v1/auth/verify-email', payload: { token } });
  expect(res.statusCode, res.body).toBe(200);
}

export async function login(t: TestApp, email: string, password = PASSWORD, headers: Record<string, string> = {}) {
  const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, headers });
  expect(res.statusCode, res.body).toBe(200);
  const body = json(res);
  return { accessToken: body.accessToken as string, refreshToken: body.refreshToken as string, user: body.user };
}

/** A verified account, signed in. */
export async function signedInUser(t: TestApp, label = 'user') {
  const { email, password, userId } = await registerUser(t, uniqueEmail(label));
  await verifyEmailOf(t, email);
  const tokens = await login(t, email, password);
  return { email, password, userId, ...tokens, auth: { authorization: `Bearer ${tokens.accessToken}` } };
}
