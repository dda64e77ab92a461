// One endpoint's deliveries, newest first: status, how many attempts were made, the last answer or
// error, the body sent, each attempt (DeliveryAttempts.tsx), and retry; and queuing again every
// failed delivery since a time (recover).
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { when } from '../../ui/format';
import { Link } from '../../router';
import { Section } from '../../ui/Shell';
import { DeliveryAttempts } from './DeliveryAttempts';

export function Deliveries({ orgId, endpointId }: { orgId: string; endpointId: string }) {
  const path = { orgId, id: endpointId };
  const endpoint = useLoad(`webhook:${endpointId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/webhooks/{id}', { params: { path } }),
  );
  const list = useLoad(`deliveries:${endpointId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/webhooks/{id}/deliveries', { params: { path, query: { pageSize: 50 } } }),
  );
  const action = useSubmit();
  const recovery = useSubmit();
  const [since, setSince] = useState('');
  const [queued, setQueued] = useState<number | null>(null);
  const recover = () =>
    recovery.run(async () => {
      setQueued(null);
      if (!since)
        return { code: 'VALIDATION_ERROR', message: null, fields: { since: 'Choose the time to start from.' } };
      const { data, error } = await api.POST('/api/v1/organizations/{orgId}/webhooks/{id}/recover', {
        params: { path },
        body: { since: new Date(since).toISOString() },
      });
      if (error) return toProblem(error);
      setQueued(data.data.queued);
      list.reload();
      return null;
    });
  const retry = (deliveryId: string) =>
    action.run(async () => {
      const { error } = await api.POST('/api/v1/organizations/{orgId}/webhooks/{id}/deliveries/{deliveryId}/retry', {
        params: { path: { ...path, deliveryId } },
      });
      if (error) return toProblem(error);
      list.reload();
      return null;
    });
  const test = () =>
    action.run(async () => {
      const { error } = await api.POST('/api/v1/organizations/{orgId}/webhooks/{id}/test', { params: { path } });
      if (error) return toProblem(error);
      list.reload();
      return null;
    });

  return (
    <Section title="Deliveries">
      <p>
        <Link to={`/orgs/${orgId}/webhooks`}>← Endpoints</Link>
        {endpoint.data ? (
          <>
            {' '}
            · <strong className="wrap">{endpoint.data.data.url}</strong>
          </>
        ) : null}
      </p>
      {list.problem ? <Alert>{list.problem.message}</Alert> : null}
      {action.problem ? <Alert>{action.problem.message}</Alert> : null}
      <div className="actions">
        <button type="button" className="secondary" disabled={action.busy} onClick={() => void test()}>
          Send test
        </button>
        <button type="button" className="secondary" disabled={list.loading} onClick={list.reload}>
          Refresh
        </button>
      </div>
      {list.data && list.data.data.length === 0 ? <p>No deliveries yet.</p> : null}
      <div className="table-wrap">
        <table aria-label="Deliveries">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Created</th>
              <th scope="col">Next attempt</th>
              <th scope="col">Details</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data?.data.map((d) => (
              <tr key={d.id}>
                <td>
                  <code>{d.eventType}</code>
                </td>
                <td>
                  <span className={`badge status-${d.status}`}>{d.status}</span>
                </td>
                <td>{d.attempts}</td>
                <td className="wrap">{d.responseStatus ? `HTTP ${d.responseStatus}` : (d.lastError ?? '—')}</td>
                <td>{when(d.createdAt)}</td>
                <td>{when(d.nextRetryAt)}</td>
                <td>
                  <details className="payload">
                    <summary>Body and answer</summary>
                    <pre>{JSON.stringify(d.payload, null, 2)}</pre>
                    {d.responseBody ? <pre>{d.responseBody}</pre> : null}
                    {d.deliveredAt ? <p className="small">Delivered {when(d.deliveredAt)}</p> : null}
                  </details>
                  <DeliveryAttempts orgId={orgId} endpointId={endpointId} delivery={d} />
                </td>
                <td>
                  {d.status === 'failed' || d.status === 'pending' ? (
                    <button
                      type="button"
                      className="secondary small"
                      disabled={action.busy}
                      onClick={() => void retry(d.id)}
                    >
                      Retry
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3>Queue failed deliveries again</h3>
      <Form
        onSubmit={() => void recover()}
        problem={recovery.problem}
        fields={['since']}
        className="form inline-form"
        label="Queue failed deliveries again"
      >
        {queued !== null ? (
          <Notice>{queued === 1 ? '1 delivery queued again.' : `${queued} deliveries queued again.`}</Notice>
        ) : null}
        <Field
          label="Failed since"
          type="datetime-local"
          value={since}
          onChange={setSince}
          required
          error={recovery.problem?.fields.since}
        />
        <div className="actions">
          <Submit busy={recovery.busy} className="secondary">
            Queue again
          </Submit>
        </div>
      </Form>
    </Section>
  );
}
