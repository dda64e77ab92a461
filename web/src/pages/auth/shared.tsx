// What the sign-in pages share: the card they sit in, the two-factor step, and the end of a sign-in.
import { useState, type ReactNode } from 'react';
import { toProblem, type Problem } from '../../api/errors';
import type { BrowserSignIn } from '../../api/contract';
import { signedIn } from '../../api/session';
import { Field, Form, Submit, useSubmit } from '../../ui/form';
import { navigate, safeNext } from '../../router';

export function AuthCard({ title, children, wide }: { title: string; children: ReactNode; wide?: boolean }) {
  return (
    <main id="main" className={wide ? 'auth auth-wide' : 'auth'}>
      <section className="card" aria-labelledby="page-title">
        <h1 id="page-title">{title}</h1>
        {children}
      </section>
    </main>
  );
}

/** A sign-in answer: signed in (then on to `next`), asked for a second factor, or a problem. */
export type SignInOutcome =
  { done: true } | { done: false; twoFactor: true; twoFactorToken?: string } | { done: false; problem: Problem };

interface SignInResult {
  data?: BrowserSignIn | undefined;
  error?: unknown;
}

export function outcomeOf(result: SignInResult, fieldFor: Parameters<typeof toProblem>[1] = {}): SignInOutcome {
  if (result.data) {
    signedIn(result.data);
    return { done: true };
  }
  const err = result.error as { requiresTwoFactor?: boolean; twoFactorToken?: string } | undefined;
  if (err?.requiresTwoFactor)
    return { done: false, twoFactor: true, ...(err.twoFactorToken ? { twoFactorToken: err.twoFactorToken } : {}) };
  return { done: false, problem: toProblem(result.error, fieldFor) };
}

export function finishSignIn(next: string | null) {
  try {
    localStorage.removeItem(AFTER_VERIFY);
  } catch {
    // Nothing was kept.
  }
  navigate(safeNext(next, '/'), { replace: true });
}

/** The second step: a TOTP code or a backup code, sent by `submit`. */
export function TwoFactorStep({
  submit,
  onCancel,
}: {
  submit: (code: string) => Promise<Problem | null>;
  onCancel?: () => void;
}) {
  const [code, setCode] = useState('');
  const { busy, problem, run } = useSubmit();
  return (
    <Form
      onSubmit={() => void run(() => submit(code.trim()))}
      problem={problem}
      fields={['code', 'twoFactorCode']}
      label="Two-factor code"
    >
      <p>Enter the 6-digit code from your authenticator app, or one of your backup codes.</p>
      <Field
        label="Code"
        value={code}
        onChange={setCode}
        autoComplete="one-time-code"
        inputMode="text"
        autoFocus
        required
        error={problem?.fields.code ?? problem?.fields.twoFactorCode}
      />
      <div className="actions">
        <Submit busy={busy}>Verify</Submit>
        {onCancel ? (
          <button type="button" className="link" onClick={onCancel}>
            Start over
          </button>
        ) : null}
      </div>
    </Form>
  );
}

// Where a sign-up that began somewhere (an invitation) goes once the address is verified: the
// verification link may open in another tab, so the page to come back to is kept in this browser's
// storage until the verified page hands it to sign-in.
const AFTER_VERIFY = 'tenantry.afterVerify';
export function rememberAfterVerify(next: string | null) {
  try {
    if (next && safeNext(next, '') === next) localStorage.setItem(AFTER_VERIFY, next);
  } catch {
    // Storage refused (private mode): the person signs in and finds the invitation under Organizations.
  }
}
/** The page kept by rememberAfterVerify, until a sign-in finishes (finishSignIn forgets it). */
export function afterVerify(): string | null {
  try {
    const next = localStorage.getItem(AFTER_VERIFY);
    return next && safeNext(next, '') === next ? next : null;
  } catch {
    return null;
  }
}
