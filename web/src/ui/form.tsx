// Form pieces: a labelled field whose error sits next to it (role=alert, tied by aria-describedby),
// a form that shows what no field of it took, and a hook running one submission at a time.
import { useId, useState, type FormEvent, type InputHTMLAttributes, type ReactNode } from 'react';
import { toProblem, type Problem } from '../api/errors';

export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  /** Runs fn; a Problem it returns (or an error it throws) is shown. */
  async function run(fn: () => Promise<Problem | null | undefined | void>) {
    if (busy) return;
    setBusy(true);
    setProblem(null);
    try {
      const found = await fn();
      setProblem(found ?? null);
    } catch (err) {
      setProblem(toProblem(err));
    } finally {
      setBusy(false);
    }
  }
  return { busy, problem, setProblem, run };
}

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'onChange' | 'value'>;

export function Field({
  label,
  value,
  onChange,
  error,
  hint,
  ...input
}: InputProps & {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string | undefined;
  hint?: ReactNode;
}) {
  const id = useId();
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={described || undefined}
        {...input}
      />
      {hint ? (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

export function SelectField({
  label,
  value,
  onChange,
  options,
  error,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  options: ReadonlyArray<readonly [string, string]>;
  error?: string | undefined;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      >
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
      {error ? (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** What the form's own fields did not show: the message, and errors of fields it has not. */
export function leftover(problem: Problem | null, fields: readonly string[]): string | null {
  if (!problem) return null;
  const others = Object.entries(problem.fields).filter(([f]) => !fields.includes(f));
  const parts = [problem.message, ...others.map(([f, text]) => `${f}: ${text}`)].filter(Boolean);
  return parts.length ? parts.join(' ') : null;
}

export function Form({
  onSubmit,
  problem,
  fields = [],
  children,
  className,
  label,
}: {
  onSubmit: () => void;
  problem: Problem | null;
  fields?: readonly string[];
  children: ReactNode;
  className?: string;
  label?: string;
}) {
  const rest = leftover(problem, fields);
  return (
    <form
      className={className ?? 'form'}
      noValidate
      aria-label={label}
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {rest ? <Alert>{rest}</Alert> : null}
      {children}
    </form>
  );
}

export const Alert = ({ children }: { children: ReactNode }) => (
  <div className="alert" role="alert">
    {children}
  </div>
);

export const Notice = ({ children }: { children: ReactNode }) => (
  <div className="notice" role="status">
    {children}
  </div>
);

export function Submit({ busy, children, className }: { busy: boolean; children: ReactNode; className?: string }) {
  return (
    <button type="submit" className={className ?? 'primary'} aria-disabled={busy || undefined} disabled={busy}>
      {children}
    </button>
  );
}
