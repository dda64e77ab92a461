// The audit log, newest first, with the API's filters (actor type, actor, action, time range) and pages.
import { useState } from 'react';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Field, Form, SelectField } from '../../ui/form';
import { when } from '../../ui/format';
import { Section } from '../../ui/Shell';

interface Filters {
  actorType: '' | 'user' | 'api_key';
  actorId: string;
  action: string;
  from: string;
  to: string;
}
const EMPTY: Filters = { actorType: '', actorId: '', action: '', from: '', to: '' };
const PAGE_SIZE = 25;

/** A datetime-local value as an ISO timestamp (the browser's time zone), or nothing. */
const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);

export function AuditLog({ orgId }: { orgId: string }) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [page, setPage] = useState(1);
  const query = {
    page,
    pageSize: PAGE_SIZE,
    ...(filters.actorType ? { actorType: filters.actorType } : {}),
    ...(filters.actorId.trim() ? { actorId: filters.actorId.trim() } : {}),
    ...(filters.action.trim() ? { action: filters.action.trim() } : {}),
    ...(iso(filters.from) ? { from: iso(filters.from) } : {}),
    ...(iso(filters.to) ? { to: iso(filters.to) } : {}),
  };
  const log = useLoad(`audit:${orgId}:${JSON.stringify(query)}`, () =>
    api.GET('/api/v1/organizations/{orgId}/audit-logs', { params: { path: { orgId }, query } }),
  );
  const set = (k: keyof Filters) => (v: string) => setDraft((d) => ({ ...d, [k]: v }));

  return (
    <>
      <Section title="Filters">
        <Form
          onSubmit={() => {
            setFilters(draft);
            setPage(1);
          }}
          problem={log.problem}
          fields={['actorType', 'actorId', 'action', 'from', 'to']}
          className="form filters"
          label="Audit log filters"
        >
          <SelectField
            label="Actor type"
            value={draft.actorType}
            onChange={set('actorType')}
            options={[
              ['', 'Anyone'],
              ['user', 'People'],
              ['api_key', 'API keys'],
            ]}
            error={log.problem?.fields.actorType}
          />
          <Field
            label="Actor id"
            value={draft.actorId}
            onChange={set('actorId')}
            placeholder="usr_… or key_…"
            error={log.problem?.fields.actorId}
          />
          <Field
            label="Action"
            value={draft.action}
            onChange={set('action')}
            placeholder="POST /api/v1/organizations/:orgId/projects"
            error={log.problem?.fields.action}
          />
          <Field
            label="From"
            type="datetime-local"
            value={draft.from}
            onChange={set('from')}
            error={log.problem?.fields.from}
          />
          <Field
            label="To"
            type="datetime-local"
            value={draft.to}
            onChange={set('to')}
            error={log.problem?.fields.to}
          />
          <div className="actions">
            <button type="submit" className="primary">
              Apply filters
            </button>
            <button
              type="button"
              className="secondary"
              onClick={() => {
                setDraft(EMPTY);
                setFilters(EMPTY);
                setPage(1);
              }}
            >
              Clear
            </button>
          </div>
        </Form>
      </Section>
      <Section title={`Entries (${log.data?.total ?? 0})`} id="entries">
        <div className="table-wrap">
          <table aria-label="Audit log">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Status</th>
                <th scope="col">IP address</th>
              </tr>
            </thead>
            <tbody>
              {log.data?.data.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.createdAt)}</td>
                  <td>
                    {e.actorType === 'api_key' ? 'key' : 'user'} <code>{e.actorId}</code>
                  </td>
                  <td className="wrap">
                    <code>{e.method}</code> {e.path}
                  </td>
                  <td>{e.statusCode}</td>
                  <td>{e.ipAddress ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div className="actions pager">
          <button type="button" className="secondary" disabled={page <= 1} onClick={() => setPage((p) => p - 1)}>
            Previous page
          </button>
          <span>Page {page}</span>
          <button
            type="button"
            className="secondary"
            disabled={!log.data?.hasMore}
            onClick={() => setPage((p) => p + 1)}
          >
            Next page
          </button>
        </div>
      </Section>
    </>
  );
}
