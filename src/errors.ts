// One catalogue of the errors the service returns. Each has a stable code (the problem type),
// an HTTP status and a title; the API renders them as RFC 9457 problem+json.

export interface FieldError {
  /** The offending field as a dotted path into the request ("ttl", "ips.3", "query.limit"). */
  field: string;
  message: string;
}

export const ERROR_CATALOGUE = {
  BAD_REQUEST: { status: 400, title: 'Bad Request' },
  MALFORMED_JSON: { status: 400, title: 'Malformed JSON body' },
  VALIDATION: { status: 400, title: 'Request validation failed' },
  UNAUTHORIZED: { status: 401, title: 'Missing or invalid X-Auth-Key' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not Found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method Not Allowed' },
  CONFLICT: { status: 409, title: 'Conflict' },
  DOMAIN_OVERLAP: { status: 409, title: 'Domain overlaps another account\'s domain' },
  GONE: { status: 410, title: 'Gone' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload Too Large' },
  URI_TOO_LONG: { status: 414, title: 'URI Too Long' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request Header Fields Too Large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported Media Type' },
  UNPROCESSABLE: { status: 422, title: 'Semantically invalid request' },
  LIMIT_EXCEEDED: { status: 422, title: 'Account limit reached' },
  DOMAIN_NOT_REGISTRABLE: { status: 422, title: 'Domain cannot be registered' },
  DOMAIN_RESERVED: { status: 422, title: 'Domain reserved for the service' },
  RATE_LIMITED: { status: 429, title: 'Too Many Requests' },
  INTERNAL: { status: 500, title: 'Internal Server Error' },
  STORE_UNAVAILABLE: { status: 503, title: 'Store unavailable' },
  UNAVAILABLE: { status: 503, title: 'Service Unavailable' },
  STORAGE_FULL: { status: 507, title: 'Insufficient storage' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export class ApiError extends Error {
  readonly status: number;
  readonly title: string;
  /** Seconds a client should wait before trying again (429, 503): sent as Retry-After. */
  retryAfter?: number;
  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(detail);
    this.status = ERROR_CATALOGUE[code].status;
    this.title = ERROR_CATALOGUE[code].title;
  }
}

export const notFound = (what: string): ApiError => new ApiError('NOT_FOUND', `${what} not found`);

/** 422: the request is well-formed but breaks a rule (CNAME beside other data, unknown node…). */
export const unprocessable = (errors: FieldError[], detail?: string): ApiError =>
  new ApiError('UNPROCESSABLE', detail ?? errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);

/** 400: a field has the wrong shape (not an IP address, not a domain name…). */
export const invalidFields = (errors: FieldError[]): ApiError =>
  new ApiError('VALIDATION', errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
