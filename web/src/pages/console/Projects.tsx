// An organization's projects: create, rename, delete.
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Field, Form, Submit, useSubmit } from '../../ui/form';
import { when } from '../../ui/format';
import { Section } from '../../ui/Shell';
import { type Role, usePermissions } from './role';

type Project = { id: string; name: string; description: string | null; createdAt: string };

function Rename({ orgId, project, onDone }: { orgId: string; project: Project; onDone: (changed: boolean) => void }) {
  const [name, setName] = useState(project.name);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      const { error } = await api.PATCH('/api/v1/organizations/{orgId}/projects/{projectId}', {
        params: { path: { orgId, projectId: project.id } },
        body: { name: name.trim() },
      });
      if (error) return toProblem(error);
      onDone(true);
      return null;
    });
  return (
    <Form
      onSubmit={() => void submit()}
      problem={problem}
      fields={['name']}
      className="form inline-form"
      label={`Rename ${project.name}`}
    >
      <Field label="Name" value={name} onChange={setName} required autoFocus error={problem?.fields.name} />
      <div className="actions">
        <Submit busy={busy}>Save</Submit>
        <button type="button" className="secondary" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </Form>
  );
}

export function Projects({ orgId, role }: { orgId: string; role: Role | undefined }) {
  const list = useLoad(`projects:${orgId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/projects', { params: { path: { orgId }, query: { pageSize: 100 } } }),
  );
  const [name, setName] = useState('');
  const [editing, setEditing] = useState<string | null>(null);
  const create = useSubmit();
  const remove = useSubmit();
  const canWrite = usePermissions(orgId, role)('projects:write');

  const submit = () =>
    create.run(async () => {
      const { error } = await api.POST('/api/v1/organizations/{orgId}/projects', {
        params: { path: { orgId } },
        body: { name: name.trim() },
      });
      if (error) return toProblem(error);
      setName('');
      list.reload();
      return null;
    });
  const del = (projectId: string) =>
    remove.run(async () => {
      const { error } = await api.DELETE('/api/v1/organizations/{orgId}/projects/{projectId}', {
        params: { path: { orgId, projectId } },
      });
      if (error) return toProblem(error);
      list.reload();
      return null;
    });

  const projects = list.data?.data ?? [];
  return (
    <>
      {canWrite ? (
        <Section title="New project">
          <Form
            onSubmit={() => void submit()}
            problem={create.problem}
            fields={['name']}
            className="form inline-form"
            label="Create project"
          >
            <Field label="Name" value={name} onChange={setName} required error={create.problem?.fields.name} />
            <div className="actions">
              <Submit busy={create.busy}>Create project</Submit>
            </div>
          </Form>
        </Section>
      ) : null}
      <Section title={`Projects (${list.data?.total ?? 0})`} id="projects">
        {list.problem ? <Alert>{list.problem.message}</Alert> : null}
        {remove.problem?.message ? <Alert>{remove.problem.message}</Alert> : null}
        {list.data && projects.length === 0 ? <p>No projects yet.</p> : null}
        <ul className="rows" aria-label="Projects">
          {projects.map((p) => (
            <li key={p.id} className="row">
              {editing === p.id ? (
                <Rename
                  orgId={orgId}
                  project={p}
                  onDone={(changed) => {
                    setEditing(null);
                    if (changed) list.reload();
                  }}
                />
              ) : (
                <>
                  <div className="row-main">
                    <strong>{p.name}</strong>
                    <span className="muted small">Created {when(p.createdAt)}</span>
                  </div>
                  {canWrite ? (
                    <div className="row-actions">
                      <button
                        type="button"
                        className="secondary small"
                        onClick={() => setEditing(p.id)}
                        aria-label={`Rename ${p.name}`}
                      >
                        Rename
                      </button>
                      <button
                        type="button"
                        className="danger small"
                        disabled={remove.busy}
                        onClick={() => void del(p.id)}
                        aria-label={`Delete ${p.name}`}
                      >
                        Delete
                      </button>
                    </div>
                  ) : null}
                </>
              )}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
