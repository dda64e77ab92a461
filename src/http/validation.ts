// Request validation from the TypeBox route schemas. Bodies are checked as sent (no coercion, unknown
// fields refused: every body schema sets additionalProperties false); querystrings and params are
// converted from strings first. Errors become 400 VALIDATION_ERROR whose details name the field.
import { registerAjvFormats, TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import Format from 'typebox/format';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';

registerAjvFormats();
// DECISIONS §1: emails are trimmed before anything else, so surrounding blanks are not a format error.
const strictEmail = Format.Get('email')!;
Format.Set('email', (value) => strictEmail(value.trim()));

export const validatorCompiler = TypeBoxValidatorCompiler;

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
      return ((params.requiredProperties as string[] | undefined) ?? [String(params.missingProperty)]).map((p) => `${join(p)}: is required`).join('; ');
    case 'additionalProperties':
      return ((params.additionalProperties as string[] | undefined) ?? [String(params.additionalProperty)])
        .map((p) => `${join(p)}: is not an allowed field`)
        .join('; ');
    default:
      return `${at || '(root)'}: ${err.message ?? 'is invalid'}`;
  }
}

export function describeValidation(errors: FastifySchemaValidationError[], part: string | undefined): { message: string; details: string } {
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
