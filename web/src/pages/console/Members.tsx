// Members and invitations: roles, removal, invite by email and role, revoke or resend an invitation.
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { useLoad, useSession } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Field, Form, Notice, SelectField, Submit, useSubmit } from '../../ui/form';
import { when } from '../../ui/format';
import { Section } from '../../ui/Shell';
import { canManage, type Role } from './role';
import { orgRoles } from './Roles';

const BUILT_IN: ReadonlyArray<readonly [string, string]> = [
  ['member', 'Member'],
  ['admin', 'Admin'],
  ['viewer', 'Viewer'],
];

/** The roles a member or an invitation may be given: the built-in ones but owner, and the organization's custom roles. */
function useAssignableRoles(orgId: string): ReadonlyArray<readonly [string, string]> {
  const roles = useLoad(`roles:${orgId}`, () => orgRoles(orgId));
  return [...BUILT_IN, ...(roles.data?.roles ?? []).filter((r) => !r.builtIn).map((r) => [r.key, r.name] as const)];
}

function Invite({ orgId, onDone }: { orgId: string; onDone: () => void }) {
  const ROLES = useAssignableRoles(orgId);
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
  const manage = canManage(role);
  const ROLES = useAssignableRoles(orgId);

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
      {manage ? (
        <Section title="Invite someone">
          <Invite orgId={orgId} onDone={invitations.reload} />
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
                {manage && m.role !== 'owner' && m.userId !== me ? (
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
              {manage ? (
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
