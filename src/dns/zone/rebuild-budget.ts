// What rebuilding zones for settings changes may cost (see index.ts): token buckets per zone
// (rebuilds a minute, after a burst) and per account (milliseconds of building a second), and
// this synchronous step's share, so that queries get in between rebuilds.

/** How much rebuilding settings changes may cost. */
export interface RebuildLimits {
  /** Rebuilds of one zone a minute, after a burst of `zoneBurst`. */
  zonePerMinute: number;
  zoneBurst: number;
  /** Milliseconds of building one account's zones a second, after a burst of `accountBurstMs`. */
  accountMsPerSecond: number;
  accountBurstMs: number;
}

export const REBUILD_LIMITS: RebuildLimits = { zonePerMinute: 12, zoneBurst: 2, accountMsPerSecond: 100, accountBurstMs: 100 };

/** A token bucket: `tokens` at `at` (ms), refilled at `rate` a ms up to `cap`. */
interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Rebuilds (reading the records included) start in one synchronous step only while it has spent
 * less than this (ms): the rest are deferred to steps of their own, so that queries get in between.
 */
const STEP_MS = 20;

export class RebuildBudget {
  private readonly zoneBuckets = new Map<string, Bucket>();
  private readonly accountBuckets = new Map<number, Bucket>();
  /** Rebuild time spent in the current synchronous step (reset once it ends). */
  private stepSpent = 0;

  constructor(
    private readonly limits: RebuildLimits,
    private readonly now: () => number,
  ) {}

  /** Whether this synchronous step may still start a rebuild. */
  stepOpen(): boolean {
    return this.stepSpent < STEP_MS;
  }

  /** How long until the budgets allow a rebuild of `name` (0: now); `whole`: it costs what the zone holds. */
  waitMs(name: string, owner: number, whole: boolean): number {
    const { zonePerMinute, zoneBurst, accountMsPerSecond, accountBurstMs } = this.limits;
    const zone = whole ? this.refilled(this.zoneBuckets, name, zonePerMinute / 60_000, zoneBurst) : 1;
    const account = this.refilled(this.accountBuckets, owner, accountMsPerSecond / 1000, accountBurstMs);
    const zoneWait = zone >= 1 ? 0 : (1 - zone) / (zonePerMinute / 60_000);
    const accountWait = account > 0 ? 0 : (1 - account) / (accountMsPerSecond / 1000);
    return Math.max(zoneWait, accountWait);
  }

  /** A bucket's tokens now (a bucket not kept is full). */
  private refilled<K>(buckets: Map<K, Bucket>, key: K, rate: number, cap: number): number {
    const bucket = buckets.get(key);
    if (!bucket) return cap;
    const now = this.now();
    bucket.tokens = Math.min(cap, bucket.tokens + (now - bucket.at) * rate);
    bucket.at = now;
    return bucket.tokens;
  }

  /**
   * Counts one build of `name` (begun at `started`) against its account's budget and this
   * step's, and against its zone's when it was `whole`.
   */
  charge(name: string, owner: number, started: number, whole: boolean): void {
    const { zonePerMinute, zoneBurst, accountMsPerSecond, accountBurstMs } = this.limits;
    const now = this.now();
    const ms = now - started;
    if (this.stepSpent === 0) setImmediate(() => (this.stepSpent = 0));
    this.stepSpent += Math.max(ms, 0.001);
    // Builds that cannot wait (whole zones) may overdraw a budget, by a bounded amount.
    if (whole) {
      const zone = this.refilled(this.zoneBuckets, name, zonePerMinute / 60_000, zoneBurst);
      this.zoneBuckets.set(name, { tokens: Math.max(-zoneBurst, zone - 1), at: now });
    }
    const account = this.refilled(this.accountBuckets, owner, accountMsPerSecond / 1000, accountBurstMs);
    this.accountBuckets.set(owner, { tokens: Math.max(-4 * accountBurstMs, account - ms), at: now });
    if (this.zoneBuckets.size > 4096) this.prune(this.zoneBuckets, zonePerMinute / 60_000, zoneBurst);
    if (this.accountBuckets.size > 4096) this.prune(this.accountBuckets, accountMsPerSecond / 1000, accountBurstMs);
  }

  /** Drops the buckets that are full again (the same as none). */
  private prune<K>(buckets: Map<K, Bucket>, rate: number, cap: number): void {
    for (const key of [...buckets.keys()]) if (this.refilled(buckets, key, rate, cap) >= cap) buckets.delete(key);
  }
}
