// /account: profile, password, sessions, two-factor, passkeys, and the account's email, data and deletion.
import { useState } from 'react';
import { useAppConfig } from '../../api/app-config';
import { toProblem } from '../../api/errors';
import { useLoad, useSession } from '../../api/hooks';
import { api, reloadMe } from '../../api/session';
import { Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { ConsolePage, Section } from '../../ui/Shell';
import { AccountLife } from './AccountLife';
import { Passkeys } from './Passkeys';
import { Sessions } from './Sessions';
import { TwoFactor } from './TwoFactor';

function Profile() {
  const me = useLoad('me', () => api.GET('/api/v1/users/me'));
  // What was typed wins over what loads (a late load never overwrites it); until then, the name loaded.
  const [typed, setTyped] = useState<string | null>(null);
  const fullName = typed ?? me.data?.fullName ?? '';
  const [saved, setSaved] = useState(false);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      setSaved(false);
      const { error } = await api.PATCH('/api/v1/users/me', { body: { fullName: fullName.trim() } });
      if (error) return toProblem(error);
      setSaved(true);
      await reloadMe();
      return null;
    });
  return (
    <Section title="Profile">
      <p>
        Email: <strong>{me.data?.email}</strong>
        {me.data?.emailVerified ? ' (verified)' : ''}
      </p>
      <Form onSubmit={() => void submit()} problem={problem} fields={['fullName']} label="Profile">
        {saved ? <Notice>Profile saved</Notice> : null}
        <Field
          label="Full name"
          autoComplete="name"
          value={fullName}
          onChange={setTyped}
          error={problem?.fields.fullName}
        />
        <div className="actions">
          <Submit busy={busy}>Save profile</Submit>
        </div>
      </Form>
    </Section>
  );
}

function Password() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      setDone(false);
      const { error } = await api.PUT('/api/v1/users/me/password', {
        body: { currentPassword: current, newPassword: next },
      });
      if (error)
        return toProblem(error, { AUTHENTICATION_ERROR: 'currentPassword', ACCOUNT_LOCKED: 'currentPassword' });
      setDone(true);
      setCurrent('');
      setNext('');
      return null;
    });
  return (
    <Section title="Password">
      <Form
        onSubmit={() => void submit()}
        problem={problem}
        fields={['currentPassword', 'newPassword']}
        label="Change password"
      >
        {done ? <Notice>Password changed. Your other sessions were signed out.</Notice> : null}
        <Field
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={current}
          onChange={setCurrent}
          error={problem?.fields.currentPassword}
        />
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          value={next}
          onChange={setNext}
          error={problem?.fields.newPassword}
        />
        <div className="actions">
          <Submit busy={busy}>Change password</Submit>
        </div>
      </Form>
    </Section>
  );
}

export function Account() {
  const session = useSession();
  // The password change is offered only where the service uses passwords (once that is known).
  const passwordOn = useAppConfig()?.signIn.password === true;
  return (
    <ConsolePage title="Account">
      <div className="grid">
        <Profile />
        {passwordOn ? <Password /> : null}
      </div>
      <Sessions />
      {session.status === 'signed-in' ? <TwoFactor enabled={session.user.twoFactorEnabled} /> : null}
      <Passkeys />
      <AccountLife />
    </ConsolePage>
  );
}
