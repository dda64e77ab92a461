// The account's sessions: each one's device and last use, revoke one, or sign out everywhere.
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api, signedOutHere } from '../../api/session';
import { Alert, useSubmit } from '../../ui/form';
import { device, when } from '../../ui/format';
import { navigate } from '../../router';
import { Section } from '../../ui/Shell';

export function Sessions() {
  const list = useLoad('sessions', () =>
    api.GET('/api/v1/users/me/sessions', { params: { query: { pageSize: 100 } } }),
  );
  const { busy, problem, run } = useSubmit();
  const revoke = (sessionId: string) =>
    run(async () => {
      const { error } = await api.DELETE('/api/v1/users/me/sessions/{sessionId}', { params: { path: { sessionId } } });
      if (error) return toProblem(error);
      list.reload();
      return null;
    });
  const everywhere = () =>
    run(async () => {
      const { error } = await api.DELETE('/api/v1/users/me/sessions');
      if (error) return toProblem(error);
      signedOutHere();
      navigate('/sign-in', { replace: true });
      return null;
    });
  return (
    <Section title="Sessions">
      {problem?.message || list.problem?.message ? <Alert>{problem?.message ?? list.problem?.message}</Alert> : null}
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Device</th>
              <th scope="col">IP address</th>
              <th scope="col">Last used</th>
              <th scope="col">Started</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data?.sessions.map((s) => (
              <tr key={s.id}>
                <td className="wrap" title={s.userAgent ?? undefined}>
                  {device(s.userAgent)}
                </td>
                <td>{s.ipAddress ?? '—'}</td>
                <td>{when(s.lastUsedAt)}</td>
                <td>{when(s.createdAt)}</td>
                <td>
                  {s.isCurrent ? (
                    <span className="badge">This session</span>
                  ) : (
                    <button type="button" className="secondary small" disabled={busy} onClick={() => void revoke(s.id)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="actions">
        <button type="button" className="danger" disabled={busy} onClick={() => void everywhere()}>
          Sign out everywhere
        </button>
      </div>
    </Section>
  );
}
