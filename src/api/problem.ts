// Renders any error as an RFC 9457 problem document.
import type { FastifyError, FastifyReply } from 'fastify';
import { ApiError, ERROR_CATALOGUE, type ErrorCode, type FieldError } from '../errors.ts';
import { fieldErrors } from './validation.ts';
import { StoreError, type StoreErrorCode } from '../store/errors.ts';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors: FieldError[];
  /** How many more errors there were beyond those listed. */
  errors_omitted?: number;
  /** Seconds to wait, also sent as Retry-After (not part of the body). */
  retryAfter?: number;
}

/** An error body stays small whatever the request held (100,000 bad IPs in one list). */
export const MAX_LISTED_ERRORS = 100;
const MAX_DETAIL = 2000;

export function problem(code: ErrorCode, detail: string, errors: FieldError[] = []): ProblemBody {
  const { status, title } = ERROR_CATALOGUE[code];
  const body: ProblemBody = { type: `urn:palisade:problem:${code.toLowerCase()}`, title, status, detail, code, errors };
  if (errors.length > MAX_LISTED_ERRORS) {
    body.errors = errors.slice(0, MAX_LISTED_ERRORS);
    body.errors_omitted = errors.length - MAX_LISTED_ERRORS;
  }
  if (detail.length > MAX_DETAIL) {
    const more = body.errors_omitted ? ` (${errors.length} errors in all; the first ${MAX_LISTED_ERRORS} are listed)` : '';
    body.detail = `${detail.slice(0, MAX_DETAIL)}…${more}`;
  }
  return body;
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
};

/** The store's refusals and failures as HTTP problems (a write not confirmed on replicas is 503: try again). */
const STORE_CODES: Record<StoreErrorCode, ErrorCode> = {
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  DOMAIN_OVERLAP: 'DOMAIN_OVERLAP',
  INVALID_CURSOR: 'VALIDATION',
  LIMIT_EXCEEDED: 'LIMIT_EXCEEDED',
  STORE_UNAVAILABLE: 'STORE_UNAVAILABLE',
  STORAGE_FULL: 'STORAGE_FULL',
  NOT_DURABLE: 'STORE_UNAVAILABLE',
};

/** A body past a route's limit, the limit named so that the client knows what to send instead. */
export function tooLarge(limit: number): ProblemBody {
  return problem('PAYLOAD_TOO_LARGE', `the request body is larger than this route accepts (${limit.toLocaleString('en-US')} bytes); send a smaller body (split bulk changes into several requests)`);
}

/** A body of a type the route does not take, with the header to send instead. */
export function unsupportedType(given: string | undefined, expected: 'application/json' | 'text/dns'): ProblemBody {
  const what = expected === 'text/dns' ? 'a zone file (JSON is not accepted here)' : 'JSON';
  return problem('UNSUPPORTED_MEDIA_TYPE', `${given ? `Content-Type ${given.slice(0, 100)} is not accepted` : 'the body has no Content-Type'}: send ${what} with \`Content-Type: ${expected}\``);
}

/** Maps an error thrown anywhere in a request to its problem document. */
export function toProblem(error: FastifyError | ApiError | Error): ProblemBody {
  if (error instanceof StoreError) return { ...problem(STORE_CODES[error.code], error.message, error.errors), ...(error.retryAfter !== undefined && { retryAfter: error.retryAfter }) };
  if (error instanceof ApiError) return { ...problem(error.code, error.message, error.errors), ...(error.retryAfter !== undefined && { retryAfter: error.retryAfter }) };
  const fe = error as FastifyError;
  if (fe.validation) {
    const errors = fieldErrors(fe.validation as Parameters<typeof fieldErrors>[0], fe.validationContext ?? 'body');
    return problem('VALIDATION', errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
  }
  const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return problem(mapped, fe.message);
  if (error instanceof SyntaxError) return problem('MALFORMED_JSON', error.message);
  if (fe.statusCode === 429) return problem('RATE_LIMITED', fe.message);
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) return problem('BAD_REQUEST', fe.message);
  return problem('INTERNAL', 'the server failed to handle the request; the error was logged');
}

export function sendProblem(reply: FastifyReply, { retryAfter, ...body }: ProblemBody): FastifyReply {
  if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
  return reply.code(body.status).type('application/problem+json').send(body);
}
