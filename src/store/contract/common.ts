// What several parts of the store contract share: paging, and the context a mutation runs in.

export interface PageRequest {
  /** Opaque cursor from a previous page. */
  cursor?: string;
  limit: number;
}

export interface Page<T> {
  items: T[];
  /** Cursor of the next page, absent on the last page. */
  next?: string;
}

export interface MutationContext {
  /** Allocates a new, never reused record id. */
  nextRecordId(): number;
  nodeExists(id: number): boolean;
  /** The commit time, for `updated` fields. */
  now: string;
}
