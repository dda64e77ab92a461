// /sign-up: register, then check the mailbox (the link lands on /verify-email). Where the service
// has passwords turned off, accounts come from the other ways to sign in, which the page offers.
import { useState } from 'react';
import { useAppConfig } from '../../api/app-config';
import { toProblem } from '../../api/errors';
import { publicApi } from '../../api/session';
import { Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { Link, useLocation } from '../../router';
import { AuthCard, rememberAfterVerify } from './shared';
import { SocialButtons } from './SignIn';

export function SignUp() {
  const { query } = useLocation();
  const next = query.get('next');
  const [fullName, setFullName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const { busy, problem, run } = useSubmit();
  const passwordOn = useAppConfig()?.signIn.password !== false;

  const submit = () =>
    run(async () => {
      const { error } = await publicApi.POST('/api/v1/auth/register', {
        body: { email: email.trim(), password, ...(fullName.trim() ? { fullName: fullName.trim() } : {}) },
      });
      if (error) return toProblem(error, { CONFLICT: 'email' });
      rememberAfterVerify(next);
      setSentTo(email.trim());
      return null;
    });

  if (sentTo) {
    return (
      <AuthCard title="Check your email">
        <Notice>
          We sent a verification link to <strong>{sentTo}</strong>. Open it to verify your address, then sign in.
        </Notice>
        <p>
          <Link to={`/sign-in?email=${encodeURIComponent(sentTo)}${next ? `&next=${encodeURIComponent(next)}` : ''}`}>
            Go to sign in
          </Link>
        </p>
      </AuthCard>
    );
  }

  return (
    <AuthCard title="Create your account">
      {passwordOn ? null : (
        <p>
          This service does not use passwords: an account is made the first time you sign in with one of the ways below.
          Already have one? <Link to="/sign-in">Sign in</Link>
        </p>
      )}
      {passwordOn ? (
        <Form
          onSubmit={() => void submit()}
          problem={problem}
          fields={['fullName', 'email', 'password']}
          label="Sign up"
        >
          <Field
            label="Full name"
            autoComplete="name"
            value={fullName}
            onChange={setFullName}
            error={problem?.fields.fullName}
          />
          <Field
            label="Email"
            type="email"
            autoComplete="email"
            value={email}
            onChange={setEmail}
            required
            error={problem?.fields.email}
          />
          <Field
            label="Password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={setPassword}
            required
            error={problem?.fields.password}
            hint="At least 8 characters, with an uppercase letter, a lowercase letter and a digit."
          />
          <div className="actions">
            <Submit busy={busy}>Sign up</Submit>
          </div>
        </Form>
      ) : null}
      <SocialButtons divider />
      <p className="small">
        Already have an account?{' '}
        <Link to={next ? `/sign-in?next=${encodeURIComponent(next)}` : '/sign-in'}>Sign in</Link>
      </p>
    </AuthCard>
  );
}
