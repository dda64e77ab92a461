// Members and invitations: roles, removal, invite by email and role, revoke or resend an invitation.
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad, useSession } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Field, Form, Notice, SelectField, Submit, useSubmit } from '../../ui/form';
import { when } from '../../ui/format';
import { Section } from '../../ui/Shell';
import { type Role, useOrgRoles } from './role';

/**
 * The roles the caller may give (to a member or an invitation): every role of the organization but
 * owner whose permissions the caller's own role holds too, as the API allows (docs/api.md#custom-roles).
 */
function assignableRoles(all: ReturnType<typeof useOrgRoles>['all'], mine: ReadonlySet<string>) {
  const options = all
    .filter((r) => r.key !== 'owner' && r.permissions.every((p) => mine.has(p)))
    .map((r) => [r.key, r.name] as const);
  return { options, assignable: (key: string) => options.some(([k]) => k === key) };
}

function Invite({
  orgId,
  roles: ROLES,
  onDone,
}: {
  orgId: string;
  roles: ReadonlyArray<readonly [string, string]>;
  onDone: () => void;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string>('member');
  const [sent, setSent] = useState<string | null>(null);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      setSent(null);
      const { error } = await api.POST('/api/v1/organizations/{orgId}/invitations', {
        params: { path: { orgId } },
        body: { email: email.trim(), role },
      });
      if (error) return toProblem(error, { CONFLICT: 'email', PLAN_LIMIT_EXCEEDED: 'email' });
      setSent(email.trim());
      setEmail('');
      onDone();
      return null;
    });
  return (
    <Form
      onSubmit={() => void submit()}
      problem={problem}
      fields={['email', 'role']}
      className="form inline-form"
      label="Invite a member"
    >
      {sent ? <Notice>Invitation sent to {sent}</Notice> : null}
      <Field
        label="Email"
        type="email"
        autoComplete="off"
        value={email}
        onChange={setEmail}
        required
        error={problem?.fields.email}
      />
      <SelectField label="Role" value={role} onChange={setRole} options={ROLES} error={problem?.fields.role} />
      <div className="actions">
        <Submit busy={busy}>Invite</Submit>
      </div>
    </Form>
  );
}

export function Members({ orgId, role }: { orgId: string; role: Role | undefined }) {
  const session = useSession();
  const me = session.status === 'signed-in' ? session.user.id : null;
  const members = useLoad(`members:${orgId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/members', { params: { path: { orgId }, query: { pageSize: 100 } } }),
  );
  const invitations = useLoad(`invitations:${orgId}`, () =>
    api.GET('/api/v1/organizations/{orgId}/invitations', {
      params: { path: { orgId }, query: { status: 'pending', pageSize: 100 } },
    }),
  );
  const action = useSubmit();
  const { all, mine, may } = useOrgRoles(orgId, role);
  const { options: ROLES, assignable } = assignableRoles(all, mine);

  const act = (call: () => Promise<{ error?: unknown }>, after: () => void) =>
    action.run(async () => {
      const { error } = await call();
      if (error) return toProblem(error);
      after();
      return null;
    });
  const path = (memberId: string) => ({ params: { path: { orgId, memberId } } });
  const invitation = (invitationId: string) => ({ params: { path: { orgId, invitationId } } });

  return (
    <>
      {may('invitations:create') ? (
        <Section title="Invite someone">
          <Invite orgId={orgId} roles={ROLES} onDone={invitations.reload} />
        </Section>
      ) : null}
      <Section title="Members">
        {members.problem ? <Alert>{members.problem.message}</Alert> : null}
        {action.problem ? (
          <Alert>{action.problem.message ?? Object.values(action.problem.fields).join(' ')}</Alert>
        ) : null}
        <ul className="rows" aria-label="Members">
          {members.data?.members.map((m) => (
            <li key={m.id} className="row">
              <div className="row-main">
                <strong>{m.user.fullName ?? m.user.email}</strong>
                <span className="muted small">
                  {m.user.email} · joined {when(m.joinedAt)}
                </span>
              </div>
              <div className="row-actions">
                {(may('members:update') || may('members:remove')) && m.role !== 'owner' && m.userId !== me ? (
                  <>
                    {may('members:update') && assignable(m.role) ? (
                      <>
                        <label className="visually-hidden" htmlFor={`role-${m.id}`}>
                          Role of {m.user.email}
                        </label>
                        <select
                          id={`role-${m.id}`}
                          value={m.role}
                          disabled={action.busy}
                          onChange={(e) =>
                            void act(
                              () =>
                                api.PATCH('/api/v1/organizations/{orgId}/members/{memberId}', {
                                  ...path(m.id),
                                  body: { role: e.target.value },
                                }),
                              members.reload,
                            )
                          }
                        >
                          {ROLES.map(([v, text]) => (
                            <option key={v} value={v}>
                              {text}
                            </option>
                          ))}
                        </select>
                      </>
                    ) : (
                      <span className="badge">{m.role}</span>
                    )}
                    {may('members:remove') ? (
                      <button
                        type="button"
                        className="danger small"
                        disabled={action.busy}
                        aria-label={`Remove ${m.user.email}`}
                        onClick={() =>
                          void act(
                            () => api.DELETE('/api/v1/organizations/{orgId}/members/{memberId}', path(m.id)),
                            members.reload,
                          )
                        }
                      >
                        Remove
                      </button>
                    ) : null}
                  </>
                ) : (
                  <span className="badge">{m.role}</span>
                )}
              </div>
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Pending invitations">
        {invitations.data && invitations.data.data.length === 0 ? <p>No pending invitations.</p> : null}
        <ul className="rows" aria-label="Pending invitations">
          {invitations.data?.data.map((inv) => (
            <li key={inv.id} className="row">
              <div className="row-main">
                <strong>{inv.email}</strong>
                <span className="muted small">
                  {inv.role} · expires {when(inv.expiresAt)}
                </span>
              </div>
              {may('invitations:manage') ? (
                <div className="row-actions">
                  <button
                    type="button"
                    className="secondary small"
                    disabled={action.busy}
                    aria-label={`Resend the invitation to ${inv.email}`}
                    onClick={() =>
                      void act(
                        () =>
                          api.POST(
                            '/api/v1/organizations/{orgId}/invitations/{invitationId}/resend',
                            invitation(inv.id),
                          ),
                        invitations.reload,
                      )
                    }
                  >
                    Resend
                  </button>
                  <button
                    type="button"
                    className="danger small"
                    disabled={action.busy}
                    aria-label={`Revoke the invitation to ${inv.email}`}
                    onClick={() =>
                      void act(
                        () =>
                          api.DELETE('/api/v1/organizations/{orgId}/invitations/{invitationId}', invitation(inv.id)),
                        invitations.reload,
                      )
                    }
                  >
                    Revoke
                  </button>
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
