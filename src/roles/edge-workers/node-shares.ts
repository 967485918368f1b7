// What the edge role's primary keeps for its workers together. Pure bookkeeping: the primary
// sends what these return.
//
// FillLocks: the node's cache fill locks, by key hash. Granted at once when free; a worker asking
// to wait while another holds the lock hears "not granted" once the holder lets go (then it looks
// at the file the holder stored), never a grant later — so a waiter that stopped waiting can
// never be left holding a lock. A worker that dies lets go of everything it held.
//
// BandwidthSenders: which workers send for each domain now; each of them has 1/k of its rate.
//
// Bans: the clients banned on the node, until when (told to a worker that starts later).

export interface LockReply {
  worker: number;
  id: number;
  hash: string;
  granted: boolean;
}

export class FillLocks {
  private readonly held = new Map<string, { holder: number; waiters: Array<{ worker: number; id: number }> }>();

  get size(): number {
    return this.held.size;
  }

  /** A worker asks; the replies due now (none while it waits). */
  lock(worker: number, id: number, hash: string, wait: boolean): LockReply[] {
    const lock = this.held.get(hash);
    if (!lock) {
      this.held.set(hash, { holder: worker, waiters: [] });
      return [{ worker, id, hash, granted: true }];
    }
    if (!wait) return [{ worker, id, hash, granted: false }];
    lock.waiters.push({ worker, id });
    return [];
  }

  /** The holder lets go: its waiters hear of it. */
  unlock(worker: number, hash: string): LockReply[] {
    const lock = this.held.get(hash);
    if (!lock || lock.holder !== worker) return [];
    this.held.delete(hash);
    return lock.waiters.map((w) => ({ ...w, hash, granted: false }));
  }

  /** A worker stopped: its locks are let go, its waits forgotten. */
  workerGone(worker: number): LockReply[] {
    const replies: LockReply[] = [];
    for (const [hash, lock] of this.held) {
      lock.waiters = lock.waiters.filter((w) => w.worker !== worker);
      if (lock.holder === worker) replies.push(...this.unlock(worker, hash));
    }
    return replies;
  }
}

export class BandwidthSenders {
  private readonly byDomain = new Map<string, Set<number>>();

  /** A worker starts or stops sending for a domain: the workers to tell the new count (`senders`). */
  set(worker: number, domain: string, sending: boolean): { workers: number[]; senders: number } | undefined {
    let set = this.byDomain.get(domain);
    if (sending) {
      if (!set) this.byDomain.set(domain, (set = new Set()));
      if (set.has(worker)) return { workers: [worker], senders: set.size };
      set.add(worker);
    } else {
      if (!set?.delete(worker)) return undefined;
      if (set.size === 0) this.byDomain.delete(domain);
    }
    return { workers: [...(set ?? [])], senders: Math.max(1, set?.size ?? 0) };
  }

  /** A worker stopped: per domain it sent for, the workers to tell. */
  workerGone(worker: number): Array<{ domain: string; workers: number[]; senders: number }> {
    const out: Array<{ domain: string; workers: number[]; senders: number }> = [];
    for (const domain of [...this.byDomain.keys()]) {
      const told = this.set(worker, domain, false);
      if (told && told.workers.length > 0) out.push({ domain, ...told });
    }
    return out;
  }
}

/** Bans remembered at most (a flood of banned addresses must not grow the primary without bound). */
const MAX_BANS = 200_000;

export class Bans {
  private readonly until = new Map<string, number>();

  add(client: string, until: number): void {
    const before = this.until.get(client) ?? 0;
    this.until.delete(client);
    this.until.set(client, Math.max(until, before));
    if (this.until.size <= MAX_BANS) return;
    this.current();
    // Still too many: the oldest go (the workers that banned them keep them).
    for (const client of this.until.keys()) {
      if (this.until.size <= MAX_BANS) break;
      this.until.delete(client);
    }
  }

  /** The bans in force (expired ones forgotten). */
  current(now = Date.now()): Array<[string, number]> {
    for (const [client, until] of this.until) if (until <= now) this.until.delete(client);
    return [...this.until];
  }
}
