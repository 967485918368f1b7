// How many zone transfers each secondary may have running at once. A transfer costs the name
// server ~2.5 µs of CPU per record, built in slices (see stream.ts and ../server/tcp.ts); a
// secondary asking for many zones at once (a catalog's members after a restart) gets them a few at
// a time, each waiting its turn in order, rather than all sharing the process at once.
export const DEFAULT_TRANSFERS_PER_SECONDARY = 2;

interface Waiter {
  start: () => void;
}

export class TransferSlots {
  private readonly runningBy = new Map<string, number>();
  private readonly waitingBy = new Map<string, Waiter[]>();
  /** Transfers running and waiting, all secondaries together (the metrics). */
  running = 0;
  waiting = 0;
  /** Transfers that had to wait for a slot. */
  queued = 0;

  constructor(
    readonly perSecondary = DEFAULT_TRANSFERS_PER_SECONDARY,
    /** Told when a transfer has to wait (the secondary, and how many of its transfers wait now). */
    private readonly onQueued: (secondary: string, waiting: number) => void = () => {},
  ) {}

  /**
   * Calls `start` once the secondary has a free slot (at once if it has one). Returns the release:
   * called when the transfer ends or its connection goes, it frees the slot (or leaves the line).
   */
  acquire(secondary: string, start: () => void): () => void {
    let granted = false;
    let done = false;
    const waiter: Waiter = {
      start: () => {
        granted = true;
        this.runningBy.set(secondary, (this.runningBy.get(secondary) ?? 0) + 1);
        this.running++;
        start();
      },
    };
    if ((this.runningBy.get(secondary) ?? 0) < this.perSecondary) waiter.start();
    else {
      const line = this.waitingBy.get(secondary) ?? [];
      line.push(waiter);
      this.waitingBy.set(secondary, line);
      this.waiting++;
      this.queued++;
      this.onQueued(secondary, line.length);
    }
    return () => {
      if (done) return;
      done = true;
      if (!granted) {
        const line = this.waitingBy.get(secondary);
        const at = line?.indexOf(waiter) ?? -1;
        if (at >= 0) {
          line!.splice(at, 1);
          this.waiting--;
          if (line!.length === 0) this.waitingBy.delete(secondary);
        }
        return;
      }
      const left = (this.runningBy.get(secondary) ?? 1) - 1;
      if (left === 0) this.runningBy.delete(secondary);
      else this.runningBy.set(secondary, left);
      this.running--;
      const line = this.waitingBy.get(secondary);
      const next = line?.shift();
      if (!next) return;
      this.waiting--;
      if (line!.length === 0) this.waitingBy.delete(secondary);
      next.start();
    };
  }
}
