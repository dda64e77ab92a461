// The account's passkeys (on /account): add one through the browser's ceremony
// (@simplewebauthn/browser), rename or delete one.
import { useState } from 'react';
import { startRegistration, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { toProblem } from '../../api/errors';
import { useLoad } from '../../api/hooks';
import { api } from '../../api/session';
import { Alert, Field, Form, Notice, Submit, useSubmit } from '../../ui/form';
import { when } from '../../ui/format';
import { Section } from '../../ui/Shell';
import { ceremonyProblem } from '../auth/PasskeySignIn';

interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

function Row({
  passkey,
  busy,
  rename,
  remove,
}: {
  passkey: Passkey;
  busy: boolean;
  rename: (name: string) => Promise<boolean>;
  remove: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(passkey.name);
  return (
    <tr>
      <td className="wrap">
        {editing ? (
          <form
            className="inline"
            aria-label={`Rename ${passkey.name}`}
            onSubmit={(e) => {
              e.preventDefault();
              void rename(name.trim()).then((ok) => ok && setEditing(false));
            }}
          >
            <input
              aria-label="Passkey name"
              value={name}
              maxLength={100}
              onChange={(e) => setName(e.target.value)}
              autoFocus
            />
            <button type="submit" className="secondary small" disabled={busy}>
              Save
            </button>
          </form>
        ) : (
          passkey.name
        )}
      </td>
      <td>{when(passkey.createdAt)}</td>
      <td>{passkey.lastUsedAt ? when(passkey.lastUsedAt) : 'Never'}</td>
      <td>
        <div className="actions">
          {editing ? null : (
            <button
              type="button"
              className="secondary small"
              disabled={busy}
              onClick={() => setEditing(true)}
              aria-label={`Rename ${passkey.name}`}
            >
              Rename
            </button>
          )}
          <button
            type="button"
            className="danger small"
            disabled={busy}
            onClick={remove}
            aria-label={`Delete ${passkey.name}`}
          >
            Delete
          </button>
        </div>
      </td>
    </tr>
  );
}

/** What the API asks to re-prove the person with before a new passkey (docs/api.md#re-authentication). */
type ProofKind = 'password' | 'twoFactorCode' | 'signIn';

interface ReauthAnswer {
  reauthenticationRequired?: boolean;
  error?: { details?: string };
}

/** The proof a 401 with reauthenticationRequired names (its details start with the field), if it names one. */
function proofNamed(answer: ReauthAnswer): ProofKind | null {
  const details = answer.error?.details ?? '';
  if (details.startsWith('password:')) return 'password';
  if (details.startsWith('twoFactorCode:')) return 'twoFactorCode';
  if (/sign in again/i.test(details)) return 'signIn';
  return null;
}

export function Passkeys() {
  const list = useLoad('passkeys', () => api.GET('/api/v1/users/me/passkeys'));
  const [name, setName] = useState('');
  const [added, setAdded] = useState<string | null>(null);
  // Set once the API asked for a proof: a session that signed in a while ago confirms the password
  // (or a two-factor code) before a new passkey, which could otherwise outlive a stolen session.
  const [proofKind, setProofKind] = useState<ProofKind | null>(null);
  const [proof, setProof] = useState('');
  const { busy, problem, setProblem, run } = useSubmit();

  const add = () =>
    run(async () => {
      setAdded(null);
      const sent =
        proofKind === 'password' && proof
          ? { password: proof }
          : proofKind === 'twoFactorCode' && proof.trim()
            ? { twoFactorCode: proof.trim() }
            : null;
      const start = await api.POST('/api/v1/auth/passkeys/registration/options', sent ? { body: sent } : {});
      if (!start.data) {
        const answer = (start.error ?? {}) as ReauthAnswer;
        if (answer.reauthenticationRequired !== true) return toProblem(start.error, { ACCOUNT_LOCKED: 'proof' });
        const kind = proofNamed(answer) ?? proofKind ?? 'password';
        setProofKind(kind);
        setProof('');
        // Asked for the first time: the field and its hint say it. A wrong proof: said at the field.
        return sent && kind !== 'signIn' ? toProblem(start.error, { AUTHENTICATION_ERROR: 'proof' }) : null;
      }
      let response;
      try {
        response = await startRegistration({
          optionsJSON: start.data as unknown as PublicKeyCredentialCreationOptionsJSON,
        });
      } catch (err) {
        return ceremonyProblem(err);
      }
      setProofKind(null);
      setProof('');
      const body = {
        response: { ...response, response: { ...response.response } },
        ...(name.trim() ? { name: name.trim() } : {}),
      };
      const { data, error } = await api.POST('/api/v1/auth/passkeys/registration/verify', { body });
      if (!data) return toProblem(error);
      setAdded(data.name);
      setName('');
      list.reload();
      return null;
    });

  const rename = async (id: string, newName: string) => {
    let ok = false;
    await run(async () => {
      const { error } = await api.PATCH('/api/v1/users/me/passkeys/{id}', {
        params: { path: { id } },
        body: { name: newName },
      });
      if (error) return toProblem(error);
      ok = true;
      list.reload();
      return null;
    });
    return ok;
  };

  const remove = (id: string) =>
    run(async () => {
      setAdded(null);
      const { error } = await api.DELETE('/api/v1/users/me/passkeys/{id}', { params: { path: { id } } });
      if (error) return toProblem(error);
      list.reload();
      return null;
    });

  const passkeys = list.data?.passkeys ?? [];
  return (
    <Section title="Passkeys">
      <p>
        Sign in with your device’s screen lock or a security key instead of a password. A passkey that checks your PIN
        or fingerprint also counts as your second factor.
      </p>
      {list.problem?.message ? <Alert>{list.problem.message}</Alert> : null}
      {passkeys.length > 0 ? (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Added</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {passkeys.map((p) => (
                <Row
                  key={`${p.id}:${p.name}`}
                  passkey={p}
                  busy={busy}
                  rename={(n) => rename(p.id, n)}
                  remove={() => void remove(p.id)}
                />
              ))}
            </tbody>
          </table>
        </div>
      ) : list.data ? (
        <p>No passkey yet.</p>
      ) : null}
      <Form
        onSubmit={() => {
          setProblem(null);
          void add();
        }}
        problem={problem}
        fields={['name', 'proof']}
        label="Add a passkey"
      >
        {added ? <Notice>Passkey “{added}” added</Notice> : null}
        <Field
          label="Name of the new passkey (optional)"
          value={name}
          onChange={setName}
          maxLength={100}
          error={problem?.fields.name}
        />
        {proofKind === 'password' ? (
          <Field
            label="Your password"
            type="password"
            autoComplete="current-password"
            value={proof}
            onChange={setProof}
            required
            autoFocus
            hint="You signed in a while ago: confirm your password to add a passkey."
            error={problem?.fields.proof}
          />
        ) : null}
        {proofKind === 'twoFactorCode' ? (
          <Field
            label="Two-factor code"
            autoComplete="one-time-code"
            value={proof}
            onChange={setProof}
            required
            autoFocus
            hint="You signed in a while ago: confirm with a code from your authenticator app, or a backup code, to add a passkey."
            error={problem?.fields.proof}
          />
        ) : null}
        {proofKind === 'signIn' ? (
          <Alert>
            You signed in a while ago, and your account has no password to confirm with: sign out and sign in again,
            then add the passkey.
          </Alert>
        ) : null}
        <div className="actions">
          <Submit busy={busy}>Add a passkey</Submit>
        </div>
      </Form>
    </Section>
  );
}
