// A failed LMDB commit as the API reports it.
import { ApiError } from '../../errors.ts';

/**
 * The mutation's own rejections (ApiError) pass through; a full or failing disk (ENOSPC, EDQUOT,
 * EIO; LMDB's MDB_MAP_FULL) is 507, anything else 503. Nothing was written either way: LMDB
 * commits all or nothing. lmdb-js rejects with a generic error whose `commitError` is a promise
 * of the real one (handled here, or it would surface as an unhandled rejection and end the
 * process).
 */
export async function storeWriteError(error: unknown): Promise<unknown> {
  if (error instanceof ApiError) return error;
  let cause: unknown = error;
  const pending = (error as { commitError?: unknown }).commitError;
  if (pending instanceof Promise) {
    const timeout = new Promise<undefined>((resolve) => (setTimeout(resolve, 1000) as unknown as NodeJS.Timeout).unref());
    cause = (await Promise.race([pending.then(() => undefined, (e: unknown) => e), timeout])) ?? error;
  }
  const { code, message = String(cause) } = cause as { code?: unknown; message?: string };
  const full = code === 28 || code === 122 || code === 5 || code === -30792 || /ENOSPC|EDQUOT|MDB_MAP_FULL|No space|Input\/output/i.test(`${String(code)} ${message}`);
  const failure = new ApiError(
    full ? 'STORAGE_FULL' : 'STORE_UNAVAILABLE',
    full ? `the store's disk is full or failing (${message}); the change was not made — try again once space is freed` : `the store failed to commit (${message}); the change was not made`,
  );
  failure.retryAfter = full ? 60 : 5;
  return failure;
}
