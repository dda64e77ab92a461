// Copying a secret shown once, and saving backup codes as a file: the button says when it worked.
import { useState } from 'react';

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    const done = navigator.clipboard?.writeText(text);
    if (!done) return setState('failed');
    done.then(
      () => setState('copied'),
      () => setState('failed'),
    );
  };
  return (
    <button type="button" className="secondary small" onClick={copy} aria-live="polite">
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy it by hand' : label}
    </button>
  );
}

/** A link that saves `text` as a file named `name`. */
export function DownloadLink({ text, name, label }: { text: string; name: string; label: string }) {
  const href = `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`;
  return (
    <a className="button secondary small" href={href} download={name}>
      {label}
    </a>
  );
}
