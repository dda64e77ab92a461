// "Sign in with a passkey" on /sign-in: the options (by the email typed, or none for a discoverable
// passkey), the browser's ceremony (@simplewebauthn/browser), then the verify, which answers as login
// does; a passkey that did not verify the user on a two-factor account leads to the code step.
import { useState } from 'react';
import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { toProblem, localProblem, type Problem } from '../../api/errors';
import { COOKIE_MODE, publicApi } from '../../api/session';
import { Alert, useSubmit } from '../../ui/form';
import { finishSignIn, outcomeOf, TwoFactorStep } from './shared';

/** What a ceremony the browser refused or the person cancelled says. */
export function ceremonyProblem(err: unknown): Problem {
  const name = (err as { name?: string } | null)?.name;
  if (name === 'NotAllowedError' || name === 'AbortError')
    return localProblem('The passkey was not used: the request was cancelled or timed out.');
  return localProblem(
    `This browser could not use a passkey${err instanceof Error && err.message ? ` (${err.message})` : ''}.`,
  );
}

export function PasskeySignIn({ email, next }: { email: string; next: string | null }) {
  const [ticket, setTicket] = useState<string | null>(null);
  const { busy, problem, run } = useSubmit();

  const signIn = () =>
    run(async () => {
      const address = email.trim();
      const start = await publicApi.POST('/api/v1/auth/passkeys/authentication/options', {
        body: address ? { email: address } : {},
      });
      if (!start.data) return toProblem(start.error);
      let response;
      try {
        response = await startAuthentication({
          optionsJSON: start.data.options as PublicKeyCredentialRequestOptionsJSON,
        });
      } catch (err) {
        return ceremonyProblem(err);
      }
      const outcome = outcomeOf(
        await publicApi.POST('/api/v1/auth/passkeys/authentication/verify', {
          body: { challengeId: start.data.challengeId, response: { ...response, response: { ...response.response } } },
          headers: COOKIE_MODE,
        }),
      );
      if (outcome.done) return finishSignIn(next);
      if ('twoFactor' in outcome) return setTicket(outcome.twoFactorToken ?? null);
      return outcome.problem;
    });

  if (ticket) {
    return (
      <TwoFactorStep
        submit={async (code) => {
          const outcome = outcomeOf(
            await publicApi.POST('/api/v1/auth/two-factor/login', {
              body: { twoFactorToken: ticket, code },
              headers: COOKIE_MODE,
            }),
            {
              AUTHENTICATION_ERROR: 'code',
            },
          );
          if (outcome.done) finishSignIn(next);
          return 'problem' in outcome ? outcome.problem : null;
        }}
        onCancel={() => setTicket(null)}
      />
    );
  }
  return (
    <div className="actions">
      {problem?.message ? <Alert>{problem.message}</Alert> : null}
      <button type="button" className="secondary" onClick={() => void signIn()} disabled={busy}>
        Sign in with a passkey
      </button>
    </div>
  );
}
