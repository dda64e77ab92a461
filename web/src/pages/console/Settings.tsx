// Organization settings: name and description, leaving, ownership transfer and deletion (the owner,
// typing the slug).
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { navigate } from '../../router';
import { Section } from '../../ui/Shell';
import { type Role, usePermissions } from './role';
import { TransferOwnership } from './Transfer';

/** `onSaved`: the name changed, so the page's heading and the switcher load it again. */
export function Settings({ orgId, role, onSaved }: { orgId: string; role: Role | undefined; onSaved?: () => void }) {
  const may = usePermissions(orgId, role);
  const org = useLoad(`org:${orgId}`, () => api.GET('/api/v1/organizations/{orgId}', { params: { path: { orgId } } }));
  // What was typed wins over what loads (a late load never overwrites it); until then, the values loaded.
  const [typedName, setName] = useState<string | null>(null);
  const [typedDescription, setDescription] = useState<string | null>(null);
  const name = typedName ?? org.data?.name ?? '';
  const description = typedDescription ?? org.data?.description ?? '';
  const [confirm, setConfirm] = useState('');
  const [saved, setSaved] = useState(false);
  const [transferredTo, setTransferredTo] = useState<string | null>(null);
  const save = useSubmit();
  const danger = useSubmit();

  const submit = () =>
    save.run(async () => {
      setSaved(false);
      const { error } = await api.PATCH('/api/v1/organizations/{orgId}', {
        params: { path: { orgId } },
        body: { name: name.trim(), description: description.trim() || null },
      });
      if (error) return toProblem(error);
      setSaved(true);
      org.reload();
      onSaved?.();
      return null;
    });
  const remove = () =>
    danger.run(async () => {
      if (confirm.trim() !== org.data?.slug)
        return { code: 'VALIDATION_ERROR', message: null, fields: { confirm: 'Type the slug exactly to confirm.' } };
      const { error } = await api.DELETE('/api/v1/organizations/{orgId}', { params: { path: { orgId } } });
      if (error) return toProblem(error);
      navigate('/orgs', { replace: true });
      return null;
    });
  const leave = () =>
    danger.run(async () => {
      const { error } = await api.POST('/api/v1/organizations/{orgId}/leave', { params: { path: { orgId } } });
      if (error) return toProblem(error);
      navigate('/orgs', { replace: true });
      return null;
    });

  return (
    <>
      <Section title="General">
        <p className="muted">
          Slug: <code>{org.data?.slug}</code> · id <code>{orgId}</code>
        </p>
        {may('org:update') ? (
          <Form
            onSubmit={() => void submit()}
            problem={save.problem}
            fields={['name', 'description']}
            label="Organization settings"
          >
            {saved ? <Notice>Settings saved</Notice> : null}
            <Field
              label="Organization name"
              value={name}
              onChange={setName}
              required
              error={save.problem?.fields.name}
            />
            <Field
              label="Description"
              value={description}
              onChange={setDescription}
              error={save.problem?.fields.description}
            />
            <div className="actions">
              <Submit busy={save.busy}>Save settings</Submit>
            </div>
          </Form>
        ) : (
          <p>Owners and admins change the settings.</p>
        )}
      </Section>
      {transferredTo ? <Notice>{transferredTo} now owns this organization; you are an admin.</Notice> : null}
      {role === 'owner' ? (
        <TransferOwnership
          orgId={orgId}
          onDone={(name) => {
            setTransferredTo(name);
            onSaved?.();
          }}
        />
      ) : null}
      {role === 'owner' ? (
        <Section title="Delete this organization">
          <p>
            Deleting ends its subscription and removes its members, projects, API keys, webhooks and audit log. It
            cannot be undone.
          </p>
          <Form
            onSubmit={() => void remove()}
            problem={danger.problem}
            fields={['confirm']}
            label="Delete organization"
          >
            <Field
              label="Type the slug to confirm"
              value={confirm}
              onChange={setConfirm}
              autoComplete="off"
              error={danger.problem?.fields.confirm}
            />
            <div className="actions">
              <Submit busy={danger.busy} className="danger">
                Delete organization
              </Submit>
            </div>
          </Form>
        </Section>
      ) : role ? (
        <Section title="Leave this organization">
          <Form onSubmit={() => void leave()} problem={danger.problem} label="Leave organization">
            <div className="actions">
              <Submit busy={danger.busy} className="danger">
                Leave organization
              </Submit>
            </div>
          </Form>
        </Section>
      ) : null}
    </>
  );
}
