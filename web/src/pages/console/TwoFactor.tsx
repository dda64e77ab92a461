// Two-factor: set up (the password, then the QR code of `otpauthUrl` and the backup codes, shown
// once), confirm with a first code, or turn off with the password and a code.
import { CopyButton, DownloadLink } from '../../ui/copy';
import { useEffect, useState } from 'react';
import QRCode from 'qrcode';
import { toProblem } from '../../api/errors';
import { api, reloadMe } from '../../api/session';
import { Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { Section } from '../../ui/Shell';

interface Pending {
  secret: string;
  otpauthUrl: string;
  backupCodes: string[];
}

function QrCode({ text }: { text: string }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    QRCode.toDataURL(text, { margin: 1, width: 200 }).then((url) => live && setSrc(url));
    return () => {
      live = false;
    };
  }, [text]);
  return src ? (
    <img className="qr" src={src} width={200} height={200} alt="QR code for your authenticator app" />
  ) : null;
}

function Confirm({ pending, onDone }: { pending: Pending; onDone: () => void }) {
  const [code, setCode] = useState('');
  const { busy, problem, run } = useSubmit();
  const submit = () =>
    run(async () => {
      const { error } = await api.POST('/api/v1/auth/two-factor/verify', { body: { code: code.trim() } });
      if (error) return toProblem(error, { VALIDATION_ERROR: 'code' });
      await reloadMe();
      onDone();
      return null;
    });
  return (
    <div className="two-factor-setup">
      <div className="qr-box">
        <QrCode text={pending.otpauthUrl} />
        <p className="small">
          Scan it with your authenticator app, or enter the key{' '}
          <code className="secret" data-testid="totp-secret">
            {pending.secret}
          </code>
        </p>
      </div>
      <div>
        <h3>Backup codes</h3>
        <p>Each works once if you lose your device. They are shown only now: keep them somewhere safe.</p>
        <ul className="codes" aria-label="Backup codes">
          {pending.backupCodes.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ul>
        <div className="actions">
          <CopyButton text={pending.backupCodes.join('\n')} label="Copy codes" />
          <DownloadLink text={`${pending.backupCodes.join('\n')}\n`} name="backup-codes.txt" label="Download codes" />
        </div>
        <Form onSubmit={() => void submit()} problem={problem} fields={['code']} label="Confirm two-factor">
          <Field
            label="Code"
            autoComplete="one-time-code"
            inputMode="numeric"
            value={code}
            onChange={setCode}
            error={problem?.fields.code}
          />
          <div className="actions">
            <Submit busy={busy}>Turn on two-factor</Submit>
          </div>
        </Form>
      </div>
    </div>
  );
}

export function TwoFactor({ enabled }: { enabled: boolean }) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [pending, setPending] = useState<Pending | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { busy, problem, run } = useSubmit();

  const setup = () =>
    run(async () => {
      setNotice(null);
      const { data, error } = await api.POST('/api/v1/auth/two-factor/setup', { body: { password } });
      if (error) return toProblem(error, { AUTHENTICATION_ERROR: 'password', ACCOUNT_LOCKED: 'password' });
      setPending({ secret: data.secret, otpauthUrl: data.otpauthUrl, backupCodes: data.backupCodes });
      setPassword('');
      return null;
    });
  const disable = () =>
    run(async () => {
      setNotice(null);
      const { error } = await api.POST('/api/v1/auth/two-factor/disable', { body: { password, code: code.trim() } });
      if (error)
        return toProblem(error, {
          AUTHENTICATION_ERROR: 'password',
          VALIDATION_ERROR: 'code',
          ACCOUNT_LOCKED: 'password',
        });
      setPassword('');
      setCode('');
      setNotice('Two-factor is off.');
      await reloadMe();
      return null;
    });

  return (
    <Section title="Two-factor authentication" id="two-factor">
      {notice ? <Notice>{notice}</Notice> : null}
      {enabled ? (
        <>
          <p>
            Two-factor is <strong>on</strong>: signing in asks for a code from your authenticator app.
          </p>
          <Form
            onSubmit={() => void disable()}
            problem={problem}
            fields={['password', 'code']}
            label="Turn off two-factor"
          >
            <Field
              label="Password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={setPassword}
              error={problem?.fields.password}
            />
            <Field
              label="Code"
              autoComplete="one-time-code"
              value={code}
              onChange={setCode}
              error={problem?.fields.code}
            />
            <div className="actions">
              <Submit busy={busy} className="danger">
                Turn off two-factor
              </Submit>
            </div>
          </Form>
        </>
      ) : pending ? (
        <Confirm
          pending={pending}
          onDone={() => {
            setPending(null);
            setNotice('Two-factor is on.');
          }}
        />
      ) : (
        <>
          <p>Two-factor is off. Turn it on to ask for a code from an authenticator app at every sign-in.</p>
          <Form onSubmit={() => void setup()} problem={problem} fields={['password']} label="Set up two-factor">
            <Field
              label="Password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={setPassword}
              error={problem?.fields.password}
            />
            <div className="actions">
              <Submit busy={busy}>Set up two-factor</Submit>
            </div>
          </Form>
        </>
      )}
    </Section>
  );
}
