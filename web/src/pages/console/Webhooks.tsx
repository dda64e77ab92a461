// Webhook endpoints: add one (its signing secret shown once), send a test event, rotate the secret
// (the old one kept for a grace, so receivers can switch), pause or resume, delete; each endpoint
// links to its deliveries.
import { CopyButton } from '../../ui/copy';
import { useId, useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Field, Form, Notice, SelectField, Submit, useSubmit } from '../../ui/form';
import { Link } from '../../router';
import { Section } from '../../ui/Shell';
import { EVENT_TYPES } from './event-types';
import { type Role, usePermissions } from './role';

export function SecretNotice({ secret, onClose, what }: { secret: string; onClose: () => void; what: string }) {
  return (
    <div className="notice" role="status">
      <p>{what} Copy the signing secret now: it is shown only once.</p>
      <p>
        <code className="secret" data-testid="signing-secret">
          {secret}
        </code>
      </p>
      <div className="actions">
        <CopyButton text={secret} label="Copy secret" />
        <button type="button" className="link" onClick={onClose}>
          I have saved it
        </button>
      </div>
    </div>
  );
}

/** The events an endpoint receives: every one (none ticked), or the ticked types and custom ones. */
function EventChoice({
  chosen,
  custom,
  onChosen,
  onCustom,
  error,
}: {
  chosen: string[];
  custom: string;
  onChosen: (next: string[]) => void;
  onCustom: (next: string) => void;
  error?: string | undefined;
}) {
  const id = useId();
  return (
    <fieldset className="checks" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>Events (none ticked: every event)</legend>
      {EVENT_TYPES.map((type) => (
        <label key={type} className="check">
          <input
            type="checkbox"
            checked={chosen.includes(type)}
            onChange={(e) => onChosen(e.target.checked ? [...chosen, type] : chosen.filter((t) => t !== type))}
          />
          <code>{type}</code>
        </label>
      ))}
      <Field
        label="Your own event types"
        placeholder="order.shipped, invoice.paid"
        value={custom}
        onChange={onCustom}
      />
      {error ? (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

function AddEndpoint({ orgId, onAdded }: { orgId: string; onAdded: (secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [custom, setCustom] = useState('');
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      const events = [
        ...chosen,
        ...custom
          .split(/[\s,]+/)
          .map((t) => t.trim())
          .filter(Boolean),
      ];
      const { data, error } = await api.POST('/api/v1/organizations/{orgId}/webhooks', {
        params: { path: { orgId } },
        body: {
          url: url.trim(),
          ...(description.trim() ? { description: description.trim() } : {}),
          ...(events.length ? { events } : {}),
        },
      });
      if (error) return toProblem(error, { PLAN_LIMIT_EXCEEDED: 'url' });
      setUrl('');
      setDescription('');
      setChosen([]);
      setCustom('');
      onAdded(data.data.secret);
      return null;
    });
  return (
    <Form
      onSubmit={() => void submit()}
      problem={problem}
      fields={['url', 'description', 'events']}
      label="Add endpoint"
    >
      <Field
        label="URL"
        type="url"
        inputMode="url"
        placeholder="https://example.com/webhooks"
        value={url}
        onChange={setUrl}
        required
        error={problem?.fields.url}
      />
      <Field label="Description" value={description} onChange={setDescription} error={problem?.fields.description} />
      <EventChoice
        chosen={chosen}
        custom={custom}
        onChosen={setChosen}
        onCustom={setCustom}
        error={problem?.fields.events}
      />
      <p className="small muted">Each delivery is signed with the endpoint's secret.</p>
      <div className="actions">
        <Submit busy={busy}>Add endpoint</Submit>
      </div>
    </Form>
  );
}

const GRACES = [
  ['0', 'No: it stops at once'],
  ['3600', 'For an hour'],
  ['86400', 'For a day'],
  ['604800', 'For a week'],
] as const;

export function Webhooks({ orgId, role }: { orgId: string; role: Role | undefined }) {
  const list = useLoad(`webhooks:${orgId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/webhooks', { params: { path: { orgId } } }),
  );
  const [secret, setSecret] = useState<{ secret: string; what: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [rotating, setRotating] = useState<string | null>(null);
  const [grace, setGrace] = useState<string>('86400');
  const action = useSubmit();
  const manage = usePermissions(orgId, role)('webhooks:manage');
  const one = (id: string) => ({ params: { path: { orgId, id } } });

  const act = (call: () => Promise<{ data?: unknown; error?: unknown }>, done: (data: unknown) => void) =>
    action.run(async () => {
      setNotice(null);
      const { data, error } = await call();
      if (error) return toProblem(error);
      done(data);
      list.reload();
      return null;
    });

  return (
    <>
      {manage ? (
        <Section title="New endpoint">
          <AddEndpoint
            orgId={orgId}
            onAdded={(s) => {
              setSecret({ secret: s, what: 'The endpoint was added.' });
              list.reload();
            }}
          />
        </Section>
      ) : null}
      <Section title="Endpoints">
        {secret ? <SecretNotice secret={secret.secret} what={secret.what} onClose={() => setSecret(null)} /> : null}
        {notice ? <Notice>{notice}</Notice> : null}
        {list.problem ? <Alert>{list.problem.message}</Alert> : null}
        {action.problem ? (
          <Alert>{action.problem.message ?? Object.values(action.problem.fields).join(' ')}</Alert>
        ) : null}
        {list.data && list.data.data.length === 0 ? <p>No endpoints yet.</p> : null}
        <ul className="rows" aria-label="Endpoints">
          {list.data?.data.map((w) => (
            <li key={w.id} className="row">
              <div className="row-main">
                <Link to={`/orgs/${orgId}/webhooks/${w.id}`} className="wrap">
                  <strong>{w.url}</strong>
                </Link>
                <span className="muted small">
                  {w.isActive ? 'Active' : 'Paused'} · {w.events.length ? w.events.join(', ') : 'all events'}
                  {w.description ? ` · ${w.description}` : ''}
                </span>
              </div>
              {manage ? (
                <div className="row-actions">
                  <button
                    type="button"
                    className="secondary small"
                    disabled={action.busy || !w.isActive}
                    aria-label={`Send test to ${w.url}`}
                    onClick={() =>
                      void act(
                        () => api.POST('/api/v1/organizations/{orgId}/webhooks/{id}/test', one(w.id)),
                        () => setNotice('Test event sent.'),
                      )
                    }
                  >
                    Send test
                  </button>
                  <button
                    type="button"
                    className="secondary small"
                    disabled={action.busy}
                    aria-label={`Rotate secret of ${w.url}`}
                    aria-expanded={rotating === w.id}
                    onClick={() => setRotating(rotating === w.id ? null : w.id)}
                  >
                    Rotate secret
                  </button>
                  <button
                    type="button"
                    className="secondary small"
                    disabled={action.busy}
                    onClick={() =>
                      void act(
                        () =>
                          api.PATCH('/api/v1/organizations/{orgId}/webhooks/{id}', {
                            ...one(w.id),
                            body: { isActive: !w.isActive },
                          }),
                        () => setNotice(w.isActive ? 'Endpoint paused.' : 'Endpoint resumed.'),
                      )
                    }
                  >
                    {w.isActive ? 'Pause' : 'Resume'}
                  </button>
                  <button
                    type="button"
                    className="danger small"
                    disabled={action.busy}
                    aria-label={`Delete ${w.url}`}
                    onClick={() =>
                      void act(
                        () => api.DELETE('/api/v1/organizations/{orgId}/webhooks/{id}', one(w.id)),
                        () => setNotice('Endpoint deleted.'),
                      )
                    }
                  >
                    Delete
                  </button>
                </div>
              ) : null}
              {manage && rotating === w.id ? (
                <Form
                  onSubmit={() =>
                    void act(
                      () =>
                        api.POST('/api/v1/organizations/{orgId}/webhooks/{id}/rotate-secret', {
                          ...one(w.id),
                          body: { graceSeconds: Number(grace) },
                        }),
                      (d) => {
                        setRotating(null);
                        const kept = GRACES.find(([v]) => v === grace)?.[1].toLowerCase();
                        setSecret({
                          secret: (d as { data: { secret: string } }).data.secret,
                          what:
                            grace === '0'
                              ? 'The secret was rotated; the old one no longer works.'
                              : `The secret was rotated; the old one keeps working ${kept}.`,
                        });
                      },
                    )
                  }
                  problem={null}
                  className="form inline-form rotate"
                  label={`Rotate the secret of ${w.url}`}
                >
                  <SelectField label="Old secret keeps working" value={grace} onChange={setGrace} options={GRACES} />
                  <div className="actions">
                    <Submit busy={action.busy}>Rotate</Submit>
                    <button type="button" className="link" onClick={() => setRotating(null)}>
                      Cancel
                    </button>
                  </div>
                </Form>
              ) : null}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
