// The organization's roles: the four built-in ones and its custom roles, what each grants and who
// holds it; with roles:manage, making a role and changing or deleting one (docs/api.md#custom-roles).
// The permissions a person may tick are the ones their own role holds (the API refuses the others).
import { useId, useState } from 'react';
import type { Schema } from '@tenantry/client';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { Section } from '../../ui/Shell';
import { useOrgRoles } from './role';

type OrgRole = Schema<'Role'>;
/** Only the owner holds these: no role may grant them. */
const OWNER_ONLY = new Set(['org:delete', 'org:transfer']);

const catalogue = () => api.GET('/api/v1/permissions');

function PermissionChecks({
  legend,
  keys,
  chosen,
  mine,
  onChange,
  error,
}: {
  legend: string;
  keys: string[];
  chosen: string[];
  mine: ReadonlySet<string>;
  onChange: (next: string[]) => void;
  error?: string | undefined;
}) {
  const id = useId();
  return (
    <fieldset className="checks" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      {keys.map((key) => (
        <label key={key} className="check">
          <input
            type="checkbox"
            checked={chosen.includes(key)}
            disabled={!mine.has(key) && !chosen.includes(key)}
            onChange={(e) => onChange(e.target.checked ? [...chosen, key] : chosen.filter((k) => k !== key))}
          />
          <code>{key}</code>
        </label>
      ))}
      {error ? (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

function NewRole({
  orgId,
  keys,
  mine,
  onDone,
}: {
  orgId: string;
  keys: string[];
  mine: ReadonlySet<string>;
  onDone: () => void;
}) {
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [permissions, setPermissions] = useState<string[]>([]);
  const [made, setMade] = useState<string | null>(null);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      setMade(null);
      const { data, error } = await api.POST('/api/v1/organizations/{orgId}/roles', {
        params: { path: { orgId } },
        body: { key: key.trim(), name: name.trim(), description: description.trim() || null, permissions },
      });
      if (error) return toProblem(error, { CONFLICT: 'key', AUTHORIZATION_ERROR: 'permissions' });
      setMade(data.name);
      setKey('');
      setName('');
      setDescription('');
      setPermissions([]);
      onDone();
      return null;
    });
  return (
    <Form
      onSubmit={() => void submit()}
      problem={problem}
      fields={['key', 'name', 'description', 'permissions']}
      label="New role"
    >
      {made ? <Notice>Role {made} created</Notice> : null}
      <Field label="Role name" value={name} onChange={setName} required error={problem?.fields.name} />
      <Field
        label="Key"
        value={key}
        onChange={setKey}
        required
        error={problem?.fields.key}
        hint="What members and tokens name it by: 2 to 40 lowercase letters, digits and dashes, starting with a letter."
      />
      <Field label="Description" value={description} onChange={setDescription} error={problem?.fields.description} />
      <PermissionChecks
        legend="Permissions"
        keys={keys}
        chosen={permissions}
        mine={mine}
        onChange={setPermissions}
        error={problem?.fields.permissions}
      />
      <div className="actions">
        <Submit busy={busy}>Create role</Submit>
      </div>
    </Form>
  );
}

function EditRole({
  orgId,
  role,
  keys,
  mine,
  onDone,
}: {
  orgId: string;
  role: OrgRole;
  keys: string[];
  mine: ReadonlySet<string>;
  onDone: () => void;
}) {
  const [permissions, setPermissions] = useState<string[]>(role.permissions);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      const { error } = await api.PATCH('/api/v1/organizations/{orgId}/roles/{key}', {
        params: { path: { orgId, key: role.key } },
        body: { permissions },
      });
      if (error) return toProblem(error, { AUTHORIZATION_ERROR: 'permissions' });
      onDone();
      return null;
    });
  return (
    <Form
      onSubmit={() => void submit()}
      problem={problem}
      fields={['permissions']}
      label={`Permissions of ${role.name}`}
    >
      <PermissionChecks
        legend={`Permissions of ${role.name}`}
        keys={keys}
        chosen={permissions}
        mine={mine}
        onChange={setPermissions}
        error={problem?.fields.permissions}
      />
      <div className="actions">
        <Submit busy={busy}>Save permissions</Submit>
      </div>
    </Form>
  );
}

/** `myRole`: the caller's role key here, whose permissions decide what the page offers. */
export function Roles({ orgId, myRole }: { orgId: string; myRole: string | undefined }) {
  const { roles, all: list, mine } = useOrgRoles(orgId, myRole);
  const permissions = useLoad('permissions', catalogue);
  const members = useLoad(`members:${orgId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/members', { params: { path: { orgId }, query: { pageSize: 100 } } }),
  );
  const [editing, setEditing] = useState<string | null>(null);
  const removal = useSubmit();

  const manage = mine.has('roles:manage');
  const keys = (permissions.data?.permissions ?? []).map((p) => p.key).filter((k) => !OWNER_ONLY.has(k));
  const holders = (key: string) => (members.data?.members ?? []).filter((m) => m.role === key);
  const reload = () => {
    roles.reload();
    members.reload();
  };
  const remove = (key: string) =>
    removal.run(async () => {
      const { error } = await api.DELETE('/api/v1/organizations/{orgId}/roles/{key}', {
        params: { path: { orgId, key } },
      });
      if (error) return toProblem(error);
      roles.reload();
      return null;
    });

  return (
    <>
      <Section title="Roles">
        {roles.problem ? <Alert>{roles.problem.message}</Alert> : null}
        {removal.problem ? (
          <Alert>{removal.problem.message ?? Object.values(removal.problem.fields).join(' ')}</Alert>
        ) : null}
        <ul className="rows" aria-label="Roles">
          {list.map((r) => (
            <li key={r.key} className="row role" aria-label={r.name}>
              <div className="row-main">
                <strong>
                  {r.name} {r.builtIn ? <span className="badge">Built in</span> : null}
                </strong>
                <span className="muted small">
                  <code>{r.key}</code>
                  {r.description ? ` · ${r.description}` : ''} ·{' '}
                  {r.memberCount === 1 ? '1 member' : `${r.memberCount} members`}
                </span>
                <span className="small wrap" aria-label={`Permissions of ${r.name}`}>
                  {r.permissions.length ? r.permissions.join(', ') : 'no permission'}
                </span>
                {holders(r.key).length ? (
                  <ul className="holders small" aria-label={`Holders of ${r.name}`}>
                    {holders(r.key).map((m) => (
                      <li key={m.id}>{m.user.email}</li>
                    ))}
                  </ul>
                ) : null}
                {editing === r.key ? (
                  <EditRole
                    orgId={orgId}
                    role={r}
                    keys={keys}
                    mine={mine}
                    onDone={() => {
                      setEditing(null);
                      reload();
                    }}
                  />
                ) : null}
              </div>
              {manage && !r.builtIn ? (
                <div className="row-actions">
                  <button
                    type="button"
                    className="secondary small"
                    aria-label={`Edit ${r.name}`}
                    onClick={() => setEditing(editing === r.key ? null : r.key)}
                  >
                    {editing === r.key ? 'Cancel' : 'Edit'}
                  </button>
                  <button
                    type="button"
                    className="danger small"
                    disabled={removal.busy}
                    aria-label={`Delete ${r.name}`}
                    onClick={() => void remove(r.key)}
                  >
                    Delete
                  </button>
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      </Section>
      {manage ? (
        <Section title="New role">
          <NewRole orgId={orgId} keys={keys} mine={mine} onDone={reload} />
        </Section>
      ) : null}
    </>
  );
}
