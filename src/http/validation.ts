// Request validation from the TypeBox route schemas. Bodies are checked as sent (no coercion, unknown
// fields refused: every body schema sets additionalProperties false); querystrings and params are
// converted from strings first. Errors become 400 VALIDATION_ERROR whose details name the field.
import { registerAjvFormats } from '@fastify/type-provider-typebox';
import type { FastifySchemaCompiler } from 'fastify';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { TProperties, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import Format from 'typebox/format';
import { Value } from 'typebox/value';
import { AppError } from '../lib/errors.js';

registerAjvFormats();
// docs/api.md#requests: emails are trimmed before anything else, so surrounding blanks are not a format error.
const strictEmail = Format.Get('email')!;
Format.Set('email', (value) => strictEmail(value.trim()));

/**
 * The validator of each route part, compiled once when the route is declared. `context` holds the
 * named schemas (schemas.ts) that route schemas refer to with `ref`. Bodies are checked as sent;
 * querystrings and path parameters are converted from text first.
 */
export function createValidatorCompiler(context: TProperties): FastifySchemaCompiler<TSchema> {
  return ({ schema, httpPart }) => {
    const check = Compile(context, schema);
    return (value) => {
      const converted = httpPart === 'body' ? value : Value.Convert(context, schema, value);
      if (check.Check(converted)) return { value: converted };
      return { error: check.Errors(converted) as unknown as FastifySchemaValidationError[] };
    };
  };
}

const PART_NAMES: Record<string, string> = {
  body: 'request body',
  querystring: 'query parameters',
  params: 'path parameters',
  headers: 'headers',
};

function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function describe(err: FastifySchemaValidationError): string | null {
  const at = fieldPath(err.instancePath);
  const join = (name: string) => (at ? `${at}.${name}` : name);
  const params = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'boolean':
      // "schema is false": the same unknown field is reported by its additionalProperties error.
      return null;
    case 'required':
      return ((params.requiredProperties as string[] | undefined) ?? [String(params.missingProperty)])
        .map((p) => `${join(p)}: is required`)
        .join('; ');
    case 'additionalProperties':
      return ((params.additionalProperties as string[] | undefined) ?? [String(params.additionalProperty)])
        .map((p) => `${join(p)}: is not an allowed field`)
        .join('; ');
    default:
      return `${at || '(root)'}: ${err.message ?? 'is invalid'}`;
  }
}

export function describeValidation(
  errors: FastifySchemaValidationError[],
  part: string | undefined,
): { message: string; details: string } {
  const lines: string[] = [];
  const seenPaths = new Set<string>();
  for (const err of errors) {
    // An anyOf reports one error per branch for the same field; the first says enough.
    if (err.keyword === 'const' || err.keyword === 'anyOf') {
      if (seenPaths.has(err.instancePath)) continue;
      seenPaths.add(err.instancePath);
    }
    const line = describe(err);
    if (line && !lines.includes(line)) lines.push(line);
    if (lines.length === 3) break;
  }
  return {
    message: `Invalid ${PART_NAMES[part ?? 'body'] ?? 'request'}`,
    details: lines.join('; ') || 'The request does not match the expected format',
  };
}

/** JSON bodies nest objects and arrays this deep at most (the body object itself is level 1). */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether JSON text nests objects and arrays deeper than `max`, counted on the raw text before it is
 * parsed: a deeply nested value would otherwise reach code that walks it recursively (schema
 * checks, hashing for uniqueItems, serialisers) and overflow the stack. One pass, no recursion;
 * strings are skipped with indexOf (a quote preceded by an odd run of backslashes is escaped).
 * Malformed text (an unterminated string, unbalanced brackets) answers false and is left to
 * JSON.parse to refuse.
 */
export function jsonNestingExceeds(text: string, max: number): boolean {
  // Fewer characters than levels: cannot nest that deep.
  if (text.length <= max) return false;
  let depth = 0;
  for (let i = 0, n = text.length; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (;;) {
        const end = text.indexOf('"', i + 1);
        if (end === -1) return false;
        let b = end - 1;
        while (text.charCodeAt(b) === BACKSLASH) b--;
        i = end;
        if ((end - 1 - b) % 2 === 0) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

export const jsonTooDeep = () =>
  new AppError(
    'VALIDATION_ERROR',
    'Invalid request body',
    `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`,
  );

const NUL_ESCAPE = '\\u0000';

/**
 * Whether JSON text holds a NUL character in a string (a value or a key, at any depth): PostgreSQL
 * text cannot store one, so it would otherwise fail deep in a write with a 500. Valid JSON can only
 * spell it as the escape `\u0000` (a raw control character is refused by JSON.parse), and only
 * inside a string; the escape is real when its backslash is not itself escaped, that is when an odd
 * run of backslashes ends where it starts. Run on text that parsed.
 */
export function jsonHasNul(text: string): boolean {
  for (let i = text.indexOf(NUL_ESCAPE); i !== -1; i = text.indexOf(NUL_ESCAPE, i + 1)) {
    let b = i - 1;
    while (b >= 0 && text.charCodeAt(b) === BACKSLASH) b--;
    if ((i - 1 - b) % 2 === 0) return true;
  }
  return false;
}

export const jsonHasNulError = () =>
  new AppError('VALIDATION_ERROR', 'Invalid request body', 'A string of the JSON body holds a NUL character (\\u0000)');
