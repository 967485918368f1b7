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
