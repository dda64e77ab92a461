// /auth/callback: where social sign-in ends. The API redirects here with `#code=<one-time code>`
// (or `#error=<CODE>&error_description=<text>`); the code is traded for a sign-in with
// POST /auth/oauth/exchange, which may ask for the second factor (POST /auth/two-factor/login).
import { useEffect, useState } from 'react';
import { localProblem, toProblem } from '../../api/errors';
import { takeVerifier } from '../../api/handoff';
import { once } from '../../api/once';
import { COOKIE_MODE, publicApi } from '../../api/session';
import { Alert } from '../../ui/form';
import { Link } from '../../router';
import { AuthCard, finishSignIn, outcomeOf, TwoFactorStep, type SignInOutcome } from './shared';

function readFragment(): { code: string | null; error: string | null; description: string | null } {
  const params = new URLSearchParams(window.location.hash.slice(1));
  return { code: params.get('code'), error: params.get('error'), description: params.get('error_description') };
}

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
      if (!codeVerifier) return { done: false, problem: localProblem('This sign-in was not started in this browser tab. Start it again from the sign-in page.') };
      return outcomeOf(await publicApi.POST('/api/v1/auth/oauth/exchange', { body: { code, codeVerifier }, headers: COOKIE_MODE }));
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

  const failed = fragment.error
    ? `${fragment.description ?? 'The sign-in did not complete.'} (${fragment.error})`
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
              await publicApi.POST('/api/v1/auth/two-factor/login', { body: { twoFactorToken: token, code }, headers: COOKIE_MODE }),
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
