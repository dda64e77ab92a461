// The account's life on /account: move it to a new email address (confirmed by a link to the new
// address, which lands on /confirm-email), download everything held about you, delete it.
import { useState } from 'react';
import { toProblem } from '../../api/errors';
import { api, COOKIE_MODE } from '../../api/session';
import { Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { Section } from '../../ui/Shell';

function EmailChange() {
  const [newEmail, setNewEmail] = useState('');
  const [password, setPassword] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      setSentTo(null);
      const address = newEmail.trim();
      const { error } = await api.POST('/api/v1/users/me/email', { body: { newEmail: address, password } });
      if (error)
        return toProblem(error, { AUTHENTICATION_ERROR: 'password', ACCOUNT_LOCKED: 'password', CONFLICT: 'newEmail' });
      setSentTo(address);
      setPassword('');
      return null;
    });
  return (
    <Section title="Email address">
      <Form
        onSubmit={() => void submit()}
        problem={problem}
        fields={['newEmail', 'password']}
        label="Change email address"
      >
        {sentTo ? (
          <Notice>
            A confirmation link is on its way to {sentTo}. Your address changes once you follow it (within 24 hours).
          </Notice>
        ) : null}
        <Field
          label="New email address"
          type="email"
          autoComplete="email"
          value={newEmail}
          onChange={setNewEmail}
          required
          error={problem?.fields.newEmail}
        />
        <Field
          label="Your password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={setPassword}
          required
          error={problem?.fields.password}
        />
        <div className="actions">
          <Submit busy={busy}>Change email address</Submit>
        </div>
      </Form>
    </Section>
  );
}

function Export() {
  const { busy, problem, run } = useSubmit();
  const download = () =>
    run(async () => {
      const { data, error } = await api.GET('/api/v1/users/me/export');
      if (!data) return toProblem(error);
      const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `tenantry-account-${data.exportedAt.slice(0, 10)}.json`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 0);
      return null;
    });
  return (
    <Section title="Your data">
      <Form onSubmit={() => void download()} problem={problem} label="Download your data">
        <p>
          One JSON file with your profile, sessions, memberships, social links, passkeys and the changes you made in
          organizations. It holds no password or secret.
        </p>
        <div className="actions">
          <Submit busy={busy} className="secondary">
            Download your data
          </Submit>
        </div>
      </Form>
    </Section>
  );
}

function DeleteAccount() {
  const [proof, setProof] = useState('');
  const [withCode, setWithCode] = useState(false);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      const body = withCode ? { twoFactorCode: proof.trim() } : { password: proof };
      const { error } = await api.DELETE('/api/v1/users/me', { body, headers: COOKIE_MODE });
      if (error) return toProblem(error, { AUTHENTICATION_ERROR: 'proof', ACCOUNT_LOCKED: 'proof' });
      // The session is gone with the account: a fresh load of the sign-in page starts signed out.
      window.location.assign('/sign-in?deleted=1');
      return null;
    });
  return (
    <Section title="Delete account">
      <Form
        onSubmit={() => void submit()}
        problem={problem}
        fields={['proof', 'password', 'twoFactorCode']}
        label="Delete account"
      >
        <p>
          Deletes your account at once: organizations where you are the only member are deleted (their subscriptions
          canceled), you leave the others, and your sessions, passkeys and API keys stop working. If you own an
          organization that has other members, transfer it first.
        </p>
        <Field
          label={withCode ? 'Two-factor code' : 'Your password'}
          type={withCode ? 'text' : 'password'}
          autoComplete={withCode ? 'one-time-code' : 'current-password'}
          value={proof}
          onChange={setProof}
          required
          error={problem?.fields.proof ?? problem?.fields.password ?? problem?.fields.twoFactorCode}
        />
        <p className="small">
          <button type="button" className="link" onClick={() => setWithCode(!withCode)}>
            {withCode ? 'Use your password instead' : 'No password? Use a two-factor code'}
          </button>
        </p>
        <div className="actions">
          <Submit busy={busy} className="danger">
            Delete my account
          </Submit>
        </div>
      </Form>
    </Section>
  );
}

export function AccountLife() {
  return (
    <>
      <EmailChange />
      <Export />
      <DeleteAccount />
    </>
  );
}
