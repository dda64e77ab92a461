// /sign-in: password (with the two-factor step when the account asks for it), a sign-in link by
// mail, and Google or GitHub through the API's social sign-in, which comes back to /auth/callback.
import { useState, type MouseEvent } from 'react';
import { toProblem, type Problem } from '../../api/errors';
import { useAppConfig } from '../../api/app-config';
import { useSession } from '../../api/hooks';
import { COOKIE_MODE, publicApi } from '../../api/session';
import { Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { Link, useLocation } from '../../router';
import { AuthCard, finishSignIn, outcomeOf, TwoFactorStep } from './shared';
import { PasskeySignIn } from './PasskeySignIn';
import { socialSignInUrl } from '../../api/handoff';

/** The link of a provider: it starts the flow bound to this tab (api/handoff.ts), then leaves. */
function socialLink(provider: 'google' | 'github') {
  return {
    href: `/api/v1/auth/oauth/${provider}`,
    onClick: (event: MouseEvent<HTMLAnchorElement>) => {
      event.preventDefault();
      void socialSignInUrl(provider).then((url) => window.location.assign(url));
    },
  };
}

/** Google and GitHub, those this service has configured (nothing when neither), after a divider if asked. */
export function SocialButtons({ divider = false }: { divider?: boolean }) {
  const signIn = useAppConfig()?.signIn;
  if (!signIn || (!signIn.google && !signIn.github)) return null;
  return (
    <>
      {divider ? (
        <div className="divider">
          <span>or</span>
        </div>
      ) : null}
      <div className="social" aria-label="Other ways to sign in" role="group">
        {signIn.google ? (
          <a className="button" {...socialLink('google')}>
            Continue with Google
          </a>
        ) : null}
        {signIn.github ? (
          <a className="button" {...socialLink('github')}>
            Continue with GitHub
          </a>
        ) : null}
      </div>
    </>
  );
}

export function SignIn() {
  const { query } = useLocation();
  const next = query.get('next');
  const [email, setEmail] = useState(query.get('email') ?? '');
  const [password, setPassword] = useState('');
  const [twoFactor, setTwoFactor] = useState(false);
  const [unverified, setUnverified] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const { busy, problem, setProblem, run } = useSubmit();
  const session = useSession();
  // The methods this service offers (all of them until it is known).
  const methods = useAppConfig()?.signIn;
  const passwordOn = methods?.password !== false;
  const linkOn = methods?.magicLink !== false;
  const signedOutBecause =
    query.get('deleted') === '1'
      ? 'Your account was deleted, with everything it held. Thank you for having used it.'
      : session.status === 'signed-out'
        ? session.reason
        : undefined;

  const signIn = (twoFactorCode?: string) =>
    publicApi.POST('/api/v1/auth/login', {
      body: { email: email.trim(), password, ...(twoFactorCode ? { twoFactorCode } : {}) },
      headers: COOKIE_MODE,
    });

  const submitPassword = () =>
    run(async () => {
      setNotice(null);
      setUnverified(false);
      const outcome = outcomeOf(await signIn(), { AUTHENTICATION_ERROR: 'password', ACCOUNT_LOCKED: 'password' });
      if (outcome.done) return finishSignIn(next);
      if ('twoFactor' in outcome) return setTwoFactor(true);
      if (outcome.problem.code === 'EMAIL_NOT_VERIFIED') setUnverified(true);
      return outcome.problem;
    });

  const sendLink = () =>
    run(async (): Promise<Problem | null> => {
      setNotice(null);
      const { error } = await publicApi.POST('/api/v1/auth/magic-link', { body: { email: email.trim() } });
      if (error) return toProblem(error);
      setNotice(`If an account uses ${email.trim()}, a sign-in link is on its way. It works for 15 minutes.`);
      return null;
    });

  const resend = () =>
    run(async (): Promise<Problem | null> => {
      const { error } = await publicApi.POST('/api/v1/auth/resend-verification', { body: { email: email.trim() } });
      if (error) return toProblem(error);
      setUnverified(false);
      setNotice('A new verification link is on its way.');
      return null;
    });

  if (twoFactor) {
    return (
      <AuthCard title="Two-factor sign-in">
        <TwoFactorStep
          submit={async (code) => {
            const outcome = outcomeOf(await signIn(code), { AUTHENTICATION_ERROR: 'code', ACCOUNT_LOCKED: 'code' });
            if (outcome.done) finishSignIn(next);
            return 'problem' in outcome ? outcome.problem : null;
          }}
          onCancel={() => {
            setTwoFactor(false);
            setPassword('');
            setProblem(null);
          }}
        />
      </AuthCard>
    );
  }

  return (
    <AuthCard title="Sign in">
      {(notice ?? signedOutBecause) ? <Notice>{notice ?? signedOutBecause}</Notice> : null}
      <Form
        onSubmit={() => void (passwordOn ? submitPassword() : sendLink())}
        problem={problem}
        fields={['email', 'password']}
        label={passwordOn ? 'Sign in with a password' : 'Sign in by email'}
      >
        <Field
          label="Email"
          type="email"
          autoComplete="email"
          value={email}
          onChange={setEmail}
          required
          error={problem?.fields.email}
        />
        {passwordOn ? (
          <Field
            label="Password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={setPassword}
            required
            error={problem?.fields.password}
          />
        ) : null}
        {unverified ? (
          <p>
            Your address is not verified yet.{' '}
            <button type="button" className="link" onClick={() => void resend()}>
              Send the verification link again
            </button>
          </p>
        ) : null}
        <div className="actions">
          {passwordOn ? <Submit busy={busy}>Sign in</Submit> : null}
          {linkOn ? (
            <button
              type={passwordOn ? 'button' : 'submit'}
              className={passwordOn ? 'secondary' : 'primary'}
              onClick={passwordOn ? () => void sendLink() : undefined}
              disabled={busy}
            >
              Email me a sign-in link
            </button>
          ) : null}
        </div>
        {passwordOn ? (
          <p className="small">
            <Link to="/forgot-password">Forgot your password?</Link>
          </p>
        ) : null}
      </Form>
      <div className="divider">
        <span>or</span>
      </div>
      <PasskeySignIn email={email} next={next} />
      <SocialButtons />
      <p className="small">
        New here? <Link to={next ? `/sign-up?next=${encodeURIComponent(next)}` : '/sign-up'}>Create an account</Link>
      </p>
    </AuthCard>
  );
}
