// /confirm-email: where the link of an email change lands (mailed to the new address). The token
// moves the account to that address; a signed-in session reloads the person to show it.
import { useEffect, useState } from 'react';
import { toProblem, type Problem } from '../../api/errors';
import { useSession } from '../../api/hooks';
import { once } from '../../api/once';
import { publicApi, reloadMe } from '../../api/session';
import { Alert, Notice } from '../../ui/form';
import { Link, useMailedToken } from '../../router';
import { AuthCard } from './shared';

export function ConfirmEmail() {
  const token = useMailedToken();
  const session = useSession();
  const [result, setResult] = useState<'changed' | Problem | null>(token ? null : { code: 'VALIDATION_ERROR', message: 'This link has no token. Open the link from the mail again.', fields: {} });
  useEffect(() => {
    if (!token) return;
    let live = true;
    once(`confirm-email:${token}`, async () => {
      const { error } = await publicApi.POST('/api/v1/auth/confirm-email-change', { body: { token } });
      return error ? toProblem(error) : ('changed' as const);
    }).then(
      (r) => {
        if (!live) return;
        setResult(r);
        if (r === 'changed') void reloadMe();
      },
      (err: unknown) => live && setResult(toProblem(err)),
    );
    return () => {
      live = false;
    };
  }, [token]);
  const home = session.status === 'signed-in' ? '/account' : '/sign-in';
  return (
    <AuthCard title="Confirm your new email">
      {result === null ? <p role="status">Confirming…</p> : null}
      {result === 'changed' ? (
        <>
          <Notice>Email address changed</Notice>
          <p>
            <Link to={home}>{session.status === 'signed-in' ? 'Back to your account' : 'Sign in'}</Link>
          </p>
        </>
      ) : null}
      {result !== null && result !== 'changed' ? (
        <>
          <Alert>{result.message ?? 'This link cannot be used.'} The link may have expired or been used already.</Alert>
          <p>
            <Link to={home}>{session.status === 'signed-in' ? 'Back to your account' : 'Go to sign in'}</Link>
          </p>
        </>
      ) : null}
    </AuthCard>
  );
}
