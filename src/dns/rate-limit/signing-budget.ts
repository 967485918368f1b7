// Bounds on fresh DNSSEC signatures (the costly part of a DNSSEC-OK answer: ~47 µs each, where a
// cached answer costs a few): each zone and each client network may have `rate` signatures made
// per second, as token buckets holding at most a second's worth. A random-name flood with DO=1
// needs one new NSEC signature per name; bounded this way it spends at most its zone's (or its
// client's) share of the process, and other zones' answers keep their place in the queue. What a
// question over the bound gets is the signer's choice (../signer/stage.ts).
import { clientNetwork } from './rate-limit.ts';

export interface SigningBudgetOptions {
  /** Fresh signatures per second for one zone; 0 = unbounded. */
  zoneRate: number;
  /** Fresh signatures per second for one client network (/24, /56), all zones together; 0 = unbounded. */
  clientRate: number;
  /** Bound on tracked zones and networks each; a table is cleared when it fills (as RRL's). */
  maxEntries?: number;
}

/** Which bound a refused signature met. */
export type SigningRefusal = 'zone' | 'client';

interface Bucket {
  tokens: number;
  at: number;
}

class Buckets {
  private readonly map = new Map<string, Bucket>();

  constructor(
    private readonly rate: number,
    private readonly maxEntries: number,
  ) {}

  /** The bucket of `key` refilled to `now`, or undefined when this bound is off. */
  refilled(key: string, now: number): Bucket | undefined {
    if (this.rate <= 0) return undefined;
    let bucket = this.map.get(key);
    if (!bucket) {
      if (this.map.size >= this.maxEntries) this.map.clear();
      bucket = { tokens: this.rate, at: now };
      this.map.set(key, bucket);
    } else if (now > bucket.at) {
      bucket.tokens = Math.min(this.rate, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
      bucket.at = now;
    }
    return bucket;
  }
}

export class SigningBudget {
  private readonly zones: Buckets;
  private readonly clients: Buckets;
  /** Signatures refused, by the bound that refused them. */
  readonly refused: Record<SigningRefusal, number> = { zone: 0, client: 0 };

  constructor(options: SigningBudgetOptions) {
    const max = options.maxEntries ?? 100_000;
    this.zones = new Buckets(options.zoneRate, max);
    this.clients = new Buckets(options.clientRate, max);
  }

  /**
   * Takes one signature from both `zone`'s and `address`'s network's budgets, or says which is
   * spent. `verified`: the client proved its address (TCP, a valid server cookie); its network's
   * budget is apart from the unverified one, which anyone can spend by spoofing its addresses.
   */
  take(zone: string, address: string, verified: boolean, now = performance.now()): SigningRefusal | undefined {
    const client = this.clients.refilled(`${clientNetwork(address)}/${verified ? 'v' : 'u'}`, now);
    const ofZone = this.zones.refilled(zone, now);
    if (client && client.tokens < 1) return this.refuse('client');
    if (ofZone && ofZone.tokens < 1) return this.refuse('zone');
    if (client) client.tokens--;
    if (ofZone) ofZone.tokens--;
    return undefined;
  }

  private refuse(by: SigningRefusal): SigningRefusal {
    this.refused[by]++;
    return by;
  }
}
