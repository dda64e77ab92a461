// API keys: create one (name and scopes; the full key is shown once), the list with each key's
// usage, and revocation.
import { CopyButton } from '../../ui/copy';
import { useState } from 'react';
import type { Schema } from '@tenantry/client';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Field, Form, Submit, useSubmit } from '../../ui/form';
import { when } from '../../ui/format';
import { Section } from '../../ui/Shell';

type Scope = Schema<'ApiKeyScope'>;
// Every scope of the API, labelled: a scope added to the API's enum fails the type check until it is here.
const LABELS: Record<Scope, string> = {
  'read:projects': 'Read projects',
  'write:projects': 'Write projects',
  'read:members': 'Read members',
  'write:members': 'Write members',
  'read:webhooks': 'Read webhooks',
  'write:webhooks': 'Write webhooks',
  'write:events': 'Publish events',
  'read:billing': 'Read billing',
  'read:audit-logs': 'Read the audit log',
};
const SCOPES = Object.entries(LABELS) as ReadonlyArray<readonly [Scope, string]>;

function Usage({ keyId }: { keyId: string }) {
  const usage = useLoad(`usage:${keyId}`, () =>
    api.GET('/api/v1/api-keys/{keyId}/usage', { params: { path: { keyId } } }),
  );
  if (!usage.data) return <span className="muted">…</span>;
  return (
    <span>
      {usage.data.usage.requests.toLocaleString()} requests · {usage.data.usage.rateLimit.toLocaleString()}/min
    </span>
  );
}

function CreateKey({ orgId, onCreated }: { orgId: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['read:projects']);
  const [rateLimit, setRateLimit] = useState('');
  const [plain, setPlain] = useState<{ name: string; key: string } | null>(null);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      const { data, error } = await api.POST('/api/v1/organizations/{orgId}/api-keys', {
        params: { path: { orgId } },
        body: { name: name.trim(), scopes, ...(rateLimit.trim() ? { rateLimit: Number(rateLimit.trim()) } : {}) },
      });
      if (error) return toProblem(error, { PLAN_LIMIT_EXCEEDED: 'name' });
      setPlain({ name: data.apiKey.name, key: data.plainKey });
      setName('');
      setScopes(['read:projects']);
      setRateLimit('');
      onCreated();
      return null;
    });
  const toggle = (scope: Scope, on: boolean) => setScopes((s) => (on ? [...s, scope] : s.filter((x) => x !== scope)));
  return (
    <>
      {plain ? (
        <div className="notice" role="status">
          <p>
            The key <strong>{plain.name}</strong> was created. Copy it now: it is shown only once.
          </p>
          <p>
            <code className="secret" data-testid="plain-key">
              {plain.key}
            </code>
          </p>
          <div className="actions">
            <CopyButton text={plain.key} label="Copy key" />
            <button type="button" className="link" onClick={() => setPlain(null)}>
              I have saved it
            </button>
          </div>
        </div>
      ) : null}
      <Form
        onSubmit={() => void submit()}
        problem={problem}
        fields={['name', 'scopes', 'rateLimit']}
        label="Create API key"
      >
        <Field label="Name" value={name} onChange={setName} required error={problem?.fields.name} />
        <Field
          label="Requests per minute"
          type="number"
          inputMode="numeric"
          value={rateLimit}
          onChange={setRateLimit}
          error={problem?.fields.rateLimit}
          hint="Optional: empty keeps the default of 1,000 a minute. Past it, the key's requests answer 429."
        />
        <fieldset className="checks" aria-describedby={problem?.fields.scopes ? 'scopes-error' : undefined}>
          <legend>Scopes</legend>
          {SCOPES.map(([scope, text]) => (
            <label key={scope} className="check">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) => toggle(scope, e.target.checked)}
              />
              {text} <code className="muted">{scope}</code>
            </label>
          ))}
          {problem?.fields.scopes ? (
            <p id="scopes-error" className="field-error" role="alert">
              {problem.fields.scopes}
            </p>
          ) : null}
        </fieldset>
        <div className="actions">
          <Submit busy={busy}>Create API key</Submit>
        </div>
      </Form>
    </>
  );
}

export function ApiKeys({ orgId }: { orgId: string }) {
  const list = useLoad(`keys:${orgId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/api-keys', { params: { path: { orgId }, query: { pageSize: 100 } } }),
  );
  const revoke = useSubmit();
  const del = (keyId: string) =>
    revoke.run(async () => {
      const { error } = await api.DELETE('/api/v1/organizations/{orgId}/api-keys/{keyId}', {
        params: { path: { orgId, keyId } },
      });
      if (error) return toProblem(error);
      list.reload();
      return null;
    });
  return (
    <>
      <Section title="New API key">
        <CreateKey orgId={orgId} onCreated={list.reload} />
      </Section>
      <Section title="API keys">
        {list.problem ? <Alert>{list.problem.message}</Alert> : null}
        {revoke.problem?.message ? <Alert>{revoke.problem.message}</Alert> : null}
        {list.data && list.data.data.length === 0 ? <p>No API keys yet.</p> : null}
        <div className="table-wrap">
          <table aria-label="API keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Scopes</th>
                <th scope="col">Usage</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {list.data?.data.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.keyPrefix}…</code>
                  </td>
                  <td className="wrap">{k.scopes.join(', ') || 'none'}</td>
                  <td>
                    <Usage keyId={k.id} />
                  </td>
                  <td>{when(k.lastUsedAt)}</td>
                  <td>
                    {k.isActive ? (
                      <button
                        type="button"
                        className="danger small"
                        disabled={revoke.busy}
                        aria-label={`Revoke ${k.name}`}
                        onClick={() => void del(k.id)}
                      >
                        Revoke
                      </button>
                    ) : (
                      <span className="badge">Revoked</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
    </>
  );
}
