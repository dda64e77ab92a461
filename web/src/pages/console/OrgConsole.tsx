// /orgs/:orgId/:tab: one organization's console: a switcher between your organizations, its tabs,
// and the tab's page. The organization whose console is open is the session's active one (the
// tokens' org_* claims, which the product's own services read): opening it, or switching to it,
// makes it active.
import { useEffect, useId, useState, type ReactNode } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad, useSession } from '../../api/hooks';
import { api, switchOrganization } from '../../api/session';
import { Alert } from '../../ui/form';
import { Link, navigate } from '../../router';
import { myOrganizations } from './Organizations';
import { Projects } from './Projects';
import { Members } from './Members';
import { ApiKeys } from './ApiKeys';
import { Webhooks } from './Webhooks';
import { Deliveries } from './Deliveries';
import { Billing } from './Billing';
import { AuditLog } from './AuditLog';
import { Settings } from './Settings';
import type { Role } from './role';
import { Roles } from './Roles';

const TABS: ReadonlyArray<readonly [string, string]> = [
  ['projects', 'Projects'],
  ['members', 'Members'],
  ['roles', 'Roles'],
  ['api-keys', 'API keys'],
  ['webhooks', 'Webhooks'],
  ['billing', 'Billing'],
  ['audit-log', 'Audit log'],
  ['settings', 'Settings'],
];

function page(
  tab: string,
  orgId: string,
  role: Role | undefined,
  endpointId: string | undefined,
  onRenamed: () => void,
): ReactNode {
  switch (tab) {
    case 'projects':
      return <Projects orgId={orgId} role={role} />;
    case 'members':
      return <Members orgId={orgId} role={role} />;
    case 'roles':
      return <Roles orgId={orgId} myRole={role} />;
    case 'api-keys':
      return <ApiKeys orgId={orgId} />;
    case 'webhooks':
      return endpointId ? <Deliveries orgId={orgId} endpointId={endpointId} /> : <Webhooks orgId={orgId} role={role} />;
    case 'billing':
      return <Billing orgId={orgId} role={role} />;
    case 'audit-log':
      return <AuditLog orgId={orgId} />;
    case 'settings':
      return <Settings orgId={orgId} role={role} onSaved={onRenamed} />;
    default:
      return <Alert>There is no such page.</Alert>;
  }
}

export function OrgConsole({ orgId, tab, endpointId }: { orgId: string; tab: string; endpointId?: string }) {
  const orgs = useLoad('orgs', myOrganizations);
  const org = useLoad(`org:${orgId}`, () => api.GET('/api/v1/organizations/{orgId}', { params: { path: { orgId } } }));
  const switcher = useId();
  const mine = orgs.data?.organizations ?? [];
  const role = mine.find((o) => o.id === orgId)?.role;
  const session = useSession();
  const active = session.status === 'signed-in' ? session.organizationId : null;
  const [switchProblem, setSwitchProblem] = useState<string | null>(null);
  // The console's organization becomes the session's active one (once per organization opened).
  useEffect(() => {
    if (session.status !== 'signed-in' || active === orgId) return;
    let live = true;
    void switchOrganization(orgId).then((error) => {
      if (live) setSwitchProblem(error ? toProblem(error).message : null);
    });
    return () => {
      live = false;
    };
  }, [orgId, active, session.status]);
  return (
    <main id="main" className="console">
      <div className="org-head">
        <div>
          <p className="eyebrow">Organization</p>
          <h1>{org.data?.name ?? mine.find((o) => o.id === orgId)?.name ?? '…'}</h1>
        </div>
        {active === orgId ? (
          <p className="muted small" role="status" data-testid="active-organization">
            Active for this session
          </p>
        ) : null}
        {mine.length > 1 ? (
          <div className="field inline">
            <label htmlFor={switcher}>Switch organization</label>
            <select id={switcher} value={orgId} onChange={(e) => navigate(`/orgs/${e.target.value}/${tab}`)}>
              {mine.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name}
                </option>
              ))}
            </select>
          </div>
        ) : null}
      </div>
      {org.problem ? <Alert>{org.problem.message}</Alert> : null}
      {switchProblem && !org.problem ? <Alert>{switchProblem}</Alert> : null}
      <nav className="tabs" aria-label="Organization">
        {TABS.map(([id, label]) => (
          <Link key={id} to={`/orgs/${orgId}/${id}`} aria-current={tab === id ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      <div className="tab-page">
        {page(tab, orgId, role, endpointId, () => {
          org.reload();
          orgs.reload();
        })}
      </div>
    </main>
  );
}
