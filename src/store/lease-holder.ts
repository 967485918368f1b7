// One process's hold on a store lease (Store.tryLease): how the API processes agree that exactly
// one runs a piece of background work (certificates, notifications). The holder renews every
// `renewMs` (a durable write, so not at every tick); a process without it asks every `askMs`;
// handing it back on a clean stop lets the next process carry on at once, not after `ttlMs`.
import { randomBytes } from 'node:crypto';
import type { Store } from './types.ts';

export interface LeaseTiming {
  ttlMs: number;
  renewMs: number;
  askMs: number;
}

export const DEFAULT_LEASE_TIMING: LeaseTiming = { ttlMs: 30_000, renewMs: 10_000, askMs: 10_000 };

export class LeaseHolder {
  private readonly holder = `${process.pid}-${randomBytes(6).toString('hex')}`;
  private checkedAt = 0;
  held = false;

  constructor(
    private readonly store: Store,
    private readonly name: string,
    private readonly timing: LeaseTiming = DEFAULT_LEASE_TIMING,
  ) {}

  /** Whether this process holds the lease now (asking or renewing when it is time). */
  async hold(): Promise<boolean> {
    if (Date.now() - this.checkedAt >= (this.held ? this.timing.renewMs : this.timing.askMs)) {
      try {
        this.held = await this.store.tryLease(this.name, this.holder, this.timing.ttlMs);
      } catch (error) {
        // A holder that cannot renew stops working at once (the store may be failing over, and
        // the lease may pass to a process that reaches the new primary first); it asks again at
        // the next call.
        this.held = false;
        throw error;
      }
      this.checkedAt = Date.now();
    }
    return this.held;
  }

  /** Hands the lease back (if held); failures are left to its expiry. */
  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    await this.store.tryLease(this.name, this.holder, 1).catch(() => undefined);
  }
}
