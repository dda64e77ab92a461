// /invitations/accept?token=…: what the invitation offers (the organization, who invited, the role),
// then accept (signed in with the invited address) or decline (no sign-in).
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { when } from '../../ui/format';
import { api, publicApi, sessionStore } from '../../api/session';
import { Alert, Notice, useSubmit } from '../../ui/form';
import { Link, useLocation, useMailedToken } from '../../router';
import { AuthCard } from './shared';

export function AcceptInvitation() {
  const { path } = useLocation();
  const token = useMailedToken();
  const session = sessionStore.get();
  const [done, setDone] = useState<{ kind: 'accepted'; orgId: string } | { kind: 'declined' } | null>(null);
  const { busy, problem, run } = useSubmit();
  const here = `${path}?token=${encodeURIComponent(token ?? '')}`;
  const preview = useLoad(`invitation:${token ?? ''}`, () =>
    token
      ? publicApi.POST('/api/v1/invitations/preview', { body: { token } })
      : Promise.resolve({ data: undefined, error: undefined }),
  );
  const offer = preview.data;

  const accept = () =>
    run(async () => {
      const { data, error } = await api.POST('/api/v1/invitations/accept', { body: { token: token ?? '' } });
      if (error) return toProblem(error);
      setDone({ kind: 'accepted', orgId: data.organizationId });
      return null;
    });
  const decline = () =>
    run(async () => {
      const { error } = await publicApi.POST('/api/v1/invitations/decline', { body: { token: token ?? '' } });
      if (error) return toProblem(error);
      setDone({ kind: 'declined' });
      return null;
    });

  if (done?.kind === 'accepted') {
    return (
      <AuthCard title="Invitation">
        <Notice>Invitation accepted</Notice>
        <p>
          <Link to={`/orgs/${done.orgId}/members`}>Open the organization</Link>
        </p>
      </AuthCard>
    );
  }
  if (done?.kind === 'declined') {
    return (
      <AuthCard title="Invitation">
        <Notice>Invitation declined</Notice>
      </AuthCard>
    );
  }

  const signedIn = session.status === 'signed-in';
  if (token && preview.problem) {
    return (
      <AuthCard title="Invitation">
        <Alert>
          This invitation is no longer valid: it expired, was used, declined or revoked. Ask the person who invited you
          for a new one.
        </Alert>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={offer ? `Join ${offer.organization.name}` : 'You are invited'}>
      {!token ? <Alert>This link has no token. Open the link from the mail again.</Alert> : null}
      {offer ? (
        <div className="invitation-offer" data-testid="invitation-offer">
          {offer.organization.logoUrl ? (
            <img src={offer.organization.logoUrl} alt="" className="org-logo" width={48} height={48} />
          ) : null}
          <p>
            {offer.inviter.fullName ?? 'Someone'} invited <strong>{offer.email}</strong> to join{' '}
            <strong>{offer.organization.name}</strong> as <strong>{offer.roleName}</strong>. The invitation expires{' '}
            {when(offer.expiresAt)}.
          </p>
        </div>
      ) : null}
      {problem ? <Alert>{problem.message ?? Object.values(problem.fields).join(' ')}</Alert> : null}
      {signedIn ? (
        <p>
          You are signed in as <strong>{session.user.email}</strong>. The invitation must have been sent to this
          address.
        </p>
      ) : (
        <p>
          To accept, <Link to={`/sign-in?next=${encodeURIComponent(here)}`}>sign in</Link> or{' '}
          <Link to={`/sign-up?next=${encodeURIComponent(here)}`}>create an account</Link> with the address the
          invitation was sent to.
        </p>
      )}
      <div className="actions">
        {signedIn ? (
          <button type="button" className="primary" onClick={() => void accept()} disabled={busy || !token}>
            Accept invitation
          </button>
        ) : null}
        <button type="button" className="secondary" onClick={() => void decline()} disabled={busy || !token}>
          Decline
        </button>
      </div>
    </AuthCard>
  );
}
