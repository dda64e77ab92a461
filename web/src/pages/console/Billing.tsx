// Billing: the plan, usage against its limits, "Upgrade" (to the provider's checkout page, which
// with the built-in test provider is a page of the service), the provider's portal, and cancel.
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Notice, useSubmit } from '../../ui/form';
import { count, when } from '../../ui/format';
import { useLocation } from '../../router';
import { Section } from '../../ui/Shell';
import { type Role, usePermissions } from './role';

const PRICE_PRO = import.meta.env.VITE_TENANTRY_PRICE_PRO ?? 'price_pro';
const GIB = 1024 ** 3;

function Meter({
  label,
  used,
  limit,
  unit,
}: {
  label: string;
  used: number | null;
  limit: number | null;
  unit?: string;
}) {
  const ratio = used !== null && limit ? Math.min(1, used / limit) : 0;
  return (
    <div className="meter">
      <div className="meter-label">
        <span>{label}</span>
        <span>
          {used === null ? '' : `${used.toLocaleString()} of `}
          {count(limit)}
          {unit && limit !== null ? ` ${unit}` : ''}
        </span>
      </div>
      {used !== null && limit !== null ? (
        <progress max={limit} value={Math.min(used, limit)} aria-label={`${label}: ${Math.round(ratio * 100)}%`}>
          {Math.round(ratio * 100)}%
        </progress>
      ) : null}
    </div>
  );
}

export function Billing({ orgId, role }: { orgId: string; role: Role | undefined }) {
  const { query } = useLocation();
  const billing = useLoad(`billing:${orgId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/billing', { params: { path: { orgId } } }),
  );
  const members = useLoad(`members:${orgId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/members', { params: { path: { orgId }, query: { pageSize: 1 } } }),
  );
  const action = useSubmit();
  const here = `${window.location.origin}/orgs/${orgId}/billing`;
  const manage = usePermissions(orgId, role)('billing:manage');
  const b = billing.data?.data;

  const upgrade = () =>
    action.run(async () => {
      const { data, error } = await api.POST('/api/v1/organizations/{orgId}/billing/checkout', {
        params: { path: { orgId } },
        body: { priceId: PRICE_PRO, successUrl: `${here}?checkout=done`, cancelUrl: `${here}?checkout=canceled` },
      });
      if (error) return toProblem(error);
      window.location.assign(data.data.url);
      return null;
    });
  const portal = () =>
    action.run(async () => {
      const { data, error } = await api.GET('/api/v1/organizations/{orgId}/billing/portal', {
        params: { path: { orgId }, query: { return_url: here } },
      });
      if (error) return toProblem(error);
      window.location.assign(data.data.url);
      return null;
    });
  const cancel = () =>
    action.run(async () => {
      const { error } = await api.POST('/api/v1/organizations/{orgId}/billing/cancel', { params: { path: { orgId } } });
      if (error) return toProblem(error);
      billing.reload();
      return null;
    });

  return (
    <>
      {query.get('checkout') === 'done' ? <Notice>Thank you: the payment went through.</Notice> : null}
      {query.get('checkout') === 'canceled' ? <Notice>The checkout was canceled; nothing changed.</Notice> : null}
      {billing.problem ? <Alert>{billing.problem.message}</Alert> : null}
      {action.problem ? (
        <Alert>{action.problem.message ?? Object.values(action.problem.fields).join(' ')}</Alert>
      ) : null}
      <Section title="Plan">
        {b ? (
          <>
            <p className="plan">
              Plan: <strong data-testid="plan-name">{b.plan.name}</strong> <span className="badge">{b.status}</span>
            </p>
            {b.subscription ? (
              <p className="muted">
                {b.subscription.cancelAtPeriodEnd ? 'Ends' : 'Renews'} {when(b.subscription.currentPeriodEnd)}
              </p>
            ) : null}
            {manage ? (
              <div className="actions">
                {!b.subscription ? (
                  <button type="button" className="primary" disabled={action.busy} onClick={() => void upgrade()}>
                    Upgrade
                  </button>
                ) : null}
                {b.subscription ? (
                  <button type="button" className="secondary" disabled={action.busy} onClick={() => void portal()}>
                    Manage billing
                  </button>
                ) : (
                  <p className="muted small">
                    Payment details and invoices are managed here once the organization has a paid plan.
                  </p>
                )}
                {b.subscription && !b.subscription.cancelAtPeriodEnd ? (
                  <button type="button" className="danger" disabled={action.busy} onClick={() => void cancel()}>
                    Cancel subscription
                  </button>
                ) : null}
              </div>
            ) : (
              <p className="muted">Your role here does not manage billing (billing:manage).</p>
            )}
          </>
        ) : (
          <p role="status">Loading…</p>
        )}
      </Section>
      {b ? (
        <Section title={`Usage in ${b.usage.period}`} id="usage">
          <Meter label="API requests this month" used={b.usage.apiRequests} limit={b.plan.limits.apiRequests} />
          <Meter
            label="Members and pending invitations"
            used={members.data?.total ?? null}
            limit={b.plan.limits.members}
          />
          <Meter
            label="Storage"
            used={null}
            limit={b.plan.limits.storage === null ? null : b.plan.limits.storage / GIB}
            unit="GiB"
          />
        </Section>
      ) : null}
    </>
  );
}
