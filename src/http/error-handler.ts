// The only writer of error bodies. Known errors keep their status and code; everything else is
// logged with the request id and answers 500 INTERNAL_ERROR without internals.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pgErrorCode } from '../db/client.js';
import { AppError, type ErrorCode } from '../lib/errors.js';
import { describeValidation } from './validation.js';

// Connection-level failures: the database (or Redis) is unreachable, not the request at fault.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);

function isUnavailable(err: unknown): boolean {
  let e = err as { code?: unknown; cause?: unknown; message?: unknown } | undefined;
  for (let i = 0; e && i < 4; i++) {
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
    // ioredis gives up on a command after its reconnect attempts (Redis down or unreachable).
    if ((e as { name?: unknown }).name === 'MaxRetriesPerRequestError') return true;
    if (
      typeof e.message === 'string' &&
      /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end|PGlite is clos(?:ed|ing)|^Connection is closed\.?$|enableOfflineQueue options is false/i.test(
        e.message,
      )
    ) {
      return true;
    }
    e = e.cause as typeof e;
  }
  return false;
}

export function toAppError(err: FastifyError | AppError | Error): AppError | null {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError;
  if (fe.validation) {
    const { message, details } = describeValidation(fe.validation, fe.validationContext);
    return new AppError('VALIDATION_ERROR', message, details);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body is too large', 'The body must not exceed 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported content type', 'Send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError(
        'VALIDATION_ERROR',
        'Invalid request body',
        'The body is empty but Content-Type is application/json',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('VALIDATION_ERROR', 'Malformed JSON', 'The request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('VALIDATION_ERROR', 'Invalid request', 'Content-Length does not match the body');
  }
  if (err instanceof SyntaxError && fe.statusCode === 400) {
    return new AppError('VALIDATION_ERROR', 'Malformed JSON', 'The request body is not valid JSON');
  }
  if (isUnavailable(err)) {
    return new AppError(
      'SERVICE_UNAVAILABLE',
      'Service temporarily unavailable',
      'A backing service is unreachable; try again shortly',
      {
        'Retry-After': '1',
      },
    );
  }
  if (pgErrorCode(err) === '23503') {
    // A row this change refers to (its organization, user, …) was deleted meanwhile.
    return new AppError('NOT_FOUND', 'Resource not found', 'It was deleted while this request was being handled');
  }
  if (pgErrorCode(err) === '22P02' || pgErrorCode(err) === '22021') {
    // Invalid text for a column type or bad encoding (a NUL byte): the input was wrong.
    return new AppError('VALIDATION_ERROR', 'Invalid request', 'A value has an invalid format');
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    const code: ErrorCode =
      fe.statusCode === 404 ? 'NOT_FOUND' : fe.statusCode === 429 ? 'RATE_LIMIT_EXCEEDED' : 'VALIDATION_ERROR';
    return new AppError(code, 'Invalid request', fe.message);
  }
  return null;
}

/** The error envelope of `e` (docs/api.md#errors). */
export const errorBody = (e: AppError) => ({
  success: false as const,
  error: { code: e.code, message: e.message, details: e.details },
  ...e.extra,
});

/** The 500 of an unexpected error: its reference is the request id, which the log carries too. */
export const internalError = (request: FastifyRequest) =>
  new AppError('INTERNAL_ERROR', 'An unexpected error occurred', `Reference: ${request.id}`);

/** The status, headers and envelope of `e`, on a reply that has not been sent yet. */
export function prepareError(reply: FastifyReply, e: AppError) {
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
  // RFC 6750 §3: a 401 names the scheme it expects.
  if (e.statusCode === 401) reply.header('www-authenticate', 'Bearer realm="tenantry"');
  reply.status(e.statusCode);
  return errorBody(e);
}

export function sendError(reply: FastifyReply, e: AppError) {
  return reply.send(prepareError(reply, e));
}

/**
 * Errors Fastify raises before routing (a path that is not valid percent-encoding, a path parameter
 * over the length limit): otherwise answered with Fastify's own body, outside the envelope.
 */
export function frameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  switch (err.code) {
    case 'FST_ERR_BAD_URL':
      return sendError(
        reply,
        new AppError('VALIDATION_ERROR', 'Invalid path', 'The URL path is not valid percent-encoding'),
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return sendError(reply, new AppError('VALIDATION_ERROR', 'Invalid path', 'A path parameter is too long'));
    default:
      request.log.error({ err }, 'framework error');
      return sendError(reply, internalError(request));
  }
}

export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = toAppError(err);
    if (known) {
      if (known.statusCode >= 500) request.log.error({ err }, 'request failed: %s', known.code);
      return sendError(reply, known);
    }
    request.log.error({ err }, 'unhandled error');
    return sendError(reply, internalError(request));
  });
}
