// /auth/callback: where social sign-in ends. The API redirects here with `#code=<one-time code>`
// (or `#error=<CODE>&error_description=<text>`); the code is traded for a sign-in with
// POST /auth/oauth/exchange, which may ask for the second factor (POST /auth/two-factor/login).
// Anyone can send a person a link to this page with a fragment of their choosing, so a failure is
// told in this page's own words for its code; error_description, and any code not listed, is never
// shown (a phishing text must not appear under this site's name).
import { useEffect, useState } from 'react';
import { localProblem, toProblem } from '../../api/errors';
import { takeVerifier } from '../../api/handoff';
import { once } from '../../api/once';
import { COOKIE_MODE, publicApi } from '../../api/session';
import { Alert } from '../../ui/form';
import { Link } from '../../router';
import { AuthCard, finishSignIn, outcomeOf, TwoFactorStep, type SignInOutcome } from './shared';

function readFragment(): { code: string | null; error: string | null } {
  const params = new URLSearchParams(window.location.hash.slice(1));
  return { code: params.get('code'), error: params.get('error') };
}

/** What a failed sign-in says, by the error code the hand-off sent. */
const FAILURES: Record<string, string> = {
  AUTHENTICATION_ERROR:
    'The provider did not sign you in, or the sign-in was refused. Start again from the sign-in page.',
  VALIDATION_ERROR:
    'The sign-in could not be completed: the provider did not share a usable email address, or the sign-in request expired. Start again from the sign-in page.',
  EMAIL_NOT_VERIFIED:
    'The provider has not verified your email address. Verify it with the provider, then sign in again.',
  ACCOUNT_LOCKED: 'This account is locked for a while after too many failed attempts. Try again later.',
  SERVICE_UNAVAILABLE: 'The sign-in provider could not be reached. Try again shortly.',
  RATE_LIMIT_EXCEEDED: 'Too many sign-in attempts. Wait a minute, then try again.',
  NOT_FOUND: 'This way of signing in is not available.',
  SSO_REQUIRED: 'Your organization requires you to sign in with its single sign-on.',
  SSO_DOMAIN_MISMATCH: 'The identity provider signed you in with an address outside your organization’s domains.',
  SSO_ASSERTION_INVALID: 'The identity provider’s answer could not be accepted. Start again from the sign-in page.',
  PLAN_LIMIT_EXCEEDED: 'Your organization has reached its plan’s member limit. Ask its owner for help.',
  INTERNAL_ERROR: 'Something went wrong on our side. Try again shortly.',
};
const GENERIC_FAILURE = 'The sign-in did not complete. Start again from the sign-in page.';

/** The message for an error code of the fragment: the page's own words, never the link's. */
const failureMessage = (error: string) => (Object.hasOwn(FAILURES, error) ? FAILURES[error]! : GENERIC_FAILURE);

export function AuthCallback() {
  const [fragment] = useState(readFragment);
  const [outcome, setOutcome] = useState<SignInOutcome | null>(null);

  useEffect(() => {
    // The code works once: keep it out of the history and the address bar.
    if (window.location.hash) window.history.replaceState(null, '', window.location.pathname);
    const code = fragment.code;
    if (!code) return;
    let live = true;
    once(`oauth:${code}`, async (): Promise<SignInOutcome> => {
      // Only a sign-in this tab started: a code arriving without its verifier is not exchanged.
      const codeVerifier = takeVerifier();
      if (!codeVerifier)
        return {
          done: false,
          problem: localProblem(
            'This sign-in was not started in this browser tab. Start it again from the sign-in page.',
          ),
        };
      return outcomeOf(
        await publicApi.POST('/api/v1/auth/oauth/exchange', { body: { code, codeVerifier }, headers: COOKIE_MODE }),
      );
    }).then(
      (o) => {
        if (!live) return;
        if (o.done) finishSignIn(null);
        else setOutcome(o);
      },
      (err: unknown) => live && setOutcome({ done: false, problem: toProblem(err) }),
    );
    return () => {
      live = false;
    };
  }, [fragment]);

  const failed =
    fragment.error !== null
      ? failureMessage(fragment.error)
      : !fragment.code
        ? 'This page is where social sign-in ends; it was opened without a sign-in code.'
        : outcome && 'problem' in outcome
          ? (outcome.problem.message ?? 'The sign-in did not complete.')
          : null;

  return (
    <AuthCard title="Signing you in">
      {failed ? (
        <>
          <Alert>{failed}</Alert>
          <p>
            <Link to="/sign-in">Back to sign in</Link>
          </p>
        </>
      ) : outcome && 'twoFactor' in outcome ? (
        <TwoFactorStep
          submit={async (code) => {
            const token = outcome.twoFactorToken;
            if (!token) return { code: 'VALIDATION_ERROR', message: 'The sign-in expired; start again.', fields: {} };
            const next = outcomeOf(
              await publicApi.POST('/api/v1/auth/two-factor/login', {
                body: { twoFactorToken: token, code },
                headers: COOKIE_MODE,
              }),
              { AUTHENTICATION_ERROR: 'code' },
            );
            if (next.done) finishSignIn(null);
            return 'problem' in next ? next.problem : null;
          }}
        />
      ) : (
        <p role="status">Signing you in…</p>
      )}
    </AuthCard>
  );
}
