// `bwlimit`: one token bucket per domain on this node, shared by every connection (HAProxy's
// shared bwlim-out, not nginx's per-request limit_rate: 8 downloads get the domain's rate
// together, not 8 times it). Refilled every 50 ms; a response body passes through a writable
// that takes tokens before each slice it writes, so a throttled response stops reading from the
// backend (or the cache) by backpressure — nothing is buffered to enforce the rate. Waiters are
// served first come, first served. KB = 1024 bytes.
// Several processes of one node (the edge role's workers) divide a domain's rate between those
// sending for it at the moment (BandwidthShare): alone, a worker has the whole rate; while k send,
// each has a k-th; a process that sent nothing for a second stops counting.
import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';

const REFILL_MS = 50;
/** A process that took nothing from a domain's bucket for this long no longer counts as sending for it. */
const SENDING_MS = 1000;

/** How the processes of one node divide each domain's rate. */
export interface BandwidthShare {
  /** This process's part of the domain's rate now (1 when it is the only one sending). */
  part(domain: string): number;
  /** This process starts (true) or stops (false) sending for the domain. */
  sending(domain: string, on: boolean): void;
}

class Bucket {
  private tokens: number;
  private readonly waiting: Array<{ need: number; resolve: () => void }> = [];
  rate = 0;
  /** Burst allowance: a tenth of a second of the rate. */
  capacity = 0;
  /** Largest slice a writer asks for at once (never more than the bucket can hold). */
  slice = 0;
  lastUsed = Date.now();
  /** The domain's whole rate (this bucket's is a part of it when the node's processes share it). */
  whole = 0;
  /** Counted as sending for the domain (BandwidthShare). */
  sending = false;

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
    // A waiter asking more than the bucket holds now (its rate was lowered meanwhile) goes once it is full.
    while (this.waiting.length > 0 && this.tokens >= Math.min(this.waiting[0]!.need, this.capacity)) {
      const next = this.waiting.shift()!;
      this.tokens -= next.need;
      next.resolve();
    }
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  get idle(): boolean {
    return this.waiting.length === 0 && Date.now() - this.lastUsed > 10_000;
  }
}

export class BandwidthLimits {
  private readonly buckets = new Map<string, Bucket>();
  private timer: NodeJS.Timeout | undefined;
  private last = performance.now();

  constructor(private readonly share?: BandwidthShare) {}

  /** The domain's bucket at `kbPerSecond` (its current setting), or this process's part of it. */
  private bucket(domain: string, kbPerSecond: number): Bucket {
    const whole = kbPerSecond * 1024;
    let bucket = this.buckets.get(domain);
    if (!bucket) {
      this.buckets.set(domain, (bucket = new Bucket(whole * (this.share?.part(domain) ?? 1))));
      bucket.whole = whole;
    } else if (bucket.whole !== whole) {
      bucket.whole = whole;
      bucket.setRate(whole * (this.share?.part(domain) ?? 1));
    }
    if (this.share && !bucket.sending) {
      bucket.sending = true;
      this.share.sending(domain, true);
    }
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
    const quiet = Date.now() - SENDING_MS;
    for (const [domain, bucket] of this.buckets) {
      bucket.refill(elapsed);
      if (bucket.sending && bucket.waitingCount === 0 && bucket.lastUsed < quiet) {
        bucket.sending = false;
        this.share?.sending(domain, false);
      }
      if (bucket.idle) this.buckets.delete(domain);
    }
    if (this.buckets.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** This process's part of a domain's rate changed (BandwidthShare). */
  reshare(domain: string): void {
    const bucket = this.buckets.get(domain);
    if (bucket && this.share) bucket.setRate(bucket.whole * this.share.part(domain));
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
          // The slice is read once per part: the rate (and with it the slice) may change while a part waits.
          for (let at = 0; at < chunk.length; ) {
            const part = chunk.subarray(at, at + bucket.slice);
            at += part.length;
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
