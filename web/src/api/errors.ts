// The API's error envelope, {success: false, error: {code, message, details}}, turned into what a
// form shows: a message per field (validation details name the field: `field.path: problem; …`),
// and the rest for the whole form. A failed fetch (the service unreachable) is a problem too.
import type { ErrorCode } from '@tenantry/client';

export interface Problem {
  code: ErrorCode | 'NETWORK_ERROR';
  /** For the whole form: set when no field took the error. */
  message: string | null;
  /** Field name (as the API's body names it) → what is wrong with it. */
  fields: Record<string, string>;
}

interface Envelope {
  error?: { code?: ErrorCode; message?: string; details?: string };
}

const sentence = (text: string) => (text ? text[0]!.toUpperCase() + text.slice(1) : text);

/**
 * The problem an API error (or a thrown fetch) describes. `fieldFor` names the field that answers
 * for a code whose details name none (409 CONFLICT on a slug, 401 on a current password).
 */
export function toProblem(error: unknown, fieldFor: Partial<Record<ErrorCode, string>> = {}): Problem {
  const body = (error ?? {}) as Envelope;
  if (!body.error || error instanceof Error) {
    return { code: 'NETWORK_ERROR', message: 'The service could not be reached. Try again in a moment.', fields: {} };
  }
  const code = body.error.code ?? 'INTERNAL_ERROR';
  const message = body.error.message ?? 'Something went wrong';
  const details = body.error.details ?? '';
  const fields: Record<string, string> = {};
  for (const part of details.split('; ')) {
    const m = /^([A-Za-z][\w.[\]/]*): (.+)$/.exec(part.trim());
    if (!m) continue;
    const field = m[1]!.split(/[.[/]/)[0]!;
    const what = sentence(m[2]!);
    const text = code === 'VALIDATION_ERROR' && message.startsWith('Invalid request') ? what : `${message}: ${m[2]}`;
    fields[field] = fields[field] ? `${fields[field]}; ${what}` : text;
  }
  const named = fieldFor[code];
  if (named && Object.keys(fields).length === 0)
    fields[named] = details && details !== message ? `${message}: ${details}` : message;
  const taken = Object.keys(fields).length > 0;
  return { code, message: taken ? null : details && details !== message ? `${message} (${details})` : message, fields };
}

/** A problem the page found itself (no API call). */
export const localProblem = (message: string): Problem => ({ code: 'VALIDATION_ERROR', message, fields: {} });
