// The attempts of one delivery, oldest first, folded in its row of the deliveries table: each with its
// number, the status answered or the error, how long it took and when. Loaded when first opened.
import { useState } from 'react';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { when } from '../../ui/format';

type Delivery = { id: string; eventType: string; attempts: number };

export function DeliveryAttempts({
  orgId,
  endpointId,
  delivery,
}: {
  orgId: string;
  endpointId: string;
  delivery: Delivery;
}) {
  const [open, setOpen] = useState(false);
  return (
    <details className="payload" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Attempts</summary>
      {open ? <AttemptList orgId={orgId} endpointId={endpointId} delivery={delivery} /> : null}
    </details>
  );
}

function AttemptList({ orgId, endpointId, delivery }: { orgId: string; endpointId: string; delivery: Delivery }) {
  // The count in the key: a refreshed row with more attempts loads them again.
  const list = useLoad(`attempts:${delivery.id}:${delivery.attempts}`, () =>
    api.GET('/api/v1/organizations/{orgId}/webhooks/{id}/deliveries/{deliveryId}/attempts', {
      params: { path: { orgId, id: endpointId, deliveryId: delivery.id } },
    }),
  );
  if (list.problem)
    return (
      <p role="alert" className="small">
        {list.problem.message}
      </p>
    );
  if (!list.data) return <p className="small">Loading…</p>;
  if (list.data.data.length === 0) return <p className="small">No attempts yet.</p>;
  return (
    <ol className="attempts" aria-label={`Attempts of the ${delivery.eventType} delivery ${delivery.id}`}>
      {list.data.data.map((a) => (
        <li key={a.attempt}>
          <strong>#{a.attempt}</strong> {a.responseStatus !== null ? `HTTP ${a.responseStatus}` : null}
          {a.responseStatus !== null && a.error ? ' — ' : null}
          {a.error}
          {a.responseStatus === null && !a.error ? 'no answer' : null} · {a.durationMs}&nbsp;ms ·{' '}
          <time dateTime={a.createdAt}>{when(a.createdAt)}</time>
        </li>
      ))}
    </ol>
  );
}
