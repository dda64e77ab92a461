// TOTP (RFC 6238; docs/api.md#two-factor-authentication): SHA-1, 6 digits, 30 s steps, 20-byte secret in base32, a window
// of one step either side. Pure: the caller passes the time.
import { Secret, TOTP } from 'otpauth';

const PERIOD = 30;
const DIGITS = 6;

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secretBase32: string, label = 'user') {
  return new TOTP({
    issuer: 'Tenantry',
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD,
    secret: Secret.fromBase32(secretBase32),
  });
}

export function totpUri(secretBase32: string, accountEmail: string): string {
  return totp(secretBase32, accountEmail).toString();
}

/** The time step a code belongs to, or null when it matches none within one step of `now`. */
export function matchTotp(secretBase32: string, code: string, now: Date): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp(secretBase32).validate({ token: code, timestamp: now.getTime(), window: 1 });
  if (delta === null) return null;
  return Math.floor(now.getTime() / 1000 / PERIOD) + delta;
}
