// Cursor paging: lists answer a JSON array, and a `Link: <…>; rel="next"` header while more remain.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Page } from '../store/types.ts';
import { decodeIdCursor, encodeCursor } from '../store/cursor.ts';
import { DEFAULT_PAGE_SIZE } from './schemas.ts';

export function pageRequest(query: { limit?: number; cursor?: string }): { limit: number; cursor?: string } {
  return { limit: query.limit ?? DEFAULT_PAGE_SIZE, cursor: query.cursor };
}

/** Sets the Link header for the next page, keeping the request's other query parameters. */
export function linkNext<T>(request: FastifyRequest, reply: FastifyReply, page: Page<T>): T[] {
  if (page.next !== undefined) reply.header('link', nextLink(request.url, page.next));
  return page.items;
}

/** The Link header value for the next page: the same request with the new cursor. */
export function nextLink(requestUrl: string, cursor: string): string {
  const url = new URL(requestUrl, 'http://placeholder');
  url.searchParams.set('cursor', cursor);
  return `<${url.pathname}${url.search}>; rel="next"`;
}

/** Pages an in-memory list of fixed order by position (the cursor is the position reached). */
export function pageByPosition<T>(items: readonly T[], limit: number, cursor: string | undefined): Page<T> {
  const start = cursor === undefined ? 0 : decodeIdCursor(cursor);
  const slice = items.slice(start, start + limit);
  return { items: slice, next: start + limit < items.length ? encodeCursor(String(start + limit)) : undefined };
}

/** Pages an in-memory list sorted by numeric id. */
export function pageById<T extends { id: number }>(items: readonly T[], limit: number, after: number | undefined): Page<T> {
  const start = after === undefined ? 0 : items.findIndex((i) => i.id > after);
  const slice = start === -1 ? [] : items.slice(start, start + limit);
  const more = start !== -1 && start + limit < items.length;
  return { items: slice, next: more ? encodeCursor(String(slice[slice.length - 1]!.id)) : undefined };
}
