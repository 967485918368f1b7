// `bwlimit`: one token bucket per domain on this node, shared by every connection (HAProxy's
// shared bwlim-out, not nginx's per-request limit_rate: 8 downloads get the domain's rate
// together, not 8 times it). Refilled every 50 ms; a response body passes through a writable
// that takes tokens before each slice it writes, so a throttled response stops reading from the
// backend (or the cache) by backpressure — nothing is buffered to enforce the rate. Waiters are
// served first come, first served. KB = 1024 bytes.
import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';

const REFILL_MS = 50;

class Bucket {
  private tokens: number;
  private readonly waiting: Array<{ need: number; resolve: () => void }> = [];
  rate = 0;
  /** Burst allowance: a tenth of a second of the rate. */
  capacity = 0;
  /** Largest slice a writer asks for at once (never more than the bucket can hold). */
  slice = 0;
  lastUsed = Date.now();

  constructor(bytesPerSecond: number) {
    this.setRate(bytesPerSecond);
    this.tokens = this.capacity;
  }

  setRate(bytesPerSecond: number): void {
    this.rate = bytesPerSecond;
    this.capacity = Math.max(2048, bytesPerSecond / 10);
    this.slice = Math.max(1024, Math.floor(this.capacity / 2));
  }

  /** Takes tokens now (undefined), or waits for them (a promise); `wait` false: false instead of waiting. */
  take(need: number, wait = true): Promise<void> | undefined | false {
    this.lastUsed = Date.now();
    if (this.waiting.length === 0 && this.tokens >= need) {
      this.tokens -= need;
      return undefined;
    }
    if (!wait) return false;
    return new Promise((resolve) => this.waiting.push({ need, resolve }));
  }

  refill(elapsedMs: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + (this.rate * elapsedMs) / 1000);
    while (this.waiting.length > 0 && this.tokens >= this.waiting[0]!.need) {
      const next = this.waiting.shift()!;
      this.tokens -= next.need;
      next.resolve();
    }
  }

  get idle(): boolean {
    return this.waiting.length === 0 && Date.now() - this.lastUsed > 10_000;
  }
}

export class BandwidthLimits {
  private readonly buckets = new Map<string, Bucket>();
  private timer: NodeJS.Timeout | undefined;
  private last = performance.now();

  /** The domain's bucket at `kbPerSecond` (its current setting). */
  private bucket(domain: string, kbPerSecond: number): Bucket {
    let bucket = this.buckets.get(domain);
    if (!bucket) this.buckets.set(domain, (bucket = new Bucket(kbPerSecond * 1024)));
    else if (bucket.rate !== kbPerSecond * 1024) bucket.setRate(kbPerSecond * 1024);
    if (!this.timer) {
      this.last = performance.now();
      this.timer = setInterval(() => this.tick(), REFILL_MS);
      this.timer.unref();
    }
    return bucket;
  }

  private tick(): void {
    const now = performance.now();
    const elapsed = now - this.last;
    this.last = now;
    for (const [domain, bucket] of this.buckets) {
      bucket.refill(elapsed);
      if (bucket.idle) this.buckets.delete(domain);
    }
    if (this.buckets.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * Takes `bytes` from the domain's bucket if it holds them now and nobody waits (a small body
   * then goes out at once, without a throttling stream); false leaves the bucket as it was.
   */
  tryTake(domain: string, kbPerSecond: number, bytes: number): boolean {
    const bucket = this.bucket(domain, kbPerSecond);
    return bytes <= bucket.slice && bucket.take(bytes, false) !== false;
  }

  /** A writable in front of `res` that passes the body on at the domain's shared rate. */
  throttle(domain: string, kbPerSecond: number, res: ServerResponse): Writable {
    const bucket = this.bucket(domain, kbPerSecond);
    return new Writable({
      write(chunk: Buffer, _encoding, callback) {
        const send = async (): Promise<void> => {
          for (let at = 0; at < chunk.length; at += bucket.slice) {
            const part = chunk.subarray(at, at + bucket.slice);
            const wait = bucket.take(part.length);
            if (wait instanceof Promise) await wait;
            if (res.destroyed) throw new Error('the client went away');
            if (!res.write(part)) {
              await new Promise<void>((resolve) => {
                const done = (): void => {
                  res.off('drain', done);
                  res.off('close', done);
                  resolve();
                };
                res.once('drain', done);
                res.once('close', done);
              });
            }
          }
        };
        send().then(() => callback(), (error: Error) => callback(error));
      },
      final(callback) {
        endThen(res, callback);
      },
      destroy(error, callback) {
        if (error) res.destroy();
        callback(error);
      },
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * Ends `res` and calls back once it has finished — or, with an error, once it has closed without
 * finishing (the client went away). `res.end(cb)` alone never calls back on a response destroyed
 * meanwhile, and the proxied request waiting for this stream to finish would wait for good.
 */
export function endThen(res: Writable, callback: (error?: Error | null) => void): void {
  if (res.destroyed) return callback(new Error('the client went away'));
  const done = (): void => {
    res.off('finish', done);
    res.off('close', done);
    callback(res.writableFinished ? null : new Error('the client went away'));
  };
  res.once('finish', done);
  res.once('close', done);
  res.end();
}
