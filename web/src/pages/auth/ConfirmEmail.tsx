// /confirm-email: where the link of an email change lands (mailed to the new address). Opening it
// changes nothing: the change is confirmed by a click, signed in to the account that asked for it
// (the API refuses any other caller). Whoever owns the new address may open a link someone else
// asked for; confirming on load would move a stranger's account onto their address.
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useSession } from '../../api/hooks';
import { api, reloadMe } from '../../api/session';
import { Alert, Notice, useSubmit } from '../../ui/form';
import { Link, useLocation, useMailedToken } from '../../router';
import { AuthCard } from './shared';
import { useAppConfig } from '../../api/app-config';

export function ConfirmEmail() {
  const { path } = useLocation();
  // Read, then dropped from the address bar (no live token in a history or a log).
  const token = useMailedToken();
  const appName = useAppConfig()?.brand.name;
  const session = useSession();
  const [changed, setChanged] = useState(false);
  const { busy, problem, run } = useSubmit();
  const here = `${path}?token=${encodeURIComponent(token ?? '')}`;

  const confirm = () =>
    run(async () => {
      const { error } = await api.POST('/api/v1/auth/confirm-email-change', { body: { token: token ?? '' } });
      if (error) return toProblem(error);
      setChanged(true);
      void reloadMe();
      return null;
    });

  if (!token) {
    return (
      <AuthCard title="Confirm your new email">
        <Alert>This link has no token. Open the link from the mail again.</Alert>
      </AuthCard>
    );
  }
  if (changed) {
    return (
      <AuthCard title="Confirm your new email">
        <Notice>Email address changed</Notice>
        <p>
          <Link to="/account">Back to your account</Link>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Confirm your new email">
      {problem ? (
        <Alert>
          {problem.message ?? Object.values(problem.fields).join(' ')}
          {problem.code === 'VALIDATION_ERROR' ? ' The link may have expired or been used already.' : null}
        </Alert>
      ) : null}
      {session.status === 'loading' ? <p role="status">Loading…</p> : null}
      {session.status === 'signed-out' ? (
        <>
          <p>
            Someone asked to move {appName ? `${appName} ` : 'an '}account to this email address. To confirm,{' '}
            <Link to={`/sign-in?next=${encodeURIComponent(here)}`}>sign in</Link> to the account that asked, then
            confirm here.
          </p>
          <p>If you did not ask for this, ignore the mail: nothing changes.</p>
        </>
      ) : null}
      {session.status === 'signed-in' ? (
        <>
          <p>
            You are signed in as <strong>{session.user.email}</strong>. Confirm to move this account to the address the
            link was mailed to. Only the account that asked for the change can confirm it.
          </p>
          <div className="actions">
            <button type="button" className="primary" onClick={() => void confirm()} disabled={busy}>
              Confirm new email address
            </button>
          </div>
        </>
      ) : null}
    </AuthCard>
  );
}
