// Paging cursors are opaque to clients: base64url of the last item's sort key.
import { StoreError } from './errors.ts';

export function encodeCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (cursor === '' || encodeCursor(key) !== cursor) {
    throw new StoreError('INVALID_CURSOR', 'cursor is not one this service issued', [{ field: 'query.cursor', message: 'is invalid' }]);
  }
  return key;
}

/** A cursor over numeric ids. */
export function decodeIdCursor(cursor: string): number {
  const id = Number(decodeCursor(cursor));
  if (!Number.isSafeInteger(id) || id < 0) {
    throw new StoreError('INVALID_CURSOR', 'cursor is not one this service issued', [{ field: 'query.cursor', message: 'is invalid' }]);
  }
  return id;
}
