// /orgs: the organizations you belong to, and a new one.
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Field, Form, Submit, useSubmit } from '../../ui/form';
import { slugify } from '../../ui/format';
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
        error={problem?.fields.slug}
        hint="Lowercase letters, digits and dashes; 3 to 50 characters. It cannot be changed later."
      />
      <div className="actions">
        <Submit busy={busy}>Create organization</Submit>
      </div>
    </Form>
  );
}

export function Organizations() {
  const orgs = useLoad('orgs', myOrganizations);
  const list = orgs.data?.organizations ?? [];
  return (
    <ConsolePage title="Organizations">
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
