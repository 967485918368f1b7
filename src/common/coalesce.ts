// Catching up is idempotent and may be asked for from several places at once (a commit, a push,
// a poll): run it one at a time, and let calls during a run ask for exactly one more run.

export interface Coalesced {
  (): Promise<void>;
  /** Resolves when no run is in progress, without starting one. */
  settled(): Promise<void>;
}

/** Wraps `task` so concurrent calls share the current run and trigger at most one more. */
export function coalesced(task: () => Promise<void>): Coalesced {
  let running: Promise<void> | undefined;
  let again = false;
  const run = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await task();
        } while (again);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  return Object.assign(run, { settled: async () => void (await running) });
}
