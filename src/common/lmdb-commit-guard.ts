// lmdb-js rejects more than the promise a caller holds when a commit fails (a full disk): besides
// the transaction's own promise, which our stores handle and report, it rejects an internal
// batch promise nobody can reach, with "Commit failed (see commitError for details)", and the
// `commitError` promise itself. Left alone, Node ends the process on them: a full disk would
// take the API and the DNS server down with it. This handler drops exactly those (the failure
// was already reported through the transaction) and leaves every other unhandled rejection to
// end the process as it would have.
const LMDB_COMMIT_FAILED = 'Commit failed (see commitError for details)';
let installed = false;

function isLmdbCommitFailure(reason: unknown): reason is Error & { commitError?: Promise<unknown> } {
  return reason instanceof Error && reason.message === LMDB_COMMIT_FAILED;
}

export function guardLmdbCommitFailures(): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason) => {
    if (isLmdbCommitFailure(reason)) {
      reason.commitError?.catch(() => undefined);
      return;
    }
    throw reason;
  });
}

/**
 * Why a failed LMDB write failed, when the cause is the disk (full: ENOSPC, EDQUOT, LMDB's
 * MDB_MAP_FULL; failing: EIO), else undefined. A failed commit rejects with a generic error whose
 * `commitError` is a promise of the real one: it is awaited (briefly) and thereby handled, so it
 * never surfaces as an unhandled rejection either.
 */
export async function diskWriteFailure(error: unknown): Promise<string | undefined> {
  let cause: unknown = error;
  const pending = (error as { commitError?: unknown } | null)?.commitError;
  if (pending instanceof Promise) {
    const timeout = new Promise<undefined>((resolve) => (setTimeout(resolve, 1000) as unknown as NodeJS.Timeout).unref());
    cause = (await Promise.race([pending.then(() => undefined, (e: unknown) => e), timeout])) ?? error;
  }
  return diskFailureOf(cause);
}

/** The same for an error thrown synchronously (opening, a synchronous transaction, a file write). */
export function diskFailureOf(cause: unknown): string | undefined {
  const { code, message = String(cause) } = (cause ?? {}) as { code?: unknown; message?: string };
  const disk = code === 28 || code === 122 || code === 5 || code === -30792 || /ENOSPC|EDQUOT|EIO|MDB_MAP_FULL|No space|Disk quota|Input\/output/i.test(`${String(code)} ${message}`);
  return disk ? message.split('\n')[0] : undefined;
}

/** Settles a write nobody waits for without letting it (or its `commitError`) end the process. */
export function quietly(write: Promise<unknown>): void {
  write.catch((error: unknown) => void diskWriteFailure(error));
}
