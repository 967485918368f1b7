// Schemas shared by the routes: problem documents, paging parameters, error responses.
import { Type, type TSchema } from 'typebox';

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the kind of problem (stable)' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable error code, e.g. VALIDATION, NOT_FOUND' }),
    errors: Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), { description: 'At most 100; see errors_omitted' }),
    errors_omitted: Type.Optional(Type.Integer({ description: 'How many more errors there were beyond those listed' })),
  },
  { description: 'RFC 9457 problem details' },
);

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size (default 100)' })),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: 'Cursor from the previous page\'s Link header' })),
};

export const DEFAULT_PAGE_SIZE = 100;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: the fields at fault are listed',
  401: 'Missing, unknown, revoked or disabled X-Auth-Key',
  404: 'Not found, or not yours',
  405: 'Method not allowed on this path',
  409: 'Conflict',
  413: 'Body too large',
  414: 'A path segment too long',
  415: 'Body not JSON',
  422: 'A rule across data, or an account limit',
  429: 'Rate limited (see Retry-After)',
  503: 'Store unavailable',
  507: 'The store\'s disk is full',
};

/** An error response as OpenAPI shows it: problem+json with the problem schema. */
export function problemResponse(status: number): TSchema {
  return { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/problem+json': { schema: Problem } } } as unknown as TSchema;
}

/** The error responses a route can give, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const base = [400, 401, 429, ...statuses];
  return Object.fromEntries(base.map((s) => [s, problemResponse(s)]));
}

/** A paged list's 200 response: the array, and the Link header while more remain. */
export function pagedList(items: TSchema): TSchema {
  return {
    ...Type.Array(items),
    headers: { link: { type: 'string', description: 'While more remain: `</path?…&cursor=…>; rel="next"`' } },
  } as unknown as TSchema;
}

export const DomainParams = Type.Object({ domain: Type.String({ minLength: 1, maxLength: 1024 }) });
