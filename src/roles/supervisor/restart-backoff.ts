// How long a supervisor waits before starting a part again: quickly after a first crash (the
// service is back within a second), doubling while it keeps crashing soon after each start (a
// part that cannot run must not spin a core), forgiven once it has run for a while.
export const RESTART_FIRST_MS = 250;
export const RESTART_MAX_MS = 15_000;
/** A part that ran this long before crashing starts again after the first delay. */
export const RESTART_FORGIVE_MS = 30_000;

/** The delay before the next start, given the crashes in a row so far (1 for the first). */
export function restartDelay(crashesInARow: number): number {
  return Math.min(RESTART_MAX_MS, RESTART_FIRST_MS * 2 ** Math.max(0, crashesInARow - 1));
}

/** The crash count after a part that ran `ranMs` crashed. */
export function crashesAfter(previous: number, ranMs: number): number {
  return ranMs >= RESTART_FORGIVE_MS ? 1 : previous + 1;
}
