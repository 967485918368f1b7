// The store's own refusals and failures. The store speaks of what happened to the data (no such
// thing, taken, over a limit, not written); the API maps each to its HTTP problem
// (../api/problem.ts), the CLI to a message. A mutation callback's own rejection (the caller's
// ApiError) passes through the store untouched.

export type StoreErrorCode =
  /** No such user, domain, node, IP list… */
  | 'NOT_FOUND'
  /** Taken already, or still in use. */
  | 'CONFLICT'
  /** A domain at, under or above another account's proven domain. */
  | 'DOMAIN_OVERLAP'
  /** A paging cursor this service did not issue. */
  | 'INVALID_CURSOR'
  /** An account's limit (domains, IP lists) reached. */
  | 'LIMIT_EXCEEDED'
  /** The store did not answer or did not commit: nothing was written. */
  | 'STORE_UNAVAILABLE'
  /** The disk is full or failing: nothing was written. */
  | 'STORAGE_FULL'
  /**
   * The write was made on the primary but not confirmed on the replicas asked for
   * (PALISADE_REDIS_MIN_REPLICAS): it may be lost if the primary fails now.
   */
  | 'NOT_DURABLE';

export class StoreError extends Error {
  /** Seconds a client should wait before trying again (unavailable, full, not durable). */
  retryAfter?: number;
  constructor(
    readonly code: StoreErrorCode,
    detail: string,
    /** The field of the request the refusal is about, when one is ("domain"). */
    readonly errors: Array<{ field: string; message: string }> = [],
  ) {
    super(detail);
    this.name = 'StoreError';
  }
}

export const notFound = (what: string): StoreError => new StoreError('NOT_FOUND', `${what} not found`);
