// The pages mailed links land on: /verify-email, /reset-password, /forgot-password, /magic-link.
import { useEffect, useState } from 'react';
import { toProblem, type Problem } from '../../api/errors';
import { once } from '../../api/once';
import { COOKIE_MODE, publicApi } from '../../api/session';
import { Alert, Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { Link, useMailedToken } from '../../router';
import { afterVerify, AuthCard, finishSignIn, outcomeOf, TwoFactorStep, type SignInOutcome } from './shared';

const NO_TOKEN: Problem = {
  code: 'VALIDATION_ERROR',
  message: 'This link has no token. Open the link from the mail again.',
  fields: {},
};

/** The outcome of calling `call` once for this page's token (null while it runs). */
function useTokenCall<T>(kind: string, token: string | null, call: (token: string) => Promise<T>): T | Problem | null {
  const [result, setResult] = useState<T | Problem | null>(token ? null : NO_TOKEN);
  useEffect(() => {
    if (!token) return;
    let live = true;
    once(`${kind}:${token}`, () => call(token)).then(
      (r) => live && setResult(r),
      (err: unknown) => live && setResult(toProblem(err)),
    );
    return () => {
      live = false;
    };
  }, [kind, token]);
  return result;
}

const isProblem = (x: unknown): x is Problem => typeof x === 'object' && x !== null && 'fields' in x && 'code' in x;

export function VerifyEmail() {
  const token = useMailedToken();
  // The page the sign-up began on (an invitation), if it was kept: sign-in goes back there.
  const [next] = useState(afterVerify);
  const result = useTokenCall('verify', token, async (t) => {
    const { error } = await publicApi.POST('/api/v1/auth/verify-email', { body: { token: t } });
    return error ? toProblem(error) : ('verified' as const);
  });
  return (
    <AuthCard title="Verify your email">
      {result === null ? <p role="status">Verifying…</p> : null}
      {result === 'verified' ? (
        <>
          <Notice>Email verified</Notice>
          <p>
            <Link to={next ? `/sign-in?next=${encodeURIComponent(next)}` : '/sign-in'}>Sign in</Link>
          </p>
        </>
      ) : null}
      {isProblem(result) ? (
        <>
          <Alert>{result.message ?? 'This link cannot be used.'} The link may have expired or been used already.</Alert>
          <p>
            <Link to="/sign-in">Go to sign in</Link> to ask for a new one.
          </p>
        </>
      ) : null}
    </AuthCard>
  );
}

export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      const { error } = await publicApi.POST('/api/v1/auth/password/forgot', { body: { email: email.trim() } });
      if (error) return toProblem(error);
      setSent(true);
      return null;
    });
  return (
    <AuthCard title="Reset your password">
      {sent ? (
        <Notice>
          If an account uses {email.trim()}, a link to set a new password is on its way. It works for an hour.
        </Notice>
      ) : (
        <Form onSubmit={() => void submit()} problem={problem} fields={['email']} label="Ask for a reset link">
          <Field
            label="Email"
            type="email"
            autoComplete="email"
            value={email}
            onChange={setEmail}
            required
            error={problem?.fields.email}
          />
          <div className="actions">
            <Submit busy={busy}>Send reset link</Submit>
          </div>
        </Form>
      )}
      <p className="small">
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthCard>
  );
}

export function ResetPassword() {
  const token = useMailedToken();
  const [password, setPassword] = useState('');
  const [changed, setChanged] = useState(false);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      if (!token) return NO_TOKEN;
      const { error } = await publicApi.POST('/api/v1/auth/password/reset', { body: { token, newPassword: password } });
      if (error) return toProblem(error);
      setChanged(true);
      return null;
    });
  return (
    <AuthCard title="Set a new password">
      {changed ? (
        <>
          <Notice>Password changed</Notice>
          <p>
            Every session was signed out. <Link to="/sign-in">Sign in</Link> with your new password.
          </p>
        </>
      ) : (
        <Form onSubmit={() => void submit()} problem={problem} fields={['newPassword']} label="Set a new password">
          <Field
            label="New password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={setPassword}
            required
            error={problem?.fields.newPassword}
            hint="At least 8 characters, with an uppercase letter, a lowercase letter and a digit."
          />
          <div className="actions">
            <Submit busy={busy}>Set new password</Submit>
          </div>
        </Form>
      )}
    </AuthCard>
  );
}

export function MagicLink() {
  const token = useMailedToken();
  const verify = async (t: string, twoFactorCode?: string): Promise<SignInOutcome> =>
    outcomeOf(
      await publicApi.POST('/api/v1/auth/magic-link/verify', {
        body: { token: t, ...(twoFactorCode ? { twoFactorCode } : {}) },
        headers: COOKIE_MODE,
      }),
      { AUTHENTICATION_ERROR: 'code' },
    );
  const result = useTokenCall('magic', token, (t) => verify(t));
  useEffect(() => {
    if (result && !isProblem(result) && result.done) finishSignIn(null);
  }, [result]);
  return (
    <AuthCard title="Signing you in">
      {result === null || (!isProblem(result) && result.done) ? <p role="status">Signing you in…</p> : null}
      {result && !isProblem(result) && 'twoFactor' in result && token ? (
        <TwoFactorStep
          submit={async (code) => {
            const outcome = await verify(token, code);
            if (outcome.done) finishSignIn(null);
            return 'problem' in outcome ? outcome.problem : null;
          }}
        />
      ) : null}
      {result && (isProblem(result) || 'problem' in result) ? (
        <>
          <Alert>
            {(isProblem(result) ? result : result.problem).message ?? 'This link cannot be used.'} Sign-in links work
            once, for 15 minutes.
          </Alert>
          <p>
            <Link to="/sign-in">Go to sign in</Link>
          </p>
        </>
      ) : null}
    </AuthCard>
  );
}
