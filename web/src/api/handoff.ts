// Social sign-in bound to this tab (docs/api.md#social-sign-in): before leaving for the provider the
// page draws a random verifier, keeps it in sessionStorage (this tab only; it is no credential by
// itself) and sends its SHA-256 as codeChallenge; /auth/callback sends the verifier with the code.
// A code this tab did not ask for (one an attacker finished in their own browser and sent here)
// then fails its exchange instead of signing this browser into someone else's account.
const KEY = 'tenantry.oauth.verifier';

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** The URL that starts a bound sign-in with `provider`, its verifier kept for the callback. */
export async function socialSignInUrl(provider: 'google' | 'github'): Promise<string> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  sessionStorage.setItem(KEY, verifier);
  const redirectTo = `${window.location.origin}/auth/callback`;
  return `/api/v1/auth/oauth/${provider}?${new URLSearchParams({ redirectTo, codeChallenge: challenge }).toString()}`;
}

/** The verifier of the sign-in this tab started, taken once; null if it started none. */
export function takeVerifier(): string | null {
  const verifier = sessionStorage.getItem(KEY);
  sessionStorage.removeItem(KEY);
  return verifier;
}
