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

/** The error responses a route can give, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const base = [400, 401, 429, ...statuses];
  return Object.fromEntries(base.map((s) => [s, Problem]));
}

export const DomainParams = Type.Object({ domain: Type.String({ minLength: 1, maxLength: 1024 }) });
