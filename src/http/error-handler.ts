import type { FastifyError, FastifyInstance } from 'fastify';
import { LmBenchError, isLmBenchError, toLmBenchError, type ErrorCode } from '../errors.js';

/**
 * Every error leaves as `{ error: { code, kind, message, details } }` with the catalog's HTTP status.
 * fastify's own errors (body too large, bad JSON, rate limit, 404) are mapped onto catalog codes;
 * 5xx bodies hide the message and details (logged in full instead), after fastify/demo's `app.ts`.
 */
// Each with the part of the request it is about (`details.field`, as every other 4xx has) and, where
// fastify's own words do not say what to send instead, a message that does.
const FASTIFY_CODES: Record<string, { readonly code: ErrorCode; readonly field: string; readonly message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'LMB_ERR_BODY_TOO_LARGE', field: 'body' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'LMB_ERR_INVALID_ARGUMENT', field: 'content-type', message: 'content-type: this service takes request bodies as JSON, sent with content-type application/json' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'LMB_ERR_INVALID_ARGUMENT', field: 'body' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'LMB_ERR_INVALID_ARGUMENT', field: 'body' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'LMB_ERR_INVALID_ARGUMENT', field: 'content-length' },
  FST_ERR_VALIDATION: { code: 'LMB_ERR_INVALID_ARGUMENT', field: 'body' },
  FST_ERR_BAD_URL: { code: 'LMB_ERR_INVALID_ARGUMENT', field: 'url', message: 'url: a path segment is not valid percent-encoding' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'LMB_ERR_INVALID_ARGUMENT', field: 'url', message: 'url: a path parameter is longer than 256 characters' },
};

export function asServiceError(err: unknown): LmBenchError {
  if (isLmBenchError(err)) return err;
  const fe = err as Partial<FastifyError> & { statusCode?: number };
  const known = typeof fe.code === 'string' ? FASTIFY_CODES[fe.code] : undefined;
  if (known !== undefined) {
    return new LmBenchError(known.code, known.message ?? fe.message ?? 'bad request', { cause: err, details: { field: known.field } });
  }
  if (fe.statusCode === 429) return new LmBenchError('LMB_ERR_RATE_LIMITED', fe.message ?? 'too many requests', { cause: err });
  // JSON.parse failures of the body parser carry statusCode 400 and no code.
  if (fe.statusCode === 400) return new LmBenchError('LMB_ERR_INVALID_ARGUMENT', fe.message ?? 'bad request', { cause: err, details: { field: 'body' } });
  return toLmBenchError(err);
}

export function errorBody(e: LmBenchError): { error: ReturnType<LmBenchError['toJSON']> } {
  if (e.httpStatus >= 500) return { error: { code: e.code, kind: e.kind, message: 'internal error (details are in the service log)', details: {} } };
  return { error: e.toJSON() };
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err, req, reply) => {
    const e = asServiceError(err);
    if (e.httpStatus >= 500) req.log.error({ err, code: e.code }, 'request failed');
    else req.log.info({ code: e.code, msg: e.message }, 'request rejected');
    if (e.code === 'LMB_ERR_UNAUTHORIZED') void reply.header('www-authenticate', 'Bearer');
    return reply.status(e.httpStatus).send(errorBody(e));
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new LmBenchError('LMB_ERR_NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0] ?? ''}`);
    return reply.status(404).send(errorBody(e));
  });
}
