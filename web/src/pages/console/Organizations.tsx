// /orgs: the organizations you belong to, and a new one.
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { slugify, slugProblem, when } from '../../ui/format';
import { Link, navigate } from '../../router';
import { ConsolePage, Section } from '../../ui/Shell';

export const myOrganizations = () =>
  api.GET('/api/v1/users/me/organizations', { params: { query: { pageSize: 100 } } });

export function CreateOrganization() {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      const { data, error } = await api.POST('/api/v1/organizations', {
        body: { name: name.trim(), slug: slug.trim() },
      });
      if (error) return toProblem(error, { CONFLICT: 'slug' });
      navigate(`/orgs/${data.id}/projects`);
      return null;
    });
  return (
    <Form onSubmit={() => void submit()} problem={problem} fields={['name', 'slug']} label="Create organization">
      <Field
        label="Organization name"
        value={name}
        onChange={(v) => {
          setName(v);
          if (!slugEdited) setSlug(slugify(v));
        }}
        required
        error={problem?.fields.name}
      />
      <Field
        label="Slug"
        value={slug}
        onChange={(v) => {
          setSlug(v);
          setSlugEdited(true);
        }}
        required
        error={slugProblem(problem?.fields.slug)}
        hint="Lowercase letters, digits and dashes; 3 to 50 characters. It cannot be changed later."
      />
      <div className="actions">
        <Submit busy={busy}>Create organization</Submit>
      </div>
    </Form>
  );
}

/** The pending invitations to the signed-in person's verified address, each to accept or decline here. */
function PendingInvitations({ onJoined }: { onJoined: () => void }) {
  const pending = useLoad('my-invitations', () => api.GET('/api/v1/users/me/invitations'));
  const [notice, setNotice] = useState<string | null>(null);
  const action = useSubmit();
  const list = pending.data?.invitations ?? [];
  if (list.length === 0 && !notice) return null;
  const act = (id: string, what: 'accept' | 'decline', name: string) =>
    action.run(async () => {
      const { error } = await api.POST(`/api/v1/users/me/invitations/{invitationId}/${what}`, {
        params: { path: { invitationId: id } },
      });
      if (error) return toProblem(error);
      setNotice(what === 'accept' ? `You joined ${name}.` : `Invitation to ${name} declined.`);
      pending.reload();
      if (what === 'accept') onJoined();
      return null;
    });
  return (
    <Section title="Invitations for you">
      {notice ? <Notice>{notice}</Notice> : null}
      {action.problem ? <Alert>{action.problem.message ?? 'That did not work.'}</Alert> : null}
      <ul className="rows" aria-label="Invitations for you">
        {list.map((inv) => (
          <li key={inv.id} className="row">
            <div className="row-main">
              <strong>{inv.organization.name}</strong>
              <span className="muted small">
                {inv.inviter.fullName ? `${inv.inviter.fullName} invited you` : 'You are invited'} as {inv.roleName} ·
                expires {when(inv.expiresAt)}
              </span>
            </div>
            <div className="row-actions">
              <button
                type="button"
                className="primary small"
                disabled={action.busy}
                aria-label={`Accept the invitation to ${inv.organization.name}`}
                onClick={() => void act(inv.id, 'accept', inv.organization.name)}
              >
                Accept
              </button>
              <button
                type="button"
                className="secondary small"
                disabled={action.busy}
                aria-label={`Decline the invitation to ${inv.organization.name}`}
                onClick={() => void act(inv.id, 'decline', inv.organization.name)}
              >
                Decline
              </button>
            </div>
          </li>
        ))}
      </ul>
    </Section>
  );
}

export function Organizations() {
  const orgs = useLoad('orgs', myOrganizations);
  const list = orgs.data?.organizations ?? [];
  return (
    <ConsolePage title="Organizations">
      <PendingInvitations onJoined={orgs.reload} />
      <Section title="Your organizations">
        {orgs.loading && !orgs.data ? <p role="status">Loading…</p> : null}
        {orgs.data && list.length === 0 ? <p>You belong to no organization yet. Create one below.</p> : null}
        <ul className="cards">
          {list.map((o) => (
            <li key={o.id}>
              <Link to={`/orgs/${o.id}/projects`} className="card-link">
                <strong>{o.name}</strong>
                <span className="muted">
                  {o.slug} · {o.role}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      </Section>
      <Section title="New organization">
        <CreateOrganization />
      </Section>
    </ConsolePage>
  );
}
