// Token buckets by key (a client address, an API key id), in bounded memory: the least recently
// used bucket is forgotten when the map is full, so a flood from many addresses costs a fixed
// amount of memory (a forgotten bucket starts full again, which only errs towards the client).
// Pure: time comes from the caller.

export interface BucketPolicy {
  /** Tokens added per second. */
  rate: number;
  /** Bucket size: the burst a client may send at once. */
  burst: number;
}

export interface Taken {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until one token is back (0 when some are left). */
  retryAfter: number;
  /** Seconds until the bucket is full again. */
  reset: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly policy: BucketPolicy,
    private readonly maxKeys = 100_000,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  /** Takes one token for `key` at time `nowMs`; refused (nothing taken) when none is left. */
  take(key: string, nowMs: number): Taken {
    const { rate, burst } = this.policy;
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key);
      bucket.tokens = Math.min(burst, bucket.tokens + ((nowMs - bucket.at) / 1000) * rate);
      bucket.at = nowMs;
    } else {
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
      bucket = { tokens: burst, at: nowMs };
    }
    // Re-inserted on every use: the map's order is least recently used first.
    this.buckets.set(key, bucket);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return {
      allowed,
      remaining: Math.floor(bucket.tokens),
      retryAfter: allowed ? 0 : Math.ceil((1 - bucket.tokens) / rate),
      reset: Math.ceil((burst - bucket.tokens) / rate),
    };
  }

  /** Returns the token a request took when another limit then refused it. */
  giveBack(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.policy.burst, bucket.tokens + 1);
  }
}
